"""What ``stockade run`` does once its arguments are parsed (by click or by the fast path in
``cli/flags.py``): settings, a proven sandbox, the confined command, the ledger entry.
No click here: messages go straight to stderr."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext, redirect_stdout
from typing import Any

from stockade.cli.sandbox_setup import ignored_notice, sandbox_for, settings_from_options


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def operator_run(
    command: Sequence[str], *, timeout: float | None, stdio: bool, options: dict[str, Any]
) -> int:
    """Run ``command`` confined and return its exit code (124 on timeout); with ``--review``,
    report the changeset its changes went to."""
    review = bool(options.pop("review", False))
    settings = settings_from_options(options)
    notice = ignored_notice(settings)
    if notice:
        say(notice)
    # Under --stdio, stdout belongs to COMMAND: anything stockade itself prints goes to stderr.
    guard = redirect_stdout(sys.stderr) if stdio else nullcontext()
    with guard, sandbox_for(settings, review=review) as sandbox:
        if stdio:  # even a configured [sandbox.limits] wall_timeout_s
            sandbox.limits = sandbox.limits._replace(wall_timeout_s=None)
        if not sandbox.posture.confined:
            say("stockade: WARNING running UNCONFINED - " + "; ".join(sandbox.posture.gaps))
        if sandbox.backend_change:
            say(f"stockade: {sandbox.backend_change}")
        record = _record_bypass(command, sandbox)
        result = sandbox.run(list(command), timeout=timeout, stream=True, forward_signals=True)
    record(result.exit_code, result.duration)
    if result.timed_out:
        seconds = timeout if timeout is not None else sandbox.limits.wall_timeout_s or 0
        say(f"stockade: timed out after {seconds:g}s; the confined process tree was killed")
    if review:
        from stockade.review.report import report_kept

        say(report_kept(sandbox.kept_changeset))
    return result.exit_code


def _record_bypass(command: Sequence[str], sandbox: Any) -> Callable[[int, float], None]:
    """Ledger entry for the operator path (decision ``bypassed``), written on a thread while the
    command starts (importing sqlite3 and opening the ledger would otherwise add to every
    run); ``finish`` waits for it. A ledger failure warns and never stops the operator's run."""
    project, posture = str(sandbox.policy.project), sandbox.posture.summary()
    outcome: dict[str, Any] = {}

    def record() -> None:
        from stockade.errors import StockadeError
        from stockade.permissions.ledger import record_operator_run

        try:
            outcome["entry"] = record_operator_run(tuple(command), project=project, posture=posture)
        except StockadeError as error:
            outcome["error"] = error

    writer = threading.Thread(target=record, name="stockade-ledger", daemon=True)
    writer.start()

    def finish(exit_code: int, duration: float) -> None:
        from stockade.errors import StockadeError

        writer.join()
        if "error" in outcome:
            say(f"stockade: warning: not recorded in the ledger: {outcome['error']}")
            return
        ledger, entry_id = outcome["entry"]
        try:
            ledger.finish(entry_id, exit_code=exit_code, duration=duration)
        except StockadeError as error:
            say(f"stockade: warning: ledger: {error}")

    return finish
