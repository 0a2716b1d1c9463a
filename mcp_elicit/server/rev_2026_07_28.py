"""Asking questions on revision 2026-07-28: multi round-trip requests, replay style.

Rules: a question whose answer is in hand (in the sealed state, or fresh and valid in
``inputResponses``) returns at once; otherwise the round ends with ``input_required`` for
every unanswered question of the batch. An elicitation answer that does not fit is asked
again once, as on 2025-11-25 (``server/asking.py``); the second that does not fit is
``cancel``, logged after the round as there (the core's ``Replay`` decides; the sealed
state says which questions were asked again), unless the round is refused over the
client's answers (-32602 over another question's answer, say), since the client sends
that round again; a round that ends otherwise (its handler failed, the task it became
was cancelled) is not sent again, and logs it.
A tampered, expired or foreign ``requestState`` fails the request before the handler
runs, even when the handler would ask nothing; the client is told only that, the log says
why (a warning; an expired state is info).
Questions asked from concurrent tasks (``asyncio.TaskGroup``) before any of them waits on
real I/O are merged into one round: an unanswered question yields to its siblings a few
times before ending the round (``ctx.gather`` batches without relying on that). A question
of a sibling task that fails the request (a refused answer, a capability not declared)
fails it as in the handler's own task, not as the task group's ``ExceptionGroup``; so does
a sibling that fails (a ``ToolError`` it raises once cancelled, say) as another's question
ends the round: the failure wins, as one raised in a ``finally`` does.
A handler that raises ``URLElicitationRequired`` itself (this revision has no -32042) has
its steps asked as ``ctx.require_url`` asks them: an input request each; a step with an
``elicitationId``, once accepted, is held until ``complete_elicitation`` as that one's is,
and the handler then runs again at once, in the same round (``url_raised``); raised in
a sibling task, it is the handler's own raise as well (2025-11-25 sends it as -32042).
A step the user declined or cancelled ends the request: a tool's ``isError`` result; for
a prompt or resource, -32600 (the user's choice, not a server fault). In a task (after
``ctx.start_task()``) it fails the task instead: the request was answered.
Once the round is over its asker is ``ended``: a Context kept past it asks nothing
(``Context._live`` says the request ended, rather than this module's ``InputRequired``).
A single-use state is spent before the round runs; a round that then fails with -32602
over the client's answers puts a fresh state, holding what the spent one held, in the
error's ``data.requestState`` (redeemable once), so the client corrects that answer alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcp_elicit.core.input_responses import check_input_responses
from mcp_elicit.core.mrtr import Ask, InputRequired, Replay, binding_for
from mcp_elicit.errors import (
    InvalidParams,
    InvalidRequestState,
    URLElicitationRequired,
)
from mcp_elicit.log_labels import request_label, request_where
from mcp_elicit.sealing import Binding, StateSealer, key_id
from mcp_elicit.server.asking import as_own, exchange_error, give_up, raise_as_own, raise_exchange_error
from mcp_elicit.server.key_file import MISSING_KEY

__all__ = ["Outcome", "RaisedSteps", "ReplayAsker", "run_replayed"]

log = logging.getLogger("mcp_elicit.server")


class Outcome(Protocol):
    """A handler whose result ``run_replayed`` makes in its own frame (a tool's): the
    function's return value or failure, turned into the result."""

    def done(self, value: Any) -> dict[str, Any]: ...

    def failed(self, exc: Exception, where: str = "") -> dict[str, Any]:
        """The result for ``exc``, or raise it again (called while handling it); ``where``
        names the request in the log (``log_labels.request_where``)."""
        ...


class RaisedSteps(Protocol):
    """What becomes of a ``URLElicitationRequired`` the handler raised (``url_raised.settle``
    bound to its ``Context``): its steps asked (``replay.want``) or held; True when the
    handler is to run again now. ``hold`` False: the round waits for no step any more."""

    async def __call__(
        self, replay: Replay, required: URLElicitationRequired, *, tool: bool, hold: bool
    ) -> bool: ...


class ReplayAsker:
    """Answers questions from the replay record; raises ``InputRequired`` for the rest.
    Made with the request's ``Context``; ``run_replayed`` gives it the round's record."""

    __slots__ = ("ended", "main_task", "replay")

    #: The round's record (``run_replayed`` sets it and the task before the handler runs).
    replay: Replay
    #: The task running the handler; questions from other tasks come from siblings.
    main_task: asyncio.Task[Any] | None

    def __init__(self) -> None:
        #: Set when the round is over (``run_replayed`` returned): a kept Context asks nothing.
        self.ended = False

    def answered(self, asks: list[Ask]) -> list[Any] | None:
        """The recorded or fresh answers to ``asks``. When one is missing, the questions
        without an answer are recorded and the round ends (``InputRequired``), at once in
        the handler's own task; in a sibling task None says to await ``ask``, which lets
        the other siblings ask theirs first."""
        replay = self.replay
        answers: list[Any] = []
        missing = False
        for ask in asks:
            found, answer = replay.resolve(ask)
            if found:
                answers.append(answer)
            else:
                replay.want(ask)
                missing = True
        if not missing:
            return answers
        main = self.main_task
        # the main task's loop is the running one: current_task(loop) spares the lookup of
        # the running loop (a getpid system call on Python 3.11)
        if asyncio.current_task(None if main is None else main.get_loop()) is main:
            raise InputRequired
        return None

    async def ask(self, asks: list[Ask]) -> list[Any]:
        answers = self.answered(asks)
        if answers is None:  # a sibling task's question: the others ask theirs first
            for _ in range(_SIBLING_YIELDS):
                await asyncio.sleep(0)
            raise InputRequired
        return answers

    async def require_url(self, ask: Ask) -> Any:
        (answer,) = await self.ask([ask])
        return answer

    @property
    def memo(self) -> dict[str, Any]:
        return self.replay.memo

    async def pause(self) -> None:
        """End this round without a question; the client retries with the state alone."""
        raise InputRequired


def _raised_in(
    failure: Exception, raised: RaisedSteps | None, refusal: InvalidParams | None
) -> URLElicitationRequired | None:
    """The ``URLElicitationRequired`` a sibling task raised, when that is what the task
    group ``failure`` fails the request with (``exchange_error``, as 2025-11-25 sends it
    as -32042): the handler's own raise, its steps asked as if raised in its own task."""
    if raised is None or not isinstance(failure, ExceptionGroup):
        return None
    error = exchange_error(failure, refusal)
    return error if isinstance(error, URLElicitationRequired) else None


def _failed(
    exc: Exception, outcome: Outcome | None, refusal: InvalidParams | None, request_id: object
) -> dict[str, Any]:
    """What the handler's failure ``exc`` makes of the round (called while handling it): a
    sibling task's question that failed the request, or the ToolError a sibling raised,
    raised as from the handler's own task (``refusal`` first); else ``outcome.failed``
    (a tool's result), or ``exc`` raised again. ``request_id``: the request's, for the log."""
    if isinstance(exc, ExceptionGroup):
        if outcome is None:
            raise_as_own(exc, refusal)
        raise_exchange_error(exc, refusal)
    if outcome is None:
        raise exc
    return outcome.failed(as_own(exc), request_where(request_id))


async def run_replayed(
    method: str,
    params: Mapping[str, Any],
    asker: ReplayAsker,
    handler: Callable[..., Awaitable[Any]],
    args: tuple[Any, ...],
    *,
    sealer: Callable[[], StateSealer],
    principal: str | None,
    now: Callable[[], float],
    spend: Callable[[str], Awaitable[bool]] | None = None,
    issue: Callable[[str], Awaitable[None]] | None = None,
    outcome: Outcome | None = None,
    raised: RaisedSteps | None = None,
    request_id: object = None,
) -> dict[str, Any]:
    """Run ``handler(*args)`` (asking through ``asker``) for one round; its result (made
    by ``outcome`` when given: the handler's value is then raw, and an ``Exception`` from
    it goes to ``outcome.failed``), or ``input_required`` with new state.

    ``spend`` makes each ``requestState`` redeemable once: called with a verified token,
    it returns False when that token was not issued or was redeemed before (on any
    instance); ``issue`` records each state the round seals, so that ``spend`` can tell
    (a store that lost its data then refuses a state rather than accept it twice). With ``spend``,
    answers that come without a ``requestState`` count for nothing (though checked as any
    ``inputResponses`` is: ``check_input_responses``, and one that is not an object read as
    ``Replay.begin`` reads it): the round runs as a first call, so leaving the spent state out cannot replay a one-time action; a -32602
    over the round's answers (``Replay.refusal``) carries a fresh state in its data. A
    ``requestState`` of null is no state. ``raised`` asks (or holds) the steps of a
    ``URLElicitationRequired`` the handler raised (``url_raised``), and may have the
    handler run again at once, once in a round; without it, that error goes on. ``sealer`` is read each time state is opened or
    sealed: the round may change it (URL mode opening the default store, whose key file
    then seals, so that the round's state survives a restart). ``request_id`` names the
    request in what the round logs."""
    binding: Binding | None = None
    token = params.get("requestState")
    spent: str | None = None  # the single-use token this round redeemed
    if token is not None:
        binding = binding_for(method, params, principal)
        try:
            replay = Replay.begin(params, sealer=sealer(), binding=binding, now=now())
            if spend is not None:
                if not await spend(token):
                    raise InvalidRequestState(
                        "single-use state redeemed before, or its record lost with the store's data"
                    )
                spent = token
        except InvalidRequestState as exc:
            _log_refusal(request_label(method, params, request_id), exc.reason, token)
            raise
    elif "inputResponses" not in params:  # a first call: nothing to open or read
        replay = Replay()
    else:
        # single-use: checked as any answers are, then counted for nothing; a value that is
        # not an object answers nothing anyway, and is read as on any tool (it says why)
        if spend is not None and isinstance(responses := params["inputResponses"], dict):
            check_input_responses(responses)
            params = {k: v for k, v in params.items() if k != "inputResponses"}
        replay = Replay.begin(params, sealer=sealer(), binding=_NO_BINDING, now=0.0)
    asker.replay = replay
    asker.main_task = asyncio.current_task()
    went_on = True  # not refused over the client's answers: what it gave up as cancel is logged
    try:  # the round, ended however it ends
        hold = True  # the handler's own URL steps may still be waited for in this round
        while True:
            required: URLElicitationRequired | None = None  # the handler's own (no -32042 here)
            try:
                value = await handler(*args)
            except InputRequired:
                pass
            except URLElicitationRequired as exc:
                required = exc
            except Exception as exc:  # before the groups: an ExceptionGroup is the handler's failure
                if (required := _raised_in(exc, raised, replay.refusal)) is None:
                    return _failed(exc, outcome, replay.refusal, request_id)
            except BaseExceptionGroup as group:
                matched, rest = group.split((InputRequired, asyncio.CancelledError))
                if isinstance(rest, ExceptionGroup):  # a sibling failed too (say, once cancelled):
                    if (required := _raised_in(rest, raised, replay.refusal)) is None:
                        return _failed(
                            rest, outcome, replay.refusal, request_id
                        )  # as a failure in a finally would
                elif rest is not None or matched is None or not matched.subgroup(InputRequired):
                    raise
            else:
                return value if outcome is None else outcome.done(value)
            if required is None:
                break
            if raised is None:
                raise required
            try:
                if await raised(replay, required, tool=outcome is not None, hold=hold):
                    hold = False  # its steps are done (or their time is over): run it again now
                    continue
            except Exception as failure:
                if outcome is None:
                    raise
                return outcome.failed(failure, request_where(request_id))
            break
        if binding is None:
            binding = binding_for(method, params, principal)
        result = replay.input_required(sealer=sealer(), binding=binding, now=now())
        if issue is not None:
            await issue(result["requestState"])
        return result
    except InvalidParams as exc:
        # refused over the client's answers: it sends the round again, nothing was cancelled.
        # Any other end (a cancellation, say, of the task the round became) is no retry.
        went_on = exc is not replay.refusal
        if spent is not None and binding is not None and exc is replay.refusal:
            exc.data = _renewed(spent, binding, sealer(), now())  # a stand-in for the spent state
            if exc.data is not None and issue is not None:
                await issue(exc.data["requestState"])
        raise
    finally:
        asker.ended = True
        for ask, invalid in replay.unfit if went_on else ():  # asked again, no answer that fits: cancel
            where = request_label(method, params, request_id)
            if invalid is None:
                give_up(
                    ask,
                    f"the client's answers to {ask.method} could not be read twice ({replay.shape_problem})",
                    where=where,
                )
            else:
                give_up(
                    ask, f"the client's answer to {ask.method} was invalid: {invalid}", invalid, where=where
                )


#: Why a state whose seal does not open was refused, as the log says it: the binding is
#: in the seal, so a state sealed for another request cannot be told from a forged one.
_FORGED = (
    "authentication failed: forged or altered, or sealed for another method, tool, arguments, user or server"
)


def _log_refusal(label: str, reason: str, token: object) -> None:
    """Say in the log why a ``requestState`` was refused: the client is told only that it
    was. An expired state is the usual end of a request left unanswered; anything else (a
    forged or altered token, another request's, a key the ring dropped) is worth a look,
    and a key the ring lacks is named, with what to do. ``label``: the request
    (``log_labels.request_label``: a resource's URI without its query)."""
    level = logging.INFO if reason == "expired" else logging.WARNING
    kid = key_id(token) if isinstance(token, str) and reason == "unknown key id" else None
    if kid is not None:
        reason = f"{reason} {kid}, {MISSING_KEY}"
    elif reason == "authentication failed":  # not the caller's: the seal's (AES-GCM's tag)
        reason = _FORGED
    log.log(level, "%s: requestState refused (%s)", label, reason)


def _renewed(token: str, binding: Binding, sealer: StateSealer, now: float) -> dict[str, Any] | None:
    """The ``data`` of a -32602 a single-use round raised over the client's answers after
    it spent ``token``: a fresh state holding what ``token`` held, redeemable once, so the
    client answers again from where it was instead of from the start. The round ran no
    further than the question whose answer it refused, so no one-time action that follows
    the last question ran; None when ``token`` expired meanwhile."""
    try:
        payload = sealer.open(token, binding, now=now)
    except InvalidRequestState:
        return None
    return {"requestState": sealer.seal(payload, binding, now=now)}


_NO_BINDING = Binding(method="", target="", arguments=b"", principal=None)
_SIBLING_YIELDS = 3
