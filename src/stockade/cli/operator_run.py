"""What ``stockade run`` does once its arguments are parsed (by click or by the fast path in
``cli/flags.py``): settings, a proven sandbox, the confined command, the ledger entry.
No click here: messages go straight to stderr."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext, redirect_stdout
from typing import Any

from stockade.cli.sandbox_setup import ignored_notice, sandbox_for, settings_from_options


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def operator_run(
    command: Sequence[str],
    *,
    timeout: float | None,
    stdio: bool,
    options: dict[str, Any],
    sandboxes: Any = None,
) -> int:
    """Run ``command`` confined and return its exit code (124 on timeout).

    ``options["as_json"]``: capture instead of streaming and print one JSON object;
    ``options["gate"]`` (with ``stdio``): relay an MCP server's stdio through the gate;
    ``options["review"]``: the project's changes go to a changeset, reported at the end.
    ``sandboxes`` (the run helper's ``SandboxCache``) supplies a warm Sandbox that a fresh
    one would equal, instead of building one for this command and closing it after (never
    with review: its changeset belongs to this one command line)."""
    review = bool(options.pop("review", False))
    if options.get("gate"):
        from stockade.cli.gate_options import settings_with_autonomy
        from stockade.mcp_gate import serve_gated

        return serve_gated(command, settings_with_autonomy(options), options)
    as_json = bool(options.get("as_json"))
    settings = settings_from_options(options)
    notice = ignored_notice(settings)
    if notice:
        say(notice)
    # Under --stdio, stdout belongs to COMMAND: anything stockade itself prints goes to stderr.
    built = (
        sandbox_for(settings, review=review)
        if sandboxes is None or review
        else nullcontext(sandboxes.sandbox_for(settings))
    )
    guard = redirect_stdout(sys.stderr) if stdio else nullcontext()
    with guard, built as sandbox:
        if stdio:  # even a configured [sandbox.limits] wall_timeout_s
            sandbox.limits = sandbox.limits._replace(wall_timeout_s=None)
        if not sandbox.posture.confined:
            say("stockade: WARNING running UNCONFINED - " + "; ".join(sandbox.posture.gaps))
        if sandbox.backend_change:
            say(f"stockade: {sandbox.backend_change}")
        record = _record_bypass(command, sandbox)
        result = sandbox.run(
            list(command), timeout=timeout, stream=not as_json, forward_signals=True
        )
    record(result.exit_code, result.duration)
    if result.timed_out:
        seconds = timeout if timeout is not None else sandbox.limits.wall_timeout_s or 0
        say(f"stockade: timed out after {seconds:g}s; the confined process tree was killed")
    if as_json:
        print(json.dumps(run_result_dict(result), indent=2), flush=True)
    if review:
        from stockade.review.report import report_kept

        say(report_kept(sandbox.kept_changeset))
    return result.exit_code


def run_result_dict(result: Any) -> dict[str, Any]:
    """A RunResult as ``--json`` prints it (``run`` and ``exec``)."""
    return {
        "argv": list(result.argv),
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "truncated": result.truncated,
        "stdout_path": str(result.stdout_path) if result.stdout_path else None,
        "stderr_path": str(result.stderr_path) if result.stderr_path else None,
        "duration": result.duration,
        "timed_out": result.timed_out,
        "limit_message": result.limit_message,
        "posture": result.posture.to_dict(),
    }


def _record_bypass(command: Sequence[str], sandbox: Any) -> Callable[[int, float], None]:
    """Ledger entry for the operator path (decision ``bypassed``), written on a thread while the
    command starts (importing sqlite3 and opening the ledger would otherwise add to every
    run); ``finish`` waits for it. A ledger failure warns and never stops the operator's run."""
    project, posture = str(sandbox.policy.project), sandbox.posture.summary()
    outcome: dict[str, Any] = {}

    def record() -> None:
        from stockade.permissions.ledger import record_operator_run

        try:
            outcome["entry"] = record_operator_run(tuple(command), project=project, posture=posture)
        except Exception as error:  # the ledger never stops or garbles a run
            outcome["error"] = error

    writer = threading.Thread(target=record, name="stockade-ledger", daemon=True)
    writer.start()

    def finish(exit_code: int, duration: float) -> None:
        writer.join()
        if "entry" not in outcome:
            say(f"stockade: warning: not recorded in the ledger: {_described(outcome['error'])}")
            return
        ledger, entry_id = outcome["entry"]
        try:
            ledger.finish(entry_id, exit_code=exit_code, duration=duration)
        except Exception as error:  # (idem)
            say(f"stockade: warning: ledger: {_described(error)}")

    return finish


def _described(error: BaseException) -> str:
    from stockade.errors import StockadeError

    if isinstance(error, StockadeError):
        return str(error)
    return f"{type(error).__name__}: {error}"
