"""What every part of a ``Session`` stands on: its sandbox, permission gate, ledger, path
guard and network gate, its lifecycle, and the one way an action is authorised and recorded.

``Session`` (``stockade.session``) adds the commands; ``session_files`` the file tools and
``session_network`` the fetch tool. They share this state and these helpers so that every
action - a command, a read, a write, a fetch - goes through the same gate and ledger.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Self, TypeVar

from stockade.errors import PermissionDenied, UsageError
from stockade.permissions.actions import EFFECT_TIERS, ActionPlan, Effect
from stockade.permissions.autonomy import ENV_VAR, Autonomy, choose_autonomy
from stockade.permissions.gate import Classifier, Gate
from stockade.permissions.ledger import DENIED, Ledger, LedgerEntry, SessionReport
from stockade.permissions.prompt import PromptFunction
from stockade.permissions.verdict import Decision
from stockade.sandbox.posture import Posture
from stockade.tool_calls import detect_shell

if TYPE_CHECKING:
    from stockade.background import RunningCommand
    from stockade.file_tools import PathGuard
    from stockade.net.domains import DomainPolicy
    from stockade.net.mode import NetworkMode
    from stockade.permissions.config import PermissionConfig
    from stockade.permissions.network import NetworkGate
    from stockade.permissions.rules import RuleStore
    from stockade.runner import Sandbox
    from stockade.sandbox.limits import Limits

T = TypeVar("T")

WORKSPACES: Final = ("direct", "review")  # where a session's commands write the project
SESSION_PROMPT: Final = "session"  # the default of the per-call ``prompt=``: the session's own


class SessionCore:
    """The state and helpers shared by a session's commands, file tools and fetch.

    Not used on its own: ``stockade.session.Session`` is the public class (its docstring
    says what the arguments mean)."""

    def __init__(
        self,
        project: str | os.PathLike[str] | None = None,
        *,
        autonomy: str | Autonomy | None = None,
        prompt: PromptFunction | None = None,
        network: str | NetworkMode = "deny",
        allowed_domains: Sequence[str] = (),
        domain_policy: DomainPolicy | None = None,
        writable: Sequence[str | os.PathLike[str]] = (),
        env_passthrough: Sequence[str] = (),
        backend: str = "auto",
        limits: Limits | None = None,
        permissions: PermissionConfig | None = None,
        rules: RuleStore | None = None,
        ledger: Ledger | None = None,
        classifier: Classifier | None = None,
        shell: str | None = None,
        sandbox: Sandbox | None = None,
        interactive: bool | None = None,
        workspace: str | None = None,
        warm: bool | None = None,
    ) -> None:
        from stockade.file_tools import PathGuard
        from stockade.runner import Sandbox

        review = _review_workspace(workspace, sandbox)

        self.prompt = prompt
        choice = choose_autonomy(
            flag=autonomy.value if isinstance(autonomy, Autonomy) else autonomy,
            env=os.environ.get(ENV_VAR),
            configured=permissions.autonomy if permissions is not None else None,
            interactive=prompt is not None if interactive is None else interactive,
        )
        if domain_policy is None and allowed_domains:
            from stockade.net.domains import DomainPolicy

            domain_policy = DomainPolicy.from_lists(allowed_domains)
        self._domain_policy = domain_policy
        if sandbox is None:
            root = project if project is not None else os.getcwd()
            sandbox = Sandbox.for_project(
                root,
                writable=writable,
                network=network,
                cwd=root,
                env_passthrough=env_passthrough,
                backend=backend,
                limits=limits,
                domain_policy=domain_policy,
                review=review,
                warm=warm,
            )
            sandbox.prewarm()  # the first command finds its warm jail ready (or started)
        self.sandbox: Sandbox = sandbox
        if self._domain_policy is None:  # a ready Sandbox brings the operator's lists
            self._domain_policy = sandbox.domain_policy
        self._env_passthrough = tuple(env_passthrough)
        try:
            self.project: Path = sandbox.policy.project
            self.gate = Gate(
                project=self.project,
                autonomy=choice.level,
                posture=sandbox.posture,
                config=permissions,
                store=rules,
                ledger=ledger,
                classifier=classifier,
            )
            self._preferred_shell = shell
            detect_shell(shell)  # an explicit shell that is not installed fails here
            sandbox.ledger_session = self.gate.session_id  # guard findings join the session
            sandbox.ledger = self.gate.ledger
            self.guard: PathGuard = PathGuard(sandbox.policy, self.project)
            self.network_gate: NetworkGate | None = self._make_network_gate()
        except BaseException:
            sandbox.close()
            raise
        self._owns_ledger = ledger is None
        self._escape_sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        self._background: dict[str, BackgroundHandle] = {}
        self._background_count = 0
        self._digests: dict[Path, str] = {}
        self._closed = False

    def _make_network_gate(self) -> NetworkGate | None:
        """The one check for every host the session reaches (jail connections through the
        proxy, each hop of fetch): the lists, stored domain rules, the gate; see
        ``stockade.permissions.network``. None in deny mode (nothing is reached)."""
        from stockade.net.domains import DomainPolicy
        from stockade.net.mode import NetworkMode
        from stockade.permissions.network import NetworkGate

        mode = self.sandbox.policy.network
        if mode is NetworkMode.DENY:
            return None
        policy = self._domain_policy or DomainPolicy()
        checker = NetworkGate(self.gate, policy, mode, session_prompt=self.prompt)
        if self.sandbox.proxy is not None:
            checker.connect(
                self.sandbox.proxy,
                ledger=self.gate.ledger,
                session=self.session_id,
                posture=self.sandbox.posture.summary(),
            )
        return checker

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The ledger's id for this session (``stockade ledger --session ID``)."""
        return self.gate.session_id

    @property
    def posture(self) -> Posture:
        """What confined commands run under (escapes run unconfined and say so)."""
        return self.sandbox.posture

    @property
    def autonomy(self) -> Autonomy:
        """The effective level (auto-accept is lowered to balanced without a proven sandbox)."""
        return self.gate.autonomy.level

    @property
    def session_dir(self) -> Path:
        """The session's private directory (removed on close)."""
        return self.sandbox.session_dir.root

    def report(self) -> SessionReport:
        """The completion report: this session's decisions counted by outcome and tier."""
        return self.gate.ledger.report(self.session_id)

    def close(self) -> None:
        """Kill the background commands, record how they ended, remove the temp dirs."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            handles = list(self._background.values())
        for handle in handles:
            handle.command.kill()
            self._settle(handle)
        if self._escape_sandbox is not None:
            self._escape_sandbox.close()
        self.sandbox.close()
        if self._owns_ledger:
            self.gate.ledger.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- helpers shared by every action -------------------------------------------

    def _refusing(
        self,
        action: str,
        path: str | os.PathLike[str],
        effects: tuple[Effect, ...],
        check: Callable[[], T],
    ) -> T:
        """Run a policy check; when it refuses (PermissionDenied), record the refusal in the
        ledger before raising it - an attempt to reach past the jail is worth auditing."""
        try:
            return check()
        except PermissionDenied as refusal:
            label = action if " " in action else f"{action} {os.fspath(path)}"
            self.gate.ledger.record(
                LedgerEntry(
                    session=self.session_id,
                    project=self.gate.project,
                    action=label,
                    kind=max(effects, key=lambda e: EFFECT_TIERS[e]).value,
                    tier=max(EFFECT_TIERS[e] for e in effects).label,
                    effects=tuple(e.value for e in effects),
                    source="sandbox-policy",
                    autonomy=self.autonomy.value,
                    posture=self.posture.summary(),
                    decision=DENIED,
                    reason=refusal.message,
                )
            )
            raise

    def _authorise(self, plan: ActionPlan, prompt: PromptFunction | str | None) -> Decision:
        verdict = self.gate.check_action(plan, cwd=str(self.project))
        decision = self.gate.decide(verdict, self._prompt_for(prompt))
        if not decision.allowed:
            raise ActionDenied(decision)
        return decision

    def _prompt_for(self, prompt: PromptFunction | str | None) -> PromptFunction | None:
        if isinstance(prompt, str):
            if prompt != SESSION_PROMPT:
                raise UsageError(f"unknown prompt {prompt!r}", fix="pass a callable or None")
            return self.prompt
        return prompt

    def _absolute(self, path: str | os.PathLike[str]) -> Path:
        candidate = Path(os.path.expanduser(os.fspath(path)))
        return candidate if candidate.is_absolute() else self.project / candidate

    def _require_open(self) -> None:
        if self._closed:
            raise UsageError("this session is closed", fix="open a new Session")

    def _finish_entry(self, decision: Decision, exit_code: int, duration: float) -> None:
        if decision.ledger_id is not None:
            self.gate.ledger.finish(decision.ledger_id, exit_code=exit_code, duration=duration)

    def _settle(self, handle: BackgroundHandle) -> None:
        """Complete the ledger entry of a background command that ended (once)."""
        code = handle.command.exit_code
        if code is None:
            return
        with self._lock:
            if handle.recorded:
                return
            handle.recorded = True
        self._finish_entry(handle.decision, code, handle.command.duration)


class ActionDenied(PermissionDenied):
    """A file or network action was denied by the gate; ``decision`` says who and why."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(f"denied: {decision.reason}", fix=decision.fix)
        self.decision = decision


@dataclass
class BackgroundHandle:
    id: str
    text: str
    command: RunningCommand
    decision: Decision
    recorded: bool = False


def _review_workspace(workspace: str | None, sandbox: Sandbox | None) -> bool:
    """Whether the session runs on a review layer; a given sandbox decides when no workspace
    is named, and must agree when one is."""
    if workspace is not None and workspace not in WORKSPACES:
        raise UsageError(
            f"unknown workspace {workspace!r}", fix=f"use one of: {', '.join(WORKSPACES)}"
        )
    if sandbox is None:
        return workspace == "review"
    has_review = sandbox.review is not None
    if workspace is not None and (workspace == "review") != has_review:
        raise UsageError(
            f"workspace={workspace!r} does not match the sandbox given",
            fix="build the Sandbox with review=True for a review workspace, or omit workspace",
        )
    return has_review
