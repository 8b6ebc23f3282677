"""The proxy's questions about hosts no rule covers, put to the policy's ``ask`` hook.

The hook may block (a person answers it), so it runs on one worker thread, one question at a
time, while the connection waits on the proxy's loop and other connections are served.
Connections to a host that is being asked about share that question. A hook that answers with
a ``Decision`` is asked again for every such connection (it keeps its own memory: once /
session / project); a plain ``bool`` answer is remembered here for that host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from dataclasses import dataclass

from stockade.net.domains import Decision, DomainPolicy

log = logging.getLogger("stockade.net.proxy")

MAX_REMEMBERED_ANSWERS = 4096  # bool answers of a plain ask hook kept per proxy (memory bound)


@dataclass(frozen=True)
class _Question:
    """One question for the ask hook, answered on the worker thread."""

    policy: DomainPolicy
    decision: Decision
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[object]


class HostQuestions:
    """Asks about one host at a time and remembers plain answers; used from the loop thread."""

    def __init__(self) -> None:
        self._answers: dict[str, bool] = {}  # plain-bool hooks only (see the module docstring)
        self._pending: dict[str, asyncio.Future[object]] = {}  # host -> its open question
        self._questions: queue.SimpleQueue[_Question | None] | None = None

    async def ask(self, policy: DomainPolicy, decision: Decision) -> Decision:
        """Put a host no rule covers to the ask hook, off the loop, one question at a time
        (a person answers one at a time, and the next connection to the same host then finds
        the answer). The connection waits meanwhile; other connections are served."""
        host = decision.host
        if host in self._answers:
            return policy.apply_answer(decision, self._answers[host])
        future = self._pending.get(host)
        if future is None:  # connections to a host being asked about share that question
            loop = asyncio.get_running_loop()
            future = self._pending[host] = loop.create_future()
            future.add_done_callback(lambda _done: self._pending.pop(host, None))
            self._queue().put(_Question(policy, decision, loop, future))
        answer = await asyncio.shield(future)
        if isinstance(answer, Decision):
            return policy.apply_answer(decision, answer)
        if isinstance(answer, bool) and len(self._answers) < MAX_REMEMBERED_ANSWERS:
            self._answers[host] = answer
        if host in self._answers:
            return policy.apply_answer(decision, self._answers[host])
        return policy.apply_answer(decision, answer if isinstance(answer, bool) else None)

    def stop(self) -> None:
        """Let the worker thread end once it has answered what it is asking now."""
        if self._questions is not None:
            self._questions.put(None)
            self._questions = None

    def _queue(self) -> queue.SimpleQueue[_Question | None]:
        if self._questions is None:
            self._questions = queue.SimpleQueue()
            threading.Thread(
                target=_ask_worker, args=(self._questions,), name="stockade-proxy-ask",
                daemon=True,  # a question nobody answers must not keep the process alive
            ).start()  # fmt: skip
        return self._questions


def _ask_worker(questions: queue.SimpleQueue[_Question | None]) -> None:
    """Answer questions in order until told to stop (None). A hook that fails answers None:
    nobody said yes, so the host stays refused."""
    while (question := questions.get()) is not None:
        hook = question.policy.ask
        try:
            answer: object = hook(question.decision.host, question.decision.port) if hook else None
        except Exception:
            log.exception("stockade proxy: the ask hook failed; %s refused", question.decision.host)
            answer = None
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            question.loop.call_soon_threadsafe(_settle_future, question.future, answer)


def _settle_future(future: asyncio.Future[object], answer: object) -> None:
    if not future.done():
        future.set_result(answer)
