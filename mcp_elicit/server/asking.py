"""Questions a handler waits for in place: on a 2025-11-25 session (a server-to-client
request on the request's stream) and in a task (an input request the client answers with
``tasks/update``). The discipline is the same; only how one question travels differs.

Rules: questions asked together are asked together (one waits per question); when one
of them fails the handler, the others are given up and its error is raised as it would
be for that question alone (a ``ToolError``, not an exception group). An answer
that does not fit is asked again once, with the reason leading the message; a second bad
answer, an error from the client, or no answer within ``timeout`` counts as ``cancel``
for an elicitation and fails the handler (``ToolError``) for sampling or roots. An
elicitation's answer is personal data: the info log names the fields at fault, and only
the debug log says what was wrong with them (the message quotes what was typed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp_elicit.core.mrtr import ELICIT, Ask, check_answer
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import (
    FormSchemaError,
    InvalidAnswer,
    InvalidParams,
    ProtocolError,
    ReplayMismatchError,
    ToolError,
)

__all__ = [
    "EXCHANGE_ERRORS",
    "ClientNotReady",
    "InPlaceAsker",
    "Refused",
    "answer_within",
    "as_own",
    "awaited_as_own",
    "exchange_error",
    "give_up",
    "raise_as_own",
    "raise_exchange_error",
]

log = logging.getLogger("mcp_elicit.server")
#: The waits of ``InPlaceAsker.pause``: the default client's before a state-only retry.
_PAUSES = RoundLimits()
T = TypeVar("T")


async def answer_within(future: asyncio.Future[T], timeout: float) -> T:
    """The answer ``future`` holds, waited for ``timeout`` seconds at most (``TimeoutError``).
    A cancellation that comes in the same turn as the answer wins: the waiting handler is
    cancelled (``asyncio.wait_for`` on Python 3.11 would return the answer and drop it)."""
    async with asyncio.timeout(timeout):
        return await future


class Refused(Exception):
    """The client answered a question with an error; the message says so."""


class ClientNotReady(TimeoutError):
    """A question was never sent: the client did not get ready for it in time (a
    2025-11-25 session's ``notifications/initialized``); the message says so. The
    client's fault, so a warning, logged once, by the asker (``give_up``)."""


class InPlaceAsker:
    """The shared half of an asker whose handler waits for its answers in place.
    Subclasses send one question: ``_prepare`` once per question, ``_exchange`` per try
    (raising ``TimeoutError`` or ``Refused``)."""

    timeout: float
    #: Values kept for the rest of this request (it runs once, in place).
    memo: dict[str, Any]

    #: ``pause`` calls so far in this request (it runs once, in place).
    pauses: int = 0

    async def pause(self) -> None:
        """Wait in place as long as a 2026-07-28 client waits before it retries a round that
        asks nothing (our client's default backoff: 0, 0.1, 0.25, 0.5, then 1 s each), so a
        handler looping ``while not done(): await ctx.pause()`` paces itself alike on both
        revisions and lets the rest of the server run between its checks."""
        self.pauses += 1
        await asyncio.sleep(_PAUSES.delay(self.pauses))

    def answered(self, asks: list[Ask]) -> list[Any] | None:
        """None: every answer is waited for (``ask``)."""
        return None

    async def ask(self, asks: list[Ask]) -> list[Any]:
        if len(asks) == 1:
            return [await self._one(asks[0])]
        try:
            async with asyncio.TaskGroup() as group:
                jobs = [group.create_task(self._one(ask)) for ask in asks]
        except BaseExceptionGroup as failed:  # the others were withdrawn: say why, as one would
            first = _first(failed)
            raise first from first.__cause__
        return [job.result() for job in jobs]

    def _prepare(self, ask: Ask) -> Any:
        """What every try of ``ask`` shares (e.g. its params with an ``elicitationId``)."""
        return None

    async def _exchange(self, ask: Ask, prepared: Any, note: str | None) -> Any:
        """Send ``ask`` (``note``, when set, says what was wrong with the last answer) and
        return the client's raw answer."""
        raise NotImplementedError

    def _ended(self, ask: Ask, prepared: Any, answer: Any) -> None:
        """``ask`` is over: ``answer`` is its checked answer, or None when it failed or
        was cancelled."""

    async def _one(self, ask: Ask) -> Any:
        prepared, answer = self._prepare(ask), None
        try:
            answer = await self._answer(ask, prepared)
        finally:
            self._ended(ask, prepared, answer)
        return answer

    def where(self) -> str:
        """The request asking, as a log line names it (``log_labels``); "" unknown."""
        return ""

    async def _answer(self, ask: Ask, prepared: Any) -> Any:
        note = None
        for attempt in range(2):
            try:
                raw = await self._exchange(ask, prepared, note)
            except TimeoutError as exc:  # its own reason when it has one (it was never sent)
                reason = str(exc) or f"no answer to {ask.method} within {self.timeout:g} s"
                return give_up(ask, reason, where=self.where(), warn=isinstance(exc, ClientNotReady))
            except Refused as exc:
                return give_up(ask, str(exc), where=self.where())
            try:
                return check_answer(ask, raw)
            except InvalidAnswer as exc:
                if attempt == 1:
                    reason = f"the client's answer to {ask.method} was invalid: {exc}"
                    return give_up(ask, reason, exc, where=self.where())
                note = f"Your previous answer was not accepted: {exc}."
        raise AssertionError("unreachable")


#: What a question raises that fails the request rather than the handler (``Tool.failed``
#: raises them again).
EXCHANGE_ERRORS = (ProtocolError, ReplayMismatchError, FormSchemaError)


def exchange_error(
    group: BaseExceptionGroup[BaseException], refusal: InvalidParams | None = None
) -> BaseException | None:
    """The error a question asked from a sibling task (``asyncio.TaskGroup``) failed the
    request with, as the handler's own task would have raised it: a refused answer
    (2026-07-28's ``refusal`` of the round, which a single-use round renews, first), a
    capability the client did not declare, a question changed between rounds, a URL step
    (``URLElicitationRequired``: 2025-11-25's -32042, 2026-07-28's steps asked). None when
    ``group`` holds none: it is the handler's own failure."""
    failed = group.subgroup(lambda e: isinstance(e, EXCHANGE_ERRORS))
    if failed is None:
        return None
    if refusal is not None and failed.subgroup(lambda e: e is refusal) is not None:
        return refusal
    return _first(failed)


def raise_exchange_error(
    group: BaseExceptionGroup[BaseException], refusal: InvalidParams | None = None
) -> None:
    """Raise ``exchange_error(group, refusal)``; nothing when there is none."""
    error = exchange_error(group, refusal)
    if error is not None:
        raise error from None


def as_own(failure: Exception) -> Exception:
    """``failure`` as the handler's own task would have raised it: a task group's that
    holds only ``ToolError``s (a sampling or roots question the client refused, or the
    handler's own, raised in sibling tasks) is its first, so its message reaches the
    client; anything else (a mix is a failure of the handler) is ``failure`` itself."""
    if isinstance(failure, ExceptionGroup) and failure.split(ToolError)[1] is None:
        first = _first(failure)
        assert isinstance(first, ToolError)
        return first
    return failure


def raise_as_own(group: ExceptionGroup[Exception], refusal: InvalidParams | None = None) -> None:
    """For a prompt or resource (a ``ToolError`` fails its request): raise what the
    handler's own task would have, the error a sibling task's question failed the request
    with first (``raise_exchange_error``). Nothing when that is ``group`` itself."""
    raise_exchange_error(group, refusal)
    own = as_own(group)
    if own is not group:
        raise own from None


async def awaited_as_own(fn: Callable[..., Awaitable[T]], kwargs: dict[str, Any], *, modern: bool) -> T:
    """A prompt's or resource's coroutine function ``fn`` awaited: on 2025-11-25, a task
    group it fails with is raised as from its own task (``raise_as_own``); on 2026-07-28,
    ``run_replayed`` does that, its round's refusal first."""
    try:
        return await fn(**kwargs)
    except ExceptionGroup as group:
        if not modern:
            raise_as_own(group)
        raise


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first failure in ``group`` (itself, not a group)."""
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


def give_up(
    ask: Ask, reason: str, invalid: InvalidAnswer | None = None, *, where: str = "", warn: bool = False
) -> Any:
    """The end of asking ``ask`` for ``reason``: ``cancel`` for an elicitation (logged, after
    ``where``, the request's ``log_labels.request_label``; of ``invalid``, what did not
    fit, only the fields: its message quotes what was typed), a ``ToolError`` for the rest.
    ``warn``: the client is at fault (``ClientNotReady``): one warning, whatever ``ask``."""
    at = f"{where}: " if where else ""
    if ask.method == ELICIT:
        said = reason if invalid is None or not invalid.fields else _unfit(ask, invalid)
        log.log(logging.WARNING if warn else logging.INFO, "%s%s; treating it as cancel", at, said)
        return {"action": "cancel"}
    if warn:  # its ToolError becomes a result, which no log line tells the operator of
        log.warning("%s%s", at, reason)
    raise ToolError(reason[0].upper() + reason[1:])


def _unfit(ask: Ask, invalid: InvalidAnswer) -> str:
    """What was wrong with an elicitation's answer, without the message (which quotes it)."""
    names = sorted({"the form as a whole" if field is None else field for field in invalid.fields})
    return f"the client's answer to {ask.method} did not fit the form twice (in {', '.join(names)})"
