"""The agent path as a library: ``Session`` runs an agent's commands and file actions through
classify -> gate -> prompt (or headless) -> sandbox -> ledger.

A session owns one proven sandbox (its private temp dir is removed on close and swept on the
next start after a SIGKILL), one permission gate (session rules, escape approvals, ledger
session id), the background commands it started (killed on close) and the digests of the
files it read (write/edit of an existing file needs an unchanged earlier read).

The model-facing ``bash`` tool (:mod:`stockade.tool_calls`) takes only the arguments in
``TOOL_PROPERTIES``. Everything that shapes the jail (mode, writable roots, network, limits,
autonomy) is an operator decision made when the Session is built, never a tool argument;
``handle_tool_call`` answers anything else with an error result the model can act on.

A sandbox escape (``escape_sandbox=True``) is one audited step outside: it asks every time
(allow once, allow this exact cwd+command for the session, or deny), is never persisted,
cannot run in the background, is denied when nobody can answer (headless) at every autonomy
level, and runs through a separate ``none``-backend sandbox so every other command of the
session stays confined.

``workspace="review"`` runs every command of the session on one copy-on-write layer over the
project (``review/``): ``changes()``, ``diff()``, ``apply()`` and ``discard()`` decide what
reaches the project. The file tools are off in such a session: they run outside the jail, so
they would read and write the project itself, not the layer.

``Session`` is assembled from parts with one job each: ``session_core`` (the sandbox, gate,
ledger, lifecycle and the one way an action is authorised and recorded), ``session_files``
(the file tools), ``session_network`` (fetch); the commands and the review workspace are here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from stockade.errors import PermissionDenied, StockadeError, UsageError
from stockade.permissions.autonomy import Autonomy
from stockade.permissions.gate import Classifier
from stockade.permissions.ledger import Ledger, SessionReport
from stockade.permissions.prompt import Choice, PromptFunction, PromptRequest
from stockade.permissions.verdict import Decision, Verdict
from stockade.sandbox.posture import Posture, unconfined
from stockade.session_core import SESSION_PROMPT, ActionDenied, BackgroundHandle
from stockade.session_files import FileTools
from stockade.session_network import NetworkActions
from stockade.tool_calls import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_PROPERTIES,
    TOOL_REQUIRED,
    Shell,
    ToolResult,
    check_tool_arguments,
    detect_shell,
    tool_schema,
)

if TYPE_CHECKING:
    from stockade.file_tools import DirListing, FileChange, FileContent
    from stockade.net.domains import DomainPolicy
    from stockade.net.fetch import FetchResult
    from stockade.net.mode import NetworkMode
    from stockade.permissions.config import PermissionConfig
    from stockade.permissions.network import NetworkRefusal
    from stockade.permissions.rules import RuleStore
    from stockade.review import ApplyResult, Change
    from stockade.review.workspace import ReviewWorkspace
    from stockade.runner import RunResult, Sandbox
    from stockade.sandbox.denials import Denial
    from stockade.sandbox.guard import Finding
    from stockade.sandbox.limits import Limits

T = TypeVar("T")

__all__ = [
    "DENIED_EXIT_CODE",
    "SESSION_PROMPT",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "TOOL_PROPERTIES",
    "TOOL_REQUIRED",
    "ActionDenied",
    "AsyncSession",
    "BackgroundOutput",
    "ExecResult",
    "Session",
    "Shell",
    "ToolResult",
    "check_tool_arguments",
    "tool_schema",
]

DENIED_EXIT_CODE: Final = PermissionDenied.exit_code  # 126: nothing ran


@dataclass(frozen=True)
class ExecResult:
    """What ``Session.execute`` did: the gate's verdict and decision and, when it ran, how.

    ``exit_code`` is None only for a background command that was started (see
    ``background_id``); a denied command did not run and has exit code 126.
    ``posture`` is what the command ran under and ``shell`` the shell that ran it (both None
    when it did not run).
    """

    command: str
    cwd: str
    allowed: bool
    exit_code: int | None
    stdout: str
    stderr: str
    truncated: bool
    posture: Posture | None
    verdict: Verdict
    decision: Decision
    duration: float
    timed_out: bool = False
    escaped: bool = False
    background_id: str | None = None
    description: str | None = None
    limit_message: str | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None
    network_refusals: tuple[NetworkRefusal, ...] = ()  # hosts the jail was refused, and why
    shell: Shell | None = None
    # What the sandbox denied (path, why, remedy) and what the post-run guard moved aside;
    # both are also stockade's own lines at the end of ``stderr``.
    denials: tuple[Denial, ...] = ()
    guard: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        return self.allowed and self.exit_code == 0

    def to_text(self) -> str:
        """The result as a model reads it: decision, exit code, posture, bounded output."""
        if not self.allowed:
            fix = f"\nfix: {self.decision.fix}" if self.decision.fix else ""
            return f"not run - denied: {self.decision.reason}{fix}"
        posture = self.posture.summary() if self.posture is not None else "-"
        shell = f"\nshell: {self.shell}" if self.shell is not None else ""
        if self.background_id is not None:
            return (
                f"started in the background as {self.background_id}\nposture: {posture}{shell}\n"
                f"read its output with bash_output(id={self.background_id!r}); "
                f"stop it with bash_kill(id={self.background_id!r})"
            )
        head = f"exit code: {self.exit_code} ({self.duration:.2f} s)"
        if self.timed_out or self.limit_message:
            head += f" - {self.limit_message or 'timed out'}"
        text = _render(head, posture + shell, self.stdout, self.stderr)
        if self.network_refusals:
            text += "\nnetwork refusals:\n" + "\n".join(
                f"  {refusal.line()}" for refusal in self.network_refusals
            )
        return text


@dataclass(frozen=True)
class BackgroundOutput:
    """New output of a background command since the last read, and its state."""

    id: str
    command: str
    stdout: str
    stderr: str
    running: bool
    exit_code: int | None
    truncated: bool
    timed_out: bool = False
    limit_message: str | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None

    def to_text(self) -> str:
        if self.running:
            head = f"{self.id} is still running"
        else:
            head = f"{self.id} exited with code {self.exit_code}"
            if self.limit_message:
                head += f" - {self.limit_message}"
        return _render(head, None, self.stdout, self.stderr)


def _render(head: str, posture: str | None, stdout: str, stderr: str) -> str:
    lines = [head]
    if posture is not None:
        lines.append(f"posture: {posture}")
    if stdout:
        lines.append("stdout:\n" + stdout.rstrip("\n"))
    if stderr:
        lines.append("stderr:\n" + stderr.rstrip("\n"))
    if not stdout and not stderr:
        lines.append("(no output)")
    return "\n".join(lines)


class Session(FileTools, NetworkActions):
    """Run an agent's commands and file actions under the gate, the sandbox and the ledger.

    ``prompt`` answers "ask" verdicts (any callable taking a PromptRequest and returning one of
    its choices); None means headless: anything that would ask is denied, with the fix named.
    ``autonomy`` defaults to ``STOCKADE_AUTONOMY``, else ``balanced`` when someone can answer
    (a prompt is given, or ``interactive=True`` for servers that ask per call) and ``ask``
    otherwise. The sandbox is resolved and proven here (SandboxUnavailable if it cannot be);
    ``backend="none"`` runs unconfined, and every result says so. Commands run in a warm jail
    (one long-lived jail, every per-command guarantee kept: ``stockade.sandbox.warm``) unless
    ``warm=False`` or ``STOCKADE_WARM=0``.
    """

    def tool_schema(self) -> dict[str, Any]:
        """The JSON schema of the model-facing ``bash`` tool."""
        return tool_schema()

    # -- commands -----------------------------------------------------------------------------

    def execute(
        self,
        command: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        description: str | None = None,
        escape_sandbox: bool = False,
        run_in_background: bool = False,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
        network_prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> ExecResult:
        """Classify, gate, (ask,) run and record one shell command.

        ``cwd`` is relative to the project root (or absolute) and must be inside a writable
        root. ``timeout`` defaults to the limits' wall-clock limit for foreground commands and
        to none for background ones. ``prompt`` answers this call's question instead of the
        session's prompt (None: headless) - for servers that ask per request.
        ``network_prompt`` answers the questions about hosts no list covers while the command
        runs (default: ``prompt``).

        A denied command does not run: the result has ``allowed=False``, exit code 126 and the
        reason and fix in ``stderr``. Bad arguments raise UsageError before anything is asked.
        """
        self._require_open()
        if not isinstance(command, str) or not command.strip():
            raise UsageError("no command given", fix="pass the shell command to run")
        if escape_sandbox and run_in_background:
            raise UsageError(
                "a sandbox escape cannot run in the background",
                fix="run the escaped command in the foreground, or without escape_sandbox",
            )
        if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
            raise UsageError(f"timeout must be positive, got {timeout!r}", fix="pass seconds > 0")
        policy = self.sandbox.policy.with_cwd(self._absolute(cwd)) if cwd else self.sandbox.policy
        where = str(policy.cwd)
        verdict = self.gate.check(command, escape=escape_sandbox, cwd=where)
        decision = self.gate.decide(verdict, self._prompt_for(prompt))
        if not decision.allowed:
            return self._denied(command, where, verdict, decision, description)
        shell = self._shell_now(decision)
        argv = [shell.path, "-c", command]
        if run_in_background:
            return self._start_background(command, where, argv, timeout, verdict, decision, shell)
        runner = self._escape() if escape_sandbox else self.sandbox
        # while it runs, a host no list covers is asked about through this call's prompt
        asks = prompt if network_prompt == SESSION_PROMPT else network_prompt
        with self._asking_network(asks, command) as refusals:
            try:
                # (the Sandbox's own cwd needs no second look-up)
                same_cwd = not cwd and runner is self.sandbox
                run = runner.run(argv, cwd=None if same_cwd else where, timeout=timeout)
            except StockadeError as error:
                self._finish_entry(decision, error.exit_code, 0.0)
                raise
        self._finish_entry(decision, run.exit_code, run.duration)
        result = self._ran(
            command, where, run, verdict, decision, description, escape_sandbox, shell
        )
        return dataclasses.replace(result, network_refusals=tuple(refusals))

    @property
    def shell(self) -> Shell:
        """The shell the next command runs under (looked up now: see ``detect_shell``)."""
        return detect_shell(self._preferred_shell)

    def _shell_now(self, decision: Decision) -> Shell:
        try:
            return detect_shell(self._preferred_shell)
        except StockadeError as error:
            self._finish_entry(decision, error.exit_code, 0.0)
            raise

    def handle_tool_call(
        self,
        arguments: object,
        *,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
        network_prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> ToolResult:
        """Run a model's ``bash`` tool call and return what to tell the model. Never raises for
        anything a model can send: an unknown or mistyped argument, a ``cwd`` outside the
        writable roots, a missing command, a denial - each is a ToolResult with ``is_error``
        and the text says what to change. (A bad ``prompt=`` is the caller's bug: it raises.)
        ``network_prompt`` is as for :meth:`execute`.
        """
        answer = self._prompt_for(prompt)
        try:
            checked = check_tool_arguments(arguments)
            result = self.execute(
                checked.pop("command"),
                cwd=checked.get("cwd"),
                timeout=checked.get("timeout"),
                description=checked.get("description"),
                escape_sandbox=bool(checked.get("escape_sandbox", False)),
                run_in_background=bool(checked.get("run_in_background", False)),
                prompt=answer,
                network_prompt=network_prompt,
            )
        except StockadeError as error:
            return ToolResult.from_error(error)
        return ToolResult.from_exec(result)

    def output(self, handle_id: str) -> BackgroundOutput:
        """What background command ``handle_id`` wrote since the previous read."""
        handle = self._handle(handle_id)
        new = handle.command.read_new()
        if not new.running:
            self._settle(handle)
        return BackgroundOutput(
            id=handle_id,
            command=handle.text,
            stdout=new.stdout,
            stderr=new.stderr,
            running=new.running,
            exit_code=new.exit_code,
            truncated=new.truncated,
            timed_out=new.timed_out,
            limit_message=new.limit_message,
            stdout_path=new.stdout_path,
            stderr_path=new.stderr_path,
        )

    def kill(self, handle_id: str) -> BackgroundOutput:
        """Stop background command ``handle_id`` (its whole process tree) and return what it
        wrote since the previous read."""
        handle = self._handle(handle_id)
        handle.command.kill()
        return self.output(handle_id)

    def background_ids(self) -> list[str]:
        """Ids of the background commands started in this session (running or not)."""
        with self._lock:
            return list(self._background)

    # -- review workspace -------------------------------------------------------------------

    @property
    def workspace(self) -> str:
        """``review`` when commands write a copy-on-write layer, else ``direct``."""
        return "review" if self.sandbox.review is not None else "direct"

    @property
    def changeset_id(self) -> str | None:
        """The id of the review layer's changeset (``stockade changes show ID``)."""
        return self._review().changeset_id

    def changes(self) -> list[Change]:
        """What the session's commands changed in the project so far (not applied yet)."""
        return self._review().changes()

    def diff(self, path: str | os.PathLike[str] | None = None) -> str:
        """A unified diff of the changes (to ``path`` and below, relative to the project)."""
        return self._review().diff(None if path is None else [os.fspath(path)])

    def apply(self, paths: Sequence[str | os.PathLike[str]] | None = None) -> ApplyResult:
        """Write the changes (all, or those ``paths`` name) into the project. Refused, with the
        list, when the project changed under one of them since it was made (ApplyConflict);
        needs every background command of the session to have ended."""
        chosen = None if paths is None else [os.fspath(p) for p in paths]
        return self._review().apply(chosen)

    def discard(self) -> None:
        """Drop every change of the layer; the project stays as it is."""
        self._review().discard()

    def _review(self) -> ReviewWorkspace:
        self._require_open()
        if self.sandbox.review is None:
            raise UsageError(
                "this session writes the project directly", fix='use Session(workspace="review")'
            )
        return self.sandbox.review

    def _escape(self) -> Sandbox:
        """The unconfined runner for approved escapes, made on first use. It is a separate
        Sandbox so the session's own sandbox (and every other command) stays confined."""
        from stockade.runner import Sandbox

        with self._lock:
            if self._escape_sandbox is None:
                policy = self.sandbox.policy
                self._escape_sandbox = Sandbox.for_project(
                    policy.project,
                    writable=[w for w in policy.writable if w != policy.session_tmp],
                    network="allow",
                    cwd=policy.project,
                    env_passthrough=self._env_passthrough,
                    backend="none",
                    limits=self.sandbox.limits,
                )
            return self._escape_sandbox

    def _denied(
        self,
        command: str,
        where: str,
        verdict: Verdict,
        decision: Decision,
        description: str | None,
    ) -> ExecResult:
        fix = f"\n  fix: {decision.fix}" if decision.fix else ""
        return ExecResult(
            command=command,
            cwd=where,
            allowed=False,
            exit_code=DENIED_EXIT_CODE,
            stdout="",
            stderr=f"stockade: denied: {decision.reason}{fix}\n",
            truncated=False,
            posture=None,
            verdict=verdict,
            decision=decision,
            duration=0.0,
            escaped=verdict.escape,
            description=description,
        )

    def _ran(
        self,
        command: str,
        where: str,
        run: RunResult,
        verdict: Verdict,
        decision: Decision,
        description: str | None,
        escaped: bool,
        shell: Shell,
    ) -> ExecResult:
        posture = (
            unconfined("sandbox escape approved at the prompt: this command ran UNCONFINED")
            if escaped
            else run.posture
        )
        return ExecResult(
            command=command,
            cwd=where,
            allowed=True,
            exit_code=run.exit_code,
            stdout=run.stdout,
            stderr=run.stderr,
            truncated=run.truncated,
            posture=posture,
            verdict=verdict,
            decision=decision,
            duration=run.duration,
            timed_out=run.timed_out,
            escaped=escaped,
            description=description,
            limit_message=run.limit_message,
            stdout_path=run.stdout_path,
            stderr_path=run.stderr_path,
            shell=shell,
            denials=run.denials,
            guard=run.guard,
        )

    def _start_background(
        self,
        command: str,
        where: str,
        argv: list[str],
        timeout: float | None,
        verdict: Verdict,
        decision: Decision,
        shell: Shell,
    ) -> ExecResult:
        try:
            running = self.sandbox.start(argv, cwd=where, timeout=timeout)
        except StockadeError as error:
            self._finish_entry(decision, error.exit_code, 0.0)
            raise
        with self._lock:
            self._background_count += 1
            handle_id = f"bg-{self._background_count}"
            self._background[handle_id] = BackgroundHandle(handle_id, command, running, decision)
        return ExecResult(
            command=command,
            cwd=where,
            allowed=True,
            exit_code=None,
            stdout="",
            stderr="",
            truncated=False,
            posture=running.posture,
            verdict=verdict,
            decision=decision,
            duration=0.0,
            background_id=handle_id,
            shell=shell,
        )

    def _handle(self, handle_id: str) -> BackgroundHandle:
        with self._lock:
            handle = self._background.get(handle_id)
            known = ", ".join(self._background) or "none"
        if handle is None:
            raise UsageError(
                f"no background command {handle_id!r} in this session",
                fix=f"use an id returned by run_in_background (known: {known})",
            )
        return handle


AsyncPromptFunction = Callable[[PromptRequest], Awaitable[Choice]]
AnyPrompt = PromptFunction | AsyncPromptFunction


class AsyncSession:
    """The asyncio twin of :class:`Session`: the same options and methods, awaited.

    Use ``async with AsyncSession(...) as s``: building the session (proving the sandbox) and
    every command or file action run in worker threads, so the event loop never blocks.
    Background commands are spawned by the sandbox's own long-lived thread, never by a
    short-lived worker (bwrap's ``--die-with-parent`` follows the spawning *thread*).
    ``prompt`` may be a coroutine function; it is awaited on this event loop.
    """

    def __init__(
        self,
        project: str | os.PathLike[str] | None = None,
        *,
        autonomy: str | Autonomy | None = None,
        prompt: AnyPrompt | None = None,
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
        self._prompt = prompt
        self._build = functools.partial(
            Session,
            project,
            autonomy=autonomy,
            network=network,
            allowed_domains=allowed_domains,
            domain_policy=domain_policy,
            writable=writable,
            env_passthrough=env_passthrough,
            backend=backend,
            limits=limits,
            permissions=permissions,
            rules=rules,
            ledger=ledger,
            classifier=classifier,
            shell=shell,
            sandbox=sandbox,
            interactive=interactive,
            workspace=workspace,
            warm=warm,
        )
        self._session: Session | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> AsyncSession:
        self._loop = asyncio.get_running_loop()
        self._session = await asyncio.to_thread(self._build, prompt=self._blocking(self._prompt))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._session is not None:
            await asyncio.to_thread(self._session.close)

    @property
    def session(self) -> Session:
        """The underlying (blocking) Session."""
        if self._session is None:
            raise UsageError("the AsyncSession is not open", fix="use `async with AsyncSession()`")
        return self._session

    def _per_call(self, prompt: AnyPrompt | str | None) -> PromptFunction | str | None:
        return prompt if isinstance(prompt, str) else self._blocking(prompt)

    def _blocking(self, prompt: AnyPrompt | None) -> PromptFunction | None:
        """A prompt a worker thread can call: coroutines are run on this session's loop."""
        if prompt is None:
            return None
        loop = self._loop
        assert loop is not None

        def answer(request: PromptRequest) -> Choice:
            result = prompt(request)
            if inspect.isawaitable(result):
                return asyncio.run_coroutine_threadsafe(_awaited(result), loop).result()
            return result

        return answer

    async def _call(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(function, *args, **kwargs)

    def tool_schema(self) -> dict[str, Any]:
        return tool_schema()

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def posture(self) -> Posture:
        return self.session.posture

    async def execute(
        self,
        command: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        description: str | None = None,
        escape_sandbox: bool = False,
        run_in_background: bool = False,
        prompt: AnyPrompt | str | None = SESSION_PROMPT,
        network_prompt: AnyPrompt | str | None = SESSION_PROMPT,
    ) -> ExecResult:
        return await self._call(
            self.session.execute,
            command,
            cwd=cwd,
            timeout=timeout,
            description=description,
            escape_sandbox=escape_sandbox,
            run_in_background=run_in_background,
            prompt=self._per_call(prompt),
            network_prompt=self._per_call(network_prompt),
        )

    async def handle_tool_call(
        self,
        arguments: object,
        *,
        prompt: AnyPrompt | str | None = SESSION_PROMPT,
        network_prompt: AnyPrompt | str | None = SESSION_PROMPT,
    ) -> ToolResult:
        """The awaitable twin of :meth:`Session.handle_tool_call`: never raises for anything
        a model can send."""
        return await self._call(
            self.session.handle_tool_call,
            arguments,
            prompt=self._per_call(prompt),
            network_prompt=self._per_call(network_prompt),
        )

    async def output(self, handle_id: str) -> BackgroundOutput:
        return await self._call(self.session.output, handle_id)

    async def kill(self, handle_id: str) -> BackgroundOutput:
        return await self._call(self.session.kill, handle_id)

    async def read_file(
        self,
        path: str | os.PathLike[str],
        *,
        offset: int = 1,
        limit: int | None = None,
        prompt: AnyPrompt | str | None = SESSION_PROMPT,
    ) -> FileContent:
        blocking = self._per_call(prompt)
        return await self._call(
            self.session.read_file, path, offset=offset, limit=limit, prompt=blocking
        )

    async def list_dir(
        self, path: str | os.PathLike[str] = ".", *, prompt: AnyPrompt | str | None = SESSION_PROMPT
    ) -> DirListing:
        blocking = self._per_call(prompt)
        return await self._call(self.session.list_dir, path, prompt=blocking)

    async def write_file(
        self,
        path: str | os.PathLike[str],
        content: str,
        *,
        prompt: AnyPrompt | str | None = SESSION_PROMPT,
    ) -> FileChange:
        blocking = self._per_call(prompt)
        return await self._call(self.session.write_file, path, content, prompt=blocking)

    async def edit_file(
        self,
        path: str | os.PathLike[str],
        old_string: str,
        new_string: str,
        *,
        replace_all: bool = False,
        prompt: AnyPrompt | str | None = SESSION_PROMPT,
    ) -> FileChange:
        blocking = self._per_call(prompt)
        return await self._call(
            self.session.edit_file,
            path,
            old_string,
            new_string,
            replace_all=replace_all,
            prompt=blocking,
        )

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        timeout: float = 30.0,
        max_bytes: int = 5 * 1024 * 1024,
        prompt: AnyPrompt | str | None = SESSION_PROMPT,
    ) -> FetchResult:
        blocking = self._per_call(prompt)
        return await self._call(
            self.session.fetch,
            url,
            method=method,
            headers=headers,
            body=body,
            timeout=timeout,
            max_bytes=max_bytes,
            prompt=blocking,
        )

    async def report(self) -> SessionReport:
        return await self._call(self.session.report)

    # -- review workspace (``workspace="review"``) ----------------------------------------------

    @property
    def workspace(self) -> str:
        return self.session.workspace

    @property
    def changeset_id(self) -> str | None:
        return self.session.changeset_id

    async def changes(self) -> list[Change]:
        return await self._call(self.session.changes)

    async def diff(self, path: str | os.PathLike[str] | None = None) -> str:
        return await self._call(self.session.diff, path)

    async def apply(self, paths: Sequence[str | os.PathLike[str]] | None = None) -> ApplyResult:
        return await self._call(self.session.apply, paths)

    async def discard(self) -> None:
        await self._call(self.session.discard)


async def _awaited(value: Awaitable[Choice]) -> Choice:
    return await value
