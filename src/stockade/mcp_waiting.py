"""Questions that arise while an MCP tool call runs, on a 2026-07-28+ connection.

On those connections a server cannot send a request to the client in the middle of a call:
a question travels as an ``InputRequiredResult`` and the client *retries* the call with the
answer. That works for the gate's question before a command runs (nothing has happened yet,
the retry simply starts over). A command that is already running - whose connection to a host
no list covers is waiting for the person - must not start over, so such a call is *parked*:

1. the tool call starts the command as a task and waits for it to end *or* for a question;
2. a question ends this round with an ``InputRequiredResult`` carrying the question and a
   ``request_state`` token; the command keeps running, its connection keeps waiting;
3. the client's retry brings the answer and the token: the answer is handed to the waiting
   connection, and the call waits again (for the end, or the next question).

A question nobody answers within ``ANSWER_TIMEOUT_S`` is a refusal (the connection is refused,
the command goes on). A parked call whose retry never comes is forgotten ``FORGET_AFTER_S``
after its command ended. (On older connections questions are sent mid-call and none of this
is needed.)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from mcp_types import ElicitRequest, InputRequiredResult

from stockade.permissions.prompt import Choice, PromptRequest

ANSWER_TIMEOUT_S = 300.0  # how long a waiting connection waits for the person
FORGET_AFTER_S = 600.0  # a parked call whose retry never came (the request_state lifetime)

T = TypeVar("T")

Ask = Callable[[PromptRequest], tuple[str, ElicitRequest, Sequence[Choice]]]
"""Turn a prompt request into (question key, the elicitation, the answers it offers)."""
Read = Callable[[object, Sequence[Choice]], Choice]
"""Turn the client's response into one of the offered answers (anything else: deny)."""


@dataclass
class _Question:
    key: str
    request: ElicitRequest
    offered: Sequence[Choice]
    answer: concurrent.futures.Future[Choice] = field(default_factory=concurrent.futures.Future)


@dataclass
class _Parked(Generic[T]):
    task: asyncio.Future[T]
    questions: asyncio.Queue[_Question]
    open: _Question | None = None


class WaitingCalls:
    """The parked tool calls of one server (see the module docstring)."""

    def __init__(self, ask: Ask, read: Read) -> None:
        self._ask = ask
        self._read = read
        self._parked: dict[str, _Parked[Any]] = {}

    async def run(
        self, start: Callable[[Callable[[PromptRequest], Choice]], Awaitable[T]]
    ) -> T | InputRequiredResult:
        """Start a call; ``start`` gets the blocking prompt its running command asks with."""
        loop = asyncio.get_running_loop()
        questions: asyncio.Queue[_Question] = asyncio.Queue()

        def ask_while_running(request: PromptRequest) -> Choice:  # called off the loop
            key, elicit, offered = self._ask(request)
            question = _Question(key, elicit, offered)
            loop.call_soon_threadsafe(questions.put_nowait, question)
            try:
                return question.answer.result(timeout=ANSWER_TIMEOUT_S)
            except concurrent.futures.TimeoutError:
                return Choice.DENY_ONCE

        task = asyncio.ensure_future(start(ask_while_running))
        return await self._wait(_Parked(task, questions))

    async def resume(
        self, state: str | None, responses: dict[str, Any] | None
    ) -> Any | InputRequiredResult | None:
        """A retried call: answer its open question and wait again; None if it is not one
        of ours (a fresh call)."""
        parked = self._parked.pop(state, None) if state else None
        if parked is None:
            return None
        question = parked.open
        if question is not None and not question.answer.done():
            response = (responses or {}).get(question.key)
            question.answer.set_result(self._read(response, question.offered))
        parked.open = None
        return await self._wait(parked)

    async def _wait(self, parked: _Parked[T]) -> T | InputRequiredResult:
        next_question = asyncio.ensure_future(parked.questions.get())
        either: set[asyncio.Future[Any]] = {parked.task, next_question}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not next_question.done():
                next_question.cancel()
        if not next_question.cancelled() and next_question.done():
            question = next_question.result()
            parked.open = question
            token = secrets.token_urlsafe(18)
            self._parked[token] = parked
            parked.task.add_done_callback(lambda _task: self._forget_later(token))
            return InputRequiredResult(
                input_requests={question.key: question.request}, request_state=token
            )
        return parked.task.result()

    def _forget_later(self, token: str) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing: nothing to forget
            asyncio.get_running_loop().call_later(
                FORGET_AFTER_S, lambda: self._parked.pop(token, None)
            )
