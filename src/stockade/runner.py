"""Run commands in a proven sandbox: spawn, stream or capture (bounded), timeout, signals.

``Sandbox`` is the operator-path API: resolve the policy once, prove a backend once, then run
many commands. ``run()`` is the one-shot convenience. Every result carries the posture the
command actually ran under. ``review=True`` runs every command on one copy-on-write layer over
the project (``review/workspace.py``): the project changes only when the changeset is applied.
"""

from __future__ import annotations

import collections
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, NamedTuple

from stockade.command_guards import CommandGuards
from stockade.errors import SandboxUnavailable, UsageError
from stockade.sandbox.backend import Backend, Jail, Stdio
from stockade.sandbox.identity import JailUser
from stockade.sandbox.limits import (
    CgroupRecipe,
    CgroupSupport,
    Limits,
    RunLimits,
    describe,
    detect_cgroups,
    explain_exit,
    sweep_stale,
)
from stockade.sandbox.policy import NetworkMode, PolicyRequest, SandboxPolicy, resolve_policy
from stockade.sandbox.posture import Posture
from stockade.sandbox.select import note_backend, select_backend
from stockade.sandbox.session_dir import SessionDir
from stockade.spills import SpillDir, SpillFile, human_size

if TYPE_CHECKING:  # imported lazily: only allowlist mode needs the proxy
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import AbstractContextManager

    from stockade.background import RunningCommand
    from stockade.net.domains import DomainPolicy
    from stockade.net.proxy import AllowListProxy, ProxyEvent
    from stockade.permissions.ledger import Ledger
    from stockade.review.workspace import ReviewWorkspace
    from stockade.sandbox.denials import Denial, StderrTee
    from stockade.sandbox.guard import Finding, RunGuard
    from stockade.sandbox.warm import WarmPool

TIMEOUT_EXIT_CODE = 124
TERMINATE_GRACE_SECONDS = 2.0
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class RunResult(NamedTuple):
    """What happened: exit code (128+N for signal N, 124 on timeout), bounded output, posture."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    posture: Posture
    duration: float
    timed_out: bool = False
    truncated: bool = False
    stdout_path: Path | None = None
    stderr_path: Path | None = None
    limit_message: str | None = None  # which limit ended the run, if one did
    spill_cap_bytes: int | None = None  # set when output spilled: each spill file's cap
    backend_change: str | None = None  # this project's last run used another backend
    denials: tuple[Denial, ...] = ()  # what the sandbox denied, explained (path, why, remedy)
    guard: tuple[Finding, ...] = ()  # planted code moved aside or restored after the run
    warm: bool = False  # it ran in a warm jail (``sandbox/warm.py``), not a fresh one
    cold_reason: str | None = None  # why a fresh jail although warm jails are on (review...)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def notices(self) -> tuple[str, ...]:
        """stockade's own lines about this run (also at the end of ``stderr``)."""
        return (*(d.line() for d in self.denials), *(f.line() for f in self.guard))


class LaunchPath(NamedTuple):
    """How one command was started: in a warm jail, or in a fresh one (and why, when warm
    jails were on)."""

    warm: bool
    cold_reason: str | None = None


