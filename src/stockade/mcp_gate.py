"""``stockade run --stdio --gate``: an MCP server runs confined, and every tool call it is sent
goes through the permission gate first.

stockade sits between the agent (the MCP client, on stockade's stdin/stdout) and the server
(the confined COMMAND, on pipes) and reads the JSON-RPC stream in both directions, framed as
the MCP stdio transport frames it: one JSON message per line. Each ``tools/call`` becomes the
action ``mcp.<server>.<tool>`` (effect ``mcp-tool``, tier high) and is judged like any other:
hard denies, ``mcp`` rules, autonomy, then a question to the person - through the client's
elicitation when it declared it (an ``elicitation/create`` request mid-call on a legacy
connection, an ``InputRequiredResult`` whose retry carries the answer on a 2026-07-28+ one) -
or, when nobody can be asked, the headless denial with the fix. Every decision goes into the
ledger, and is completed when the server's response passes back.

A denied call is answered by stockade itself (a tool result with ``isError`` naming the
reason and the fix) and never reaches the server. What the client sends is parsed strictly
(no duplicate keys, no NaN, one object - or a batch of them - per line) and forwarded
re-serialised, so the server acts on exactly what was judged; a line that is not a valid
message is answered with a JSON-RPC parse error and not forwarded. Everything else passes
through unchanged in order: the server's own requests (sampling, its own elicitations) and
the client's answers to them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

from stockade.elicitation import (
    answer_from_content,
    answer_schema,
    offered,
    question_key,
    question_text,
)
from stockade.errors import UsageError
from stockade.permissions import actions
from stockade.permissions.actions import Effect
from stockade.permissions.gate import Gate
from stockade.permissions.prompt import Choice
from stockade.permissions.verdict import Decision, Outcome, Verdict
from stockade.printable import clipped

if TYPE_CHECKING:  # pragma: no cover
    from stockade.runner import Sandbox
    from stockade.settings import Settings

MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024  # one JSON-RPC line from the client
MAX_ACTION_CHARS: Final = 1000  # the arguments shown in the ledger and the question
INPUT_REQUIRED_VERSION: Final = "2026-07-28"  # first revision that elicits by InputRequiredResult
META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602

# --- the server's name: the <server> of mcp.<server>.<tool> ------------------------------------
SERVER_NAME: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # no dots: the id is dotted
TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # the MCP spec's tool-name alphabet
# Words of a launch command that are not the server itself (skipped when naming it).
LAUNCHERS: Final = frozenset(
    {"npx", "pnpx", "bunx", "uvx", "pipx", "node", "deno", "bun", "python", "python3", "uv",
     "docker", "podman", "env", "npm", "pnpm", "yarn", "run", "exec", "x", "dlx", "-m"}
)  # fmt: skip
NAME_AFFIXES: Final = (("mcp-server-", ""), ("server-", ""), ("", "-mcp-server"), ("", "-mcp"),
                       ("", "-server"))  # fmt: skip


def server_name(command: Sequence[str], explicit: str | None = None) -> str:
    """The name rules use for this server: ``explicit`` (``--server-name``) when given, else
    derived from the command (``npx -y @modelcontextprotocol/server-github`` -> ``github``).
    Never the name the server reports about itself: the server is what is being confined."""
    if explicit is not None:
        if not SERVER_NAME.match(explicit):
            raise UsageError(
                f"--server-name {explicit!r} is not a plain name",
                fix="use letters, digits, - and _ (at most 64), e.g. --server-name github",
            )
        return explicit
    word = next((w for w in command if w not in LAUNCHERS and not w.startswith("-")), "")
    name = word.rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"@[^@]*$", "", name) if not name.startswith("@") else name[1:]
    name = re.sub(r"\.(py|js|mjs|cjs|ts|sh)$", "", name)
    for prefix, suffix in NAME_AFFIXES:
        if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix + suffix):
            name = name[len(prefix) : len(name) - len(suffix)]
            break
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:64]
    return name or "server"


# --- strict JSON -------------------------------------------------------------------------------


class BadMessage(ValueError):
    """A client line that is not one valid JSON-RPC message (or batch)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise BadMessage("duplicate keys in an object")
    return dict(pairs)


def _no_constants(name: str) -> Any:
    raise BadMessage(f"{name} is not JSON")


def parse_line(line: bytes) -> Any:
    """One client line as JSON, strictly: what the gate judges is what the server gets."""
    try:
        text = line.decode("utf-8")
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise BadMessage(f"not JSON: {error}") from None


