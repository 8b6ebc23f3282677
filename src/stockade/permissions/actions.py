"""Typed action plans: what a non-shell action (a file tool, a fetch, an MCP tool call) will do.

A shell command gets its tier from the classifier; an action that is not a shell command says
what it does as a list of *effects*, and ``EFFECT_TIERS`` maps each effect to a tier. The plan
then goes through the same gate as a shell command (hard denies, rules, floors, autonomy), so
``write_file`` and ``echo > file`` are judged alike.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from stockade.permissions.rules import Namespace
from stockade.tiers import Tier


class Effect(enum.Enum):
    """One thing an action does to the world."""

    READ = "read"  # read a file or list a directory
    SECRET_READ = "secret-read"  # read key material, .env, credentials
    FILE_WRITE = "file-write"  # create or change one file inside the writable roots
    FILE_TRUNCATE = "file-truncate"  # make a file shorter / replace it wholesale
    FILE_DELETE = "file-delete"
    MULTI_FILE_WRITE = "multi-file-write"  # change several files in one action
    PROTECTED_PATH = "protected-path"  # touch a path the jail keeps read-only (.git/hooks, ...)
    NETWORK = "network"  # talk to a host
    CODE_EXECUTION = "code-execution"  # run code stockade cannot analyse
    IRREVERSIBLE = "irreversible"  # cannot be undone (publish, send, drop)
    MCP_TOOL = "mcp-tool"  # call a tool of another program (an MCP server): opaque to stockade

    def __str__(self) -> str:
        return self.value


# --- the effect table (auditable) ---------------------------------------------------------
# Tiers follow the classifier's meaning: a file write is like `sed -i` (medium), deleting or
# truncating loses data like `rm file` (high), anything unanalysable or irreversible is
# destructive (always asks below yolo).
EFFECT_TIERS: dict[Effect, Tier] = {
    Effect.READ: Tier.READ_ONLY,
    Effect.SECRET_READ: Tier.HIGH,
    Effect.FILE_WRITE: Tier.MEDIUM,
    Effect.FILE_TRUNCATE: Tier.HIGH,
    Effect.FILE_DELETE: Tier.HIGH,
    Effect.MULTI_FILE_WRITE: Tier.HIGH,
    Effect.PROTECTED_PATH: Tier.DESTRUCTIVE,
    Effect.NETWORK: Tier.HIGH,
    Effect.CODE_EXECUTION: Tier.DESTRUCTIVE,
    Effect.IRREVERSIBLE: Tier.DESTRUCTIVE,
    # What a server's tool does is its own business (its annotations are its own claims, so
    # they never lower this); it runs confined, but may act on whatever it can reach.
    Effect.MCP_TOOL: Tier.HIGH,
}

# Effects no rule, answer or autonomy level can allow (the gate denies them without a prompt):
# nothing an agent does may write where the jail keeps things read-only to protect itself.
HARD_DENY_EFFECTS: dict[Effect, str] = {
    Effect.PROTECTED_PATH: "writes to protected paths (.stockade/, .git/hooks, .git/config, "
    "shell rc files) are never allowed",
}


@dataclass(frozen=True)
class ActionPlan:
    """What an action will do, stated before it runs.

    ``action`` is the line shown to people and written to the ledger (``write_file src/a.py``).
    ``subject`` (namespace, text) is what permission rules match: a host for network effects
    (``domain``), a tool id for MCP tools (``mcp``). A plan without a subject is decided by
    the effect tiers and autonomy alone, and its prompt cannot be remembered.
    """

    action: str
    effects: tuple[Effect, ...]
    subject: tuple[Namespace, str] | None = None
    paths: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.effects:
            raise ValueError("an action plan needs at least one effect")

    @property
    def tier(self) -> Tier:
        return max(EFFECT_TIERS[effect] for effect in self.effects)

    @property
    def kind(self) -> str:
        """The ledger's ``kind`` column: the highest-tier effect."""
        return max(self.effects, key=lambda e: EFFECT_TIERS[e]).value


# --- constructors for the common plans (what the file tools and fetch will use) ----------


def read_file(path: str, *, secret: bool = False, tool: str | None = None) -> ActionPlan:
    return ActionPlan(
        f"read_file {path}",
        (Effect.SECRET_READ if secret else Effect.READ,),
        _tool(tool),
        (path,),
    )


def list_dir(path: str, *, tool: str | None = None) -> ActionPlan:
    return ActionPlan(f"list_dir {path}", (Effect.READ,), _tool(tool), (path,))


def write_file(
    path: str,
    *,
    truncates: bool = False,
    protected: bool = False,
    tool: str | None = None,
) -> ActionPlan:
    """A single-file write; ``truncates`` when existing content is replaced by less."""
    effects = [Effect.FILE_WRITE]
    if truncates:
        effects.append(Effect.FILE_TRUNCATE)
    if protected:
        effects.append(Effect.PROTECTED_PATH)
    return ActionPlan(f"write_file {path}", tuple(effects), _tool(tool), (path,))


def write_files(
    paths: tuple[str, ...], *, protected: bool = False, tool: str | None = None
) -> ActionPlan:
    effects = [Effect.MULTI_FILE_WRITE if len(paths) > 1 else Effect.FILE_WRITE]
    if protected:
        effects.append(Effect.PROTECTED_PATH)
    return ActionPlan(f"write {len(paths)} files", tuple(effects), _tool(tool), paths)


def delete_file(path: str, *, protected: bool = False, tool: str | None = None) -> ActionPlan:
    effects = (Effect.FILE_DELETE, Effect.PROTECTED_PATH) if protected else (Effect.FILE_DELETE,)
    return ActionPlan(f"delete {path}", effects, _tool(tool), (path,))


def network(host: str, *, action: str | None = None) -> ActionPlan:
    """Talking to ``host`` (``host`` or ``host:port``); ``domain`` rules decide it."""
    return ActionPlan(action or f"connect {host}", (Effect.NETWORK,), (Namespace.DOMAIN, host))


def mcp_tool(tool_id: str, effects: tuple[Effect, ...], *, action: str | None = None) -> ActionPlan:
    """A call of MCP tool ``tool_id`` (``mcp.<server>.<tool>``); ``mcp`` rules decide it."""
    return ActionPlan(action or tool_id, effects, (Namespace.MCP, tool_id))


def _tool(tool: str | None) -> tuple[Namespace, str] | None:
    return None if tool is None else (Namespace.MCP, tool)