class BoundedOutput:
    """Keeps the first and last ``limit/2`` bytes of a stream; once the stream exceeds
    ``limit`` everything is also written to a spill file (``spills.py``: a fresh private dir,
    never followed through a symlink) up to ``spill_cap`` bytes."""

    def __init__(
        self, limit: int, spills: SpillDir, name: str, spill_cap: int | None = None
    ) -> None:
        self.limit = limit
        self.total = 0
        self._spills = spills
        self._name = name
        self._spill_cap = spill_cap
        self._head = bytearray()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0
        self._spill: SpillFile | None = None

    def write(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._spill is None and self.total <= self.limit:
            self._head += chunk
            return
        if self._spill is None:
            self._spill = self._spills.open(self._name, self._spill_cap)
            everything = bytes(self._head) + chunk
            self._spill.write(everything)
            half = self.limit // 2
            self._head = bytearray(everything[:half])
            self._push_tail(everything[half:])
            return
        self._spill.write(chunk)
        self._push_tail(chunk)

    def _push_tail(self, chunk: bytes) -> None:
        keep = self.limit - self.limit // 2
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail and self._tail_size - len(self._tail[0]) >= keep:
            self._tail_size -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        return self._spill is not None

    @property
    def spill_path(self) -> Path | None:
        return self._spill.path if self._spill is not None else None

    def finish(self) -> str:
        if self._spill is None:
            return self._head.decode("utf-8", errors="replace")
        self._spill.close()
        keep = self.limit - self.limit // 2
        tail = b"".join(self._tail)[-keep:] if keep else b""
        omitted = self.total - len(self._head) - len(tail)
        if self._spill.capped:
            assert self._spill.cap is not None
            saved = (
                f"the first {human_size(self._spill.cap)} in {self._spill.path} (spill files "
                f"are capped at {human_size(self._spill.cap)}; {self._spill.dropped} bytes "
                "dropped)"
            )
        else:
            saved = f"full output in {self._spill.path}"
        marker = f"\n[stockade: output truncated - {omitted} bytes omitted; {saved}]\n"
        return (bytes(self._head) + marker.encode() + tail).decode("utf-8", errors="replace")


class Sandbox:
    """A resolved, proven sandbox for one project. Use as a context manager; ``close()``
    removes the session's private temp dir."""

    def __init__(
        self,
        request: PolicyRequest,
        *,
        backend: str = "auto",
        limits: Limits | None = None,
        output_dir: Path | None = None,
        domain_policy: DomainPolicy | None = None,
        on_network_event: Callable[[ProxyEvent], None] | None = None,
        review: bool = False,
        warm: bool | None = None,
    ) -> None:
        """``warm``: run commands in a long-lived jail per policy (``sandbox/warm.py``);
        None follows ``STOCKADE_WARM`` (``0`` forces a fresh jail per command), else on."""
        self.limits = limits if limits is not None else Limits()
        self._warm: WarmPool | None = None
        self.domain_policy = domain_policy  # the operator's lists (the proxy uses them too)
        self._lock = threading.Lock()
        self._closed = False
        self._spawner: ThreadPoolExecutor | None = None
        self._started: list[RunningCommand] = []  # by start(), killed by close()
        self.session_dir = SessionDir.create()
        self.proxy: AllowListProxy | None = None
        self.review: ReviewWorkspace | None = None
        self.kept_changeset: str | None = None  # review: the changeset close() kept
        self._guards = CommandGuards(self.session_dir.root / "guard")
        self.ledger_session: str | None = None  # guard findings go into this ledger session
        self.ledger: Ledger | None = None  # ... of this ledger (None: the user's default)
        try:
            self._cgroups: CgroupSupport = detect_cgroups()
            sweep_stale(self._cgroups)
            self.policy: SandboxPolicy = resolve_policy(
                request, session_tmp=self.session_dir.tmp, session_root=self.session_dir.root
            )._replace(session_tmp_size=self.limits.tmp_size_bytes)
            if self.policy.network is NetworkMode.ALLOWLIST:
                self.proxy = _start_proxy(self.session_dir, domain_policy, on_network_event)
                address = self.proxy.tcp_address
                self.policy = self.policy._replace(
                    proxy_socket_dir=self.session_dir.root / "net",
                    proxy_port=address[1] if address else None,
                )
            selection = select_backend(backend, self.policy)
        except BaseException:
            self.close()
            raise
        self.backend: Backend = selection.backend
        self.posture: Posture = _with_limits(
            selection.posture, self.limits, self._cgroups, self.policy.jail_user
        )
        self._cgroup_recipe = _cgroup_recipe(self.limits, self._cgroups, self.posture)
        self.output_dir = output_dir or self.session_dir.output
        self._spill_dirs: dict[Path, SpillDir] = {}
        self._run_counter = 0
        self._notice_due = bool(self.posture.notice)  # said once per Sandbox
        self.backend_change = note_backend(self.policy.project, self.backend.name)
        if review:
            try:
                self.review, self.posture = _review_workspace(
                    self.backend, self.policy, self.posture
                )
            except BaseException:
                self.close()
                raise
        if self.posture.confined and warm_enabled(warm):
            self._warm = _warm_pool(self.backend)

    def _protection(
        self, policy: SandboxPolicy, argv: Sequence[str]
    ) -> AbstractContextManager[SandboxPolicy]:
        """The policy for one run, held for as long as it runs (with review, the layer
        attached)."""
        if self.review is not None:
            return self.review.command(policy, argv)
        return contextlib.nullcontext(policy)

    def still_serves(self, request: PolicyRequest) -> bool:
        """True when a Sandbox built now for ``request`` (with these limits and this
        backend) would enforce exactly this one's policy: the policy is resolved again from
        the filesystem as it is now (masks that appeared, changed symlinks...)."""
        if self._closed:
            return False
        fresh = resolve_policy(
            request, session_tmp=self.session_dir.tmp, session_root=self.session_dir.root
        )._replace(
            session_tmp_size=self.limits.tmp_size_bytes,
            proxy_socket_dir=self.policy.proxy_socket_dir,
            proxy_port=self.policy.proxy_port,
        )
        return _same_policy(fresh, self.policy)

    @property
    def warm(self) -> bool:
        """True when commands run in warm jails (see ``sandbox/warm.py``)."""
        return self._warm is not None

    def prewarm(self) -> None:
        """Start the warm jail for the Sandbox's own policy now, in the background, so the
        first command does not wait for it (no-op on the cold path and with review, whose
        commands run in fresh jails)."""
        if self._warm is not None and self.review is None:
            self._warm.prewarm(self.policy)

    def _spills(self) -> SpillDir:
        """The fresh private directory for this Sandbox's spills below ``output_dir``."""
        with self._lock:
            spills = self._spill_dirs.get(self.output_dir)
            if spills is None:
                spills = self._spill_dirs[self.output_dir] = SpillDir(self.output_dir)
            return spills

    @classmethod
    def for_project(
        cls,
        project: str | os.PathLike[str] | None = None,
        *,
        writable: Sequence[str | os.PathLike[str]] = (),
        network: str | NetworkMode = NetworkMode.DENY,
        cwd: str | os.PathLike[str] | None = None,
        env_passthrough: Sequence[str] = (),
        backend: str = "auto",
        limits: Limits | None = None,
        domain_policy: DomainPolicy | None = None,
        review: bool = False,
        warm: bool | None = None,
    ) -> Sandbox:
        """Keyword-friendly constructor; relative paths are taken relative to the cwd."""
        request = PolicyRequest(
            project=Path(os.path.abspath(os.path.expanduser(project or os.getcwd()))),
            cwd=Path(os.path.abspath(cwd)) if cwd else None,
            writable=tuple(Path(os.path.abspath(os.path.expanduser(p))) for p in writable),
            network=_network_mode(network),
            env_passthrough=tuple(env_passthrough),
        )
        return cls(
            request,
            backend=backend,
            limits=limits,
            domain_policy=domain_policy,
            review=review,
            warm=warm,
        )

    # -- running ---------------------------------------------------------------------------

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        input: bytes | None = None,
        stream: bool = False,
        forward_signals: bool = False,
    ) -> RunResult:
        """Run ``argv`` confined and wait for it.

        ``stream=True`` lets the command use this process's stdin/stdout/stderr directly (the
        CLI); otherwise output is captured, bounded per stream by the limits.
        ``timeout`` defaults to the limits' wall-clock limit.
        ``forward_signals`` (main thread only) relays SIGINT/SIGTERM/SIGHUP/SIGQUIT to the
        confined process group; a second Ctrl-C kills the whole tree.
        """
        if not argv:
            raise UsageError("no command given", fix="put the command after --")
        if timeout is not None and timeout <= 0:
            raise UsageError(f"timeout must be positive, got {timeout}", fix="pass seconds > 0")
        if timeout is None:
            timeout = self.limits.wall_timeout_s
        policy = self.policy if cwd is None else self.policy.with_cwd(Path(cwd))
        policy = policy.with_fresh_protection()
        started = time.monotonic()
        run_limits = RunLimits(self.limits, recipe=self._cgroup_recipe)
        notice = self._take_notice()
        tee = _stderr_tee(policy) if stream else None
        if tee is not None and notice:
            tee.note(notice)
        guard = self._begin_guard(policy, tee.note if tee is not None else None)
        try:
            with self._protection(policy, argv) as run_policy:
                code, timed_out, out, err, path = self._execute(
                    run_policy, argv, run_limits, timeout, input, stream, forward_signals, tee
                )
        finally:
            report = run_limits.finish()
            if tee is not None:
                tee.finish()
            findings = self._end_guard(guard, policy)
        stdout_text = out.finish() if out else ""
        stderr_text = err.finish() if err else ""
        denials: tuple[Denial, ...] = tuple(tee.explainer.denials) if tee is not None else ()
        if err is not None:
            from stockade.sandbox.denials import Explainer

            explainer = Explainer(policy)
            lines = explainer.explain_text(stderr_text)
            denials = tuple(explainer.denials)
            lines = ([notice] if notice else []) + lines + [f.line() for f in findings]
            stderr_text += "".join(f"{line}\n" for line in lines)
        return RunResult(
            argv=tuple(argv),
            exit_code=code,
            stdout=stdout_text,
            stderr=stderr_text,
            posture=self.posture,
            duration=time.monotonic() - started,
            timed_out=timed_out,
            truncated=bool(out and out.truncated) or bool(err and err.truncated),
            stdout_path=out.spill_path if out else None,
            stderr_path=err.spill_path if err else None,
            limit_message=explain_exit(
                code, self.limits, report, timed_out=timed_out, timeout_s=timeout
            )
            or _temp_dir_full(self.policy, code, stderr_text),
            spill_cap_bytes=self.limits.output_spill_bytes
            if (out and out.truncated) or (err and err.truncated)
            else None,
            backend_change=self.backend_change,
            denials=denials,
            guard=tuple(findings),
            warm=path.warm,
            cold_reason=path.cold_reason,
        )

    def run_relayed(
        self,
        argv: Sequence[str],
        relay: Callable[[IO[bytes], IO[bytes]], None],
        *,
        forward_signals: bool = False,
    ) -> RunResult:
        """Run ``argv`` confined with its stdin and stdout on pipes that ``relay`` serves
        (called with the command's stdin and stdout; it returns when relaying is done, e.g.
        at the command's EOF); stderr is this process's. No wall-clock limit applies: this
        is for long-lived programs whose stream stockade reads (``run --stdio --gate``)."""
        if not argv:
            raise UsageError("no command given", fix="put the command after --")
        started = time.monotonic()
        run_limits = RunLimits(self.limits, recipe=self._cgroup_recipe)
        try:
            with (
                self._protection(self.policy.with_fresh_protection(), argv) as policy,
                _forwarding(enabled=forward_signals) as signals,
            ):
                jail, _path = _launch(
                    self.backend,
                    self._warm,
                    policy,
                    argv,
                    run_limits,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
                signals.attach(jail)
                try:
                    assert jail.process.stdin is not None and jail.process.stdout is not None
                    relay(jail.process.stdin, jail.process.stdout)
                    returncode = jail.process.wait()
                    code = jail.exit_code(returncode)
                finally:
                    jail.close()
        finally:
            report = run_limits.finish()
        return RunResult(
            argv=tuple(argv),
            exit_code=code,
            stdout="",
            stderr="",
            posture=self.posture,
            duration=time.monotonic() - started,
            limit_message=explain_exit(code, self.limits, report, timed_out=False, timeout_s=None),
        )

    def _take_notice(self) -> str | None:
        """The backend's one-line notice (what Landlock does not enforce), once per Sandbox."""
        with self._lock:
            due, self._notice_due = self._notice_due, False
        return self.posture.notice if due else None

    # -- the guard around every command ----------------------------------------------------

    def _begin_guard(
        self, policy: SandboxPolicy, on_finding: Callable[[str], None] | None = None
    ) -> RunGuard | None:
        """Start the guard of one command (nothing to guard when it runs unconfined)."""
        if not self.posture.confined:
            return None
        return self._guards.begin(
            policy, mounted=self.posture.protected_read_only, on_finding=on_finding
        )

    def _end_guard(self, guard: RunGuard | None, policy: SandboxPolicy) -> list[Finding]:
        return self._guards.end(guard, policy, session=self.ledger_session, ledger=self.ledger)

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
    ) -> RunningCommand:
        """Start ``argv`` confined exactly like ``run()`` and return without waiting.

        Output is captured (read it with ``read_new()``); stdin is empty. There is no
        wall-clock limit unless ``timeout`` is given: a background command runs until it
        ends, is killed, or the Sandbox closes (which kills it).

        The spawn happens on a long-lived thread owned by the Sandbox: bwrap's
        ``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked it
        exits, so spawning from a short-lived worker thread would kill the command early.
        """
        if not argv:
            raise UsageError("no command given", fix="pass the command to start")
        if timeout is not None and timeout <= 0:
            raise UsageError(f"timeout must be positive, got {timeout}", fix="pass seconds > 0")
        policy = self.policy if cwd is None else self.policy.with_cwd(Path(cwd))
        with self._lock:
            if self._closed:
                raise UsageError("this sandbox is closed", fix="start commands before close()")
            if self._spawner is None:
                from concurrent.futures import ThreadPoolExecutor

                self._spawner = ThreadPoolExecutor(1, thread_name_prefix="stockade-spawner")
            spawner = self._spawner
            self._run_counter += 1
            number = self._run_counter
        command = spawner.submit(self._spawn_background, policy, tuple(argv), timeout, number)
        return command.result()

    def _spawn_background(
        self, policy: SandboxPolicy, argv: tuple[str, ...], timeout: float | None, number: int
    ) -> RunningCommand:
        from stockade.background import RunningCommand
        from stockade.sandbox.denials import Explainer

        run_limits = RunLimits(self.limits, recipe=self._cgroup_recipe)
        fresh = policy.with_fresh_protection()
        notice = self._take_notice()
        guard = self._begin_guard(fresh)
        lease = ExitStack()  # held until the command ends (with review: its layer)
        lease.callback(self._end_guard, guard, fresh)
        try:
            jail, _path = _launch(
                self.backend,
                self._warm,
                lease.enter_context(self._protection(fresh, argv)),
                argv,
                run_limits,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except BaseException:
            lease.close()
            run_limits.finish()
            raise
        stamp = time.strftime("%Y%m%d-%H%M%S")
        log_dir = self._spills().directory()
        command = RunningCommand(
            argv=argv,
            jail=jail,
            run_limits=run_limits,
            cleanup=lease.close,
            posture=self.posture,
            limits=self.limits,
            timeout=timeout,
            log_stem=log_dir / f"{stamp}-{number}-background",
            terminate=_terminate,
            explainer=Explainer(fresh),
        )
        if notice:
            command.note(notice)
        if guard is not None:
            guard.subscribe(lambda finding: command.note(finding.line()))
        with self._lock:
            closed = self._closed
            if not closed:
                self._started = [c for c in self._started if c.running]
                self._started.append(command)
        if closed:  # close() ran while this spawn was queued
            command.kill()
            raise UsageError("this sandbox is closed", fix="start commands before close()")
        return command

    def _execute(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        run_limits: RunLimits,
        timeout: float | None,
        input: bytes | None,
        stream: bool,
        forward_signals: bool,
        tee: StderrTee | None = None,
    ) -> tuple[int, bool, BoundedOutput | None, BoundedOutput | None, LaunchPath]:
        if stream:
            stderr = tee.command_end if tee is not None else None
            stdio: dict[str, int | None] = {"stdin": None, "stdout": None, "stderr": stderr}
        else:
            stdio = {
                "stdin": subprocess.PIPE if input is not None else subprocess.DEVNULL,
                "stdout": subprocess.PIPE,
                "stderr": subprocess.PIPE,
            }
        # Signal handlers go in before the spawn: a Ctrl-C right after the command started
        # (it may already have printed) is held and delivered once the jail exists.
        with _forwarding(enabled=forward_signals) as relay:
            jail, path = _launch(self.backend, self._warm, policy, argv, run_limits, **stdio)
            relay.attach(jail)
            if tee is not None:
                tee.start()
            out: BoundedOutput | None = None
            err: BoundedOutput | None = None
            try:
                if stream:
                    timed_out = _wait(jail, timeout)
                else:
                    out, err, timed_out = self._capture(jail, timeout, input)
                returncode = jail.process.wait()
                code = TIMEOUT_EXIT_CODE if timed_out else jail.exit_code(returncode)
            except SandboxUnavailable as error:
                from stockade.sandbox.probe import forget

                forget()
                detail = err.finish().strip().splitlines() if err else []
                if detail:  # captured: bwrap's own message is the useful part
                    raise SandboxUnavailable(
                        f"{error.message.split(';')[0]}: {detail[-1]}", fix=error.fix
                    ) from None
                raise
            finally:
                jail.close()
        return code, timed_out, out, err, path

    def _capture(
        self, jail: Jail, timeout: float | None, input: bytes | None
    ) -> tuple[BoundedOutput, BoundedOutput, bool]:
        with self._lock:
            self._run_counter += 1
            number = self._run_counter
        stamp = time.strftime("%Y%m%d-%H%M%S")
        limit, cap = self.limits.output_bytes_per_stream, self.limits.output_spill_bytes
        spills = self._spills()
        out = BoundedOutput(limit, spills, f"{stamp}-{number}.stdout", cap)
        err = BoundedOutput(limit, spills, f"{stamp}-{number}.stderr", cap)
        return out, err, _drain(jail, out, err, timeout, input)

    def close(self) -> None:
        """Kill the commands still running from ``start()``, stop the proxy, remove the
        session's private directory. Safe to call twice."""
        with self._lock:
            self._closed = True
            started, self._started = self._started, []
            spawner, self._spawner = self._spawner, None
        for command in started:
            command.kill()
        if spawner is not None:
            spawner.shutdown(wait=True)
        warm, self._warm = getattr(self, "_warm", None), None
        if warm is not None:
            warm.close()
        self._guards.close()
        if self.proxy is not None:
            self.proxy.stop()
            self.proxy = None
        if self.review is not None:
            review, self.review = self.review, None
            self.kept_changeset = review.close()
        for spills in getattr(self, "_spill_dirs", {}).values():
            spills.close()
        self.session_dir.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def run(
    argv: Sequence[str],
    *,
    project: str | os.PathLike[str] | None = None,
    writable: Sequence[str | os.PathLike[str]] = (),
    network: str | NetworkMode = NetworkMode.DENY,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    input: bytes | None = None,
    backend: str = "auto",
    limits: Limits | None = None,
) -> RunResult:
    """Run one command confined to ``project`` (default: the current directory), in a fresh
    jail (a warm one pays off from the second command: use a ``Sandbox`` for many)."""
    with Sandbox.for_project(
        project, writable=writable, network=network, cwd=cwd, backend=backend, limits=limits,
        warm=False,
    ) as sandbox:  # fmt: skip
        sandbox.output_dir = _persistent_output_dir()
        return sandbox.run(argv, timeout=timeout, input=input)


WARM_SWITCH = "STOCKADE_WARM"  # "0"/"false"/"no"/"off": every command in a fresh jail


def warm_enabled(setting: bool | None = None) -> bool:
    """Whether a Sandbox uses warm jails: ``STOCKADE_WARM`` wins (``0`` forces the cold
    path, ``1`` the warm one), then ``setting`` (``[sandbox] warm``), else on."""
    value = os.environ.get(WARM_SWITCH, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return True if setting is None else setting


def _warm_pool(backend: Backend) -> WarmPool | None:
    """The warm jails of a backend that has them (bwrap, landlock), else None."""
    from stockade.sandbox.warm import WarmPool

    if backend.name == "bwrap":
        from stockade.sandbox import warm_bwrap
        from stockade.sandbox.bwrap import BwrapBackend

        assert isinstance(backend, BwrapBackend)
        return WarmPool(warm_bwrap.Starter(backend))
    if backend.name == "landlock":
        from stockade.sandbox import warm_landlock

        return WarmPool(warm_landlock.Starter())
    return None


def _with_limits(
    posture: Posture, limits: Limits, cgroups: CgroupSupport, jail_user: JailUser | None
) -> Posture:
    """Add what the limits enforce on this machine (and what they cannot) to a posture."""
    if not posture.confined:
        return posture
    # a root launcher's bwrap command runs as the jail user, which rlimits do apply to
    euid = jail_user.uid if jail_user is not None and posture.backend == "bwrap" else None
    described = describe(limits, cgroups, euid=euid, can_cap_tmp=posture.backend == "bwrap")
    return posture._replace(
        limits=described.enforced, gaps=(*posture.gaps, *described.not_enforced)
    )


def _persistent_output_dir() -> Path:
    """One-shot runs outlive their session dir, so spilled output goes to the cache dir."""
    from stockade.userdirs import cache_dir

    return cache_dir() / "output"


def _network_mode(value: str | NetworkMode) -> NetworkMode:
    return value if isinstance(value, NetworkMode) else NetworkMode.parse(value)


def _drain(
    jail: Jail, out: BoundedOutput, err: BoundedOutput, timeout: float | None, input: bytes | None
) -> bool:
    """Feed ``input``, read the command's stdout and stderr into ``out`` and ``err`` until
    both close, terminating its tree at ``timeout``; True when it timed out."""
    process = jail.process
    if process.stdin is not None:
        _feed_stdin(process.stdin, input or b"")
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    with selectors.DefaultSelector() as selector:
        for pipe, sink in ((process.stdout, out), (process.stderr, err)):
            if pipe is not None:
                selector.register(pipe, selectors.EVENT_READ, sink)
        while selector.get_map():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                timed_out = True
                _terminate(jail)
                deadline = None  # keep draining what the dying tree still writes
                continue
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    key.data.write(chunk)
                else:
                    selector.unregister(key.fileobj)
                    key.fileobj.close()  # type: ignore[union-attr]
    if deadline is not None:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            process.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            timed_out = True
            _terminate(jail)
    return timed_out


def _start_proxy(
    session_dir: SessionDir,
    domain_policy: DomainPolicy | None,
    on_event: Callable[[ProxyEvent], None] | None,
) -> AllowListProxy:
    """The allow-list proxy of one Sandbox: a hand-off socket for the relays of bwrap jails
    (its directory is bound in) and a loopback TCP port (for backends without a network
    namespace). It lives as long as the Sandbox; when it is gone, jailed connections fail
    (closed, never open)."""
    from stockade.net.domains import DomainPolicy
    from stockade.net.jail import SOCKET_NAME
    from stockade.net.proxy import AllowListProxy

    socket_dir = session_dir.root / "net"
    socket_dir.mkdir(mode=0o700)
    return AllowListProxy(
        domain_policy if domain_policy is not None else DomainPolicy(),
        handoff_path=socket_dir / SOCKET_NAME,  # where the jail's relay hands connections
        tcp_port=0,
        on_event=on_event,
    ).start()


def _launch(
    backend: Backend,
    pool: WarmPool | None,
    policy: SandboxPolicy,
    argv: Sequence[str],
    run_limits: RunLimits,
    *,
    stdin: Stdio = None,
    stdout: Stdio = None,
    stderr: Stdio = None,
) -> tuple[Jail, LaunchPath]:
    """Start ``argv`` under ``policy`` (protection looked up, review layer attached) in a
    warm jail of ``pool``, or in a fresh one when there is no pool or it cannot serve the
    command (the reason is in the LaunchPath). The guard and the denial explanations
    around it are the caller's, the same for both paths."""
    reason = None
    if pool is not None:
        from stockade.sandbox.warm import ColdOnly

        try:
            command = pool.spawn(
                policy, argv, stdin=stdin, stdout=stdout, stderr=stderr, limits=run_limits
            )
            return command, LaunchPath(warm=True)
        except ColdOnly as cold:
            reason = str(cold)  # this command cannot be served warm: a fresh jail
    jail = backend.spawn(policy, argv, stdin=stdin, stdout=stdout, stderr=stderr, limits=run_limits)
    return jail, LaunchPath(warm=False, cold_reason=reason)


def _same_policy(fresh: SandboxPolicy, current: SandboxPolicy) -> bool:
    """``fresh`` (resolved again just now) enforces exactly ``current``: equal but for the
    names of the per-session substitute copies, whose contents must be equal. The copies
    ``fresh`` made are removed."""
    try:
        if fresh._replace(substitutes=()) != current._replace(substitutes=()):
            return False
        return [(host, copy.read_bytes()) for host, copy in fresh.substitutes] == [
            (host, copy.read_bytes()) for host, copy in current.substitutes
        ]
    except OSError:
        return False
    finally:
        for _host, copy in fresh.substitutes:
            copy.unlink(missing_ok=True)


def _cgroup_recipe(limits: Limits, cgroups: CgroupSupport, posture: Posture) -> CgroupRecipe | None:
    """How each run gets its cgroup, when one can enforce a configured memory or process cap."""
    wanted = (limits.memory_max_bytes is not None and cgroups.enforces("memory")) or (
        limits.pids_max is not None and cgroups.enforces("pids")
    )
    if not wanted:
        return None
    return CgroupRecipe(limits, cgroups, not posture.pid_namespace)


def _review_workspace(
    backend: Backend, policy: SandboxPolicy, posture: Posture
) -> tuple[ReviewWorkspace, Posture]:
    """Every command on one copy-on-write layer; refused (never a write-through) where the
    backend cannot attach one."""
    from stockade.review.workspace import ReviewWorkspace
    from stockade.sandbox.overlay import LayerUnavailable

    if not getattr(backend, "supports_review", False):
        raise LayerUnavailable(
            f"--review needs a mount namespace for its copy-on-write layer, which the "
            f"{backend.name} backend does not have: its writes would go straight into the "
            "project",
            fix="use the bwrap backend (--backend bwrap), or run without --review",
        )
    review = ReviewWorkspace(policy, backend=backend.name, posture=posture.summary())
    return review, posture._replace(
        filesystem=posture.filesystem + "; the project's changes go to a review layer"
    )


def _stderr_tee(policy: SandboxPolicy) -> StderrTee:
    from stockade.sandbox.denials import Explainer, StderrTee

    return StderrTee(Explainer(policy))


def _temp_dir_full(policy: SandboxPolicy, code: int, stderr: str) -> str | None:
    """Name the cap when a failing command ran out of space (most likely in TMPDIR)."""
    size = policy.session_tmp_size
    if code == 0 or size is None or "No space left on device" not in stderr:
        return None
    return (
        f"no space left: the session temp dir is capped at {size // (1 << 20)} MiB per "
        "command (limits.tmp_size_bytes)"
    )


def _feed_stdin(pipe: IO[bytes], data: bytes) -> None:
    """Write stdin from a thread so a command that does not read it cannot deadlock us."""

    def feed() -> None:
        try:
            pipe.write(data)
        except (BrokenPipeError, OSError):
            pass
        finally:
            with suppress(OSError):
                pipe.close()

    threading.Thread(target=feed, name="stockade-stdin", daemon=True).start()


def _wait(jail: Jail, timeout: float | None) -> bool:
    """Wait for a streaming command; True when it had to be killed for the timeout."""
    try:
        jail.process.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        _terminate(jail)
        return True


def _terminate(jail: Jail) -> None:
    """SIGTERM the confined group, give it a moment, then kill the whole tree."""
    jail.signal_command(signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        jail.process.wait(timeout=TERMINATE_GRACE_SECONDS)
    jail.kill_all()


class _Relay:
    """Terminal signals for the confined process group; held until the jail exists."""

    def __init__(self) -> None:
        self.jail: Jail | None = None
        self.received: list[int] = []

    def attach(self, jail: Jail) -> None:
        self.jail = jail
        for signum in self.received:
            jail.signal_command(signum)

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.jail is not None and signum == signal.SIGINT and signal.SIGINT in self.received:
            self.jail.kill_all()  # second Ctrl-C: stop everything now
        self.received.append(signum)
        if self.jail is not None:
            self.jail.signal_command(signum)


@contextmanager
def _forwarding(*, enabled: bool) -> Iterator[_Relay]:
    """Relay terminal signals to the confined process group while the command runs."""
    relay = _Relay()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield relay
        return
    previous: Mapping[int, object] = {s: signal.signal(s, relay) for s in FORWARDED_SIGNALS}
    try:
        yield relay
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