def dump(message: Any) -> bytes:
    """One message as one line (ASCII-escaped: valid UTF-8 whatever the strings hold)."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"


def _version_at_least(version: object, minimum: str) -> bool:
    return isinstance(version, str) and version >= minimum  # YYYY-MM-DD sorts as text


def _elicits(capabilities: object) -> bool:
    """A client's capabilities declare form elicitation (a bare ``elicitation: {}`` counts)."""
    if not isinstance(capabilities, Mapping):
        return False
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, Mapping):
        return False
    return "form" in elicitation or "url" not in elicitation


def _id_key(request_id: object) -> str:
    return json.dumps(request_id, sort_keys=True)


# --- the relay ----------------------------------------------------------------------------------


@dataclass
class _Asked:
    """A tools/call waiting for the client's answer to our legacy elicitation."""

    message: dict[str, Any]
    verdict: Verdict
    choices: list[Choice]
    digest: str  # of the call's name and arguments (see ``_Forwarded``)


@dataclass
class _Forwarded:
    """A gated tools/call the server is working on: its ledger entry is finished when the
    response passes back (or carried over when the server asks for input itself)."""

    ledger_id: int | None
    digest: str
    started: float = field(default_factory=time.monotonic)


class GateRelay:
    """The two directions of one client <-> server stream, and the gate between them."""

    def __init__(self, gate: Gate, server: str, *, elicit: bool = True) -> None:
        self.gate = gate
        self.server = server
        self.elicit = elicit  # False: --headless, every question is denied
        self._to_client: IO[bytes] = sys.stdout.buffer
        self._to_server: IO[bytes] | None = None
        self._client_lock = threading.Lock()
        self._server_lock = threading.Lock()
        self._salt = secrets.token_hex(8)
        self._legacy_elicitation = False  # from the initialize request
        self._asked: dict[str, _Asked] = {}  # our elicitation request id -> the call
        self._forwarded: dict[str, _Forwarded] = {}  # request id (JSON) -> ledger entry
        # call digest -> (the allowed call, the keys of the server's own input requests)
        self._continuations: dict[str, tuple[_Forwarded, set[str]]] = {}
        self._state = threading.Lock()

    # -- plumbing -----------------------------------------------------------------------------

    def serve(
        self,
        client_in: IO[bytes],
        client_out: IO[bytes],
        to_server: IO[bytes],
        from_server: IO[bytes],
    ) -> None:
        """Relay until the server's output ends; the client's EOF closes the server's stdin."""
        self._to_client = client_out
        self._to_server = to_server
        reader = threading.Thread(
            target=self._client_loop, args=(client_in,), name="stockade-gate-client", daemon=True
        )
        reader.start()
        for line in _lines(from_server, None):
            self.from_server(line)

    def _client_loop(self, client_in: IO[bytes]) -> None:
        try:
            for line in _lines(client_in, MAX_MESSAGE_BYTES):
                self.from_client(line)
        finally:
            with self._server_lock:
                if self._to_server is not None:
                    with suppress(OSError):
                        self._to_server.close()

    def _send_client(self, message: Any) -> None:
        self._write_client(dump(message))

    def _write_client(self, data: bytes) -> None:
        with self._client_lock:
            try:
                self._to_client.write(data)
                self._to_client.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the client is gone; the server's EOF ends the relay

    def _send_server(self, message: Any) -> None:
        with self._server_lock:
            if self._to_server is None:
                return
            try:
                self._to_server.write(dump(message))
                self._to_server.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass

    # -- client -> server ---------------------------------------------------------------------

    def from_client(self, line: bytes) -> None:
        """Judge and forward (or answer) one line the client sent."""
        if not line.strip():
            return
        if line is _TOO_LONG:
            self._error(None, INVALID_REQUEST, f"message over {MAX_MESSAGE_BYTES} bytes")
            return
        try:
            message = parse_line(line)
        except BadMessage as error:
            self._error(None, PARSE_ERROR, f"stockade --gate: {error}")
            return
        for item in message if isinstance(message, list) and message else [message]:
            self._one_from_client(item)

    def _one_from_client(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._error(None, INVALID_REQUEST, "stockade --gate: a message must be an object")
            return
        method = message.get("method")
        if method is None and "id" in message and ("result" in message or "error" in message):
            self._client_response(message)
            return
        if not isinstance(method, str):
            self._error(message.get("id"), INVALID_REQUEST, "stockade --gate: no method")
            return
        if method == "initialize":
            params = message.get("params")
            capabilities = params.get("capabilities") if isinstance(params, dict) else None
            self._legacy_elicitation = _elicits(capabilities)
        elif method == "notifications/cancelled":
            if self._cancel(message.get("params")):
                return
        elif method.strip().lower() == "tools/call":
            if method != "tools/call":
                self._error(message.get("id"), INVALID_REQUEST, f"unknown method {method!r}")
                return
            self._tool_call(message)
            return
        self._send_server(message)

    def _client_response(self, message: dict[str, Any]) -> None:
        """A response: to our own elicitation (decide the waiting call), else the server's."""
        request_id = message.get("id")
        asked = self._asked.pop(request_id, None) if isinstance(request_id, str) else None
        if asked is None:
            self._send_server(message)
            return
        result = message.get("result")
        answer = (
            answer_from_content(result.get("action"), result.get("content"), asked.choices)
            if isinstance(result, dict)
            else Choice.DENY_ONCE
        )
        decision = self.gate.resolve(asked.verdict, answer)
        self._settle(asked.message, decision, asked.digest, modern=False)

    def _cancel(self, params: object) -> bool:
        """Drop a call still waiting for its answer (it never reached the server)."""
        if not isinstance(params, dict):
            return False
        wanted = _id_key(params.get("requestId"))
        for key, asked in list(self._asked.items()):
            if _id_key(asked.message.get("id")) == wanted:
                del self._asked[key]
                return True
        return False

    # -- the gate -------------------------------------------------------------------------------

    def _tool_call(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(params, dict) or not isinstance(name, str) or not TOOL_NAME.match(name):
            self._error(
                message.get("id"),
                INVALID_PARAMS,
                "stockade --gate: tools/call needs params.name, a tool name of letters, digits "
                "and _ . - (at most 128)",
            )
            return
        arguments = params.get("arguments", {})
        digest = self._digest(name, arguments)
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        modern = _version_at_least(meta.get(META_VERSION), INPUT_REQUIRED_VERSION)
        responses = params.get("inputResponses")
        responses = responses if isinstance(responses, dict) else {}
        earlier = self._continues(digest, responses)
        if earlier is not None:
            self._forward_call(message, earlier)
            return
        verdict = self.gate.check_action(self._plan(name, arguments), cwd=self.gate.project)
        if verdict.outcome is not Outcome.ASK:
            self._settle(message, self.gate.resolve(verdict, None), digest, modern=modern)
            return
        request = verdict.prompt_request()
        choices = offered(request)
        key = question_key(request, choices, salt=self._salt)
        if key in responses:  # the retried call brings the answer to our question
            response = responses.pop(key)
            if not responses:
                params.pop("inputResponses", None)
            answer = (
                answer_from_content(response.get("action"), response.get("content"), choices)
                if isinstance(response, dict)
                else Choice.DENY_ONCE
            )
            self._settle(message, self.gate.resolve(verdict, answer), digest, modern=modern)
            return
        can_ask = _elicits(meta.get(META_CAPABILITIES)) if modern else self._legacy_elicitation
        if not self.elicit or not can_ask or "id" not in message:
            self._settle(message, self.gate.resolve(verdict, None), digest, modern=modern)
            return
        elicitation = {
            "mode": "form",
            "message": question_text(request),
            "requestedSchema": answer_schema(choices, request),
        }
        if modern:
            self._send_client(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "resultType": "input_required",
                        "inputRequests": {
                            key: {"method": "elicitation/create", "params": elicitation}
                        },
                    },
                }
            )
            return
        ask_id = f"stockade-gate-{secrets.token_hex(8)}"
        self._asked[ask_id] = _Asked(message, verdict, choices, digest)
        self._send_client(
            {"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": elicitation}
        )

    def _plan(self, name: str, arguments: object) -> actions.ActionPlan:
        tool_id = f"mcp.{self.server}.{name}"
        shown = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
        if len(shown) > MAX_ACTION_CHARS:
            shown = shown[: MAX_ACTION_CHARS - 3] + "..."
        return actions.mcp_tool(tool_id, (Effect.MCP_TOOL,), action=f"{tool_id} {shown}")

    def _digest(self, name: str, arguments: object) -> str:
        text = json.dumps([name, arguments], sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def _continues(self, digest: str, responses: Mapping[str, object]) -> _Forwarded | None:
        """The allowed call this one retries, when it only answers the *server's* own input
        requests (it passes without a new question); else None."""
        with self._state:
            found = self._continuations.get(digest)
            if found is None or not responses or not set(responses) <= found[1]:
                return None
            del self._continuations[digest]
            return found[0]

    def _settle(
        self, message: dict[str, Any], decision: Decision, digest: str, *, modern: bool
    ) -> None:
        """Forward an allowed call; answer a denied one ourselves (it never reaches the server)."""
        if decision.allowed:
            self._forward_call(message, _Forwarded(decision.ledger_id, digest))
            return
        if "id" not in message:
            return  # a notification gets no answer
        text = f"denied by stockade: {decision.reason}"
        if decision.fix:
            text += f"\nfix: {decision.fix}"
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
        if modern:
            result["resultType"] = "complete"
        self._send_client({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _forward_call(self, message: dict[str, Any], forwarded: _Forwarded) -> None:
        if "id" in message:
            with self._state:
                self._forwarded[_id_key(message["id"])] = forwarded
        self._send_server(message)

    def _error(self, request_id: object, code: int, text: str) -> None:
        self._send_client(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}
        )

    # -- server -> client ---------------------------------------------------------------------

    def from_server(self, line: bytes) -> None:
        """Pass a server line to the client as it is; note how gated calls ended - first: a
        client answering an input request at once must find its continuation noted."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "method" not in item and "id" in item:
                self._server_response(item)
        self._write_client(line if line.endswith(b"\n") else line + b"\n")

    def _server_response(self, message: dict[str, Any]) -> None:
        with self._state:
            forwarded = self._forwarded.pop(_id_key(message.get("id")), None)
            if forwarded is None:
                return
            result = message.get("result")
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                requests = result.get("inputRequests")
                if isinstance(requests, dict) and requests:
                    self._continuations[forwarded.digest] = (forwarded, set(requests))
                return
        if forwarded.ledger_id is None:
            return
        failed = "error" in message or (isinstance(result, dict) and bool(result.get("isError")))
        self.gate.ledger.finish(
            forwarded.ledger_id,
            exit_code=1 if failed else 0,
            duration=time.monotonic() - forwarded.started,
        )


_TOO_LONG: Final = b"\0stockade: message too long\0"


def _lines(stream: IO[bytes], limit: int | None) -> Iterator[bytes]:
    """Lines of ``stream`` until EOF; with ``limit``, a longer line is skipped whole and
    stands as ``_TOO_LONG`` (it is never forwarded in pieces)."""
    while True:
        try:
            line = stream.readline() if limit is None else stream.readline(limit + 1)
        except (OSError, ValueError):
            return
        if not line:
            return
        if limit is not None and len(line) > limit and not line.endswith(b"\n"):
            while True:  # drop the rest of the long line
                rest = stream.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
            yield _TOO_LONG
            continue
        yield line


# --- the command -------------------------------------------------------------------------------


def serve_gated(command: Sequence[str], settings: Settings, options: Mapping[str, Any]) -> int:
    """``stockade run --stdio --gate -- COMMAND``: run the MCP server COMMAND confined and relay
    its stdio through the gate; return its exit code."""
    from stockade.cli.gate_options import autonomy_choice, permission_config
    from stockade.cli.sandbox_setup import ignored_notice, sandbox_for
    from stockade.permissions.ledger import SESSION_ENV_VAR

    name = server_name(command, options.get("server_name"))
    headless = bool(options.get("headless"))
    notice = ignored_notice(settings)
    if notice:
        _say(notice)
    with sandbox_for(settings) as sandbox:
        sandbox.limits = sandbox.limits._replace(wall_timeout_s=None)
        gate = Gate(
            project=settings.project,
            autonomy=autonomy_choice(settings, dict(options), interactive=not headless).level,
            posture=sandbox.posture,
            config=permission_config(settings),
            session_id=os.environ.get(SESSION_ENV_VAR) or None,  # else the gate makes one
        )
        _announce(name, gate, sandbox, headless)
        relay = GateRelay(gate, name, elicit=not headless)
        result = sandbox.run_relayed(
            list(command),
            lambda to_server, from_server: relay.serve(
                sys.stdin.buffer, sys.stdout.buffer, to_server, from_server
            ),
            forward_signals=True,
        )
        _say(f"stockade: {gate.completion_report().summary()}")
    return result.exit_code


def _announce(name: str, gate: Gate, sandbox: Sandbox, headless: bool) -> None:
    asks = "denied (--headless)" if headless else "asked through the client's elicitation"
    _say(
        f"stockade: gating MCP server {name!r}: its tool calls are mcp.{name}.<tool>, "
        f"autonomy {gate.autonomy.level}, questions {asks}; {sandbox.posture.summary()}"
    )
    if gate.autonomy.warning:
        _say(f"stockade: warning: {gate.autonomy.warning}")
    if not sandbox.posture.confined:
        _say("stockade: WARNING running UNCONFINED - " + "; ".join(sandbox.posture.gaps))


def _say(text: str) -> None:
    print(clipped(text, 2000), file=sys.stderr, flush=True)


__all__ = ["GateRelay", "serve_gated", "server_name"]
