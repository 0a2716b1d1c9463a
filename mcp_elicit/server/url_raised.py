"""A handler's own ``raise URLElicitationRequired(...)`` on 2026-07-28, where there is no
-32042: its steps (``data.elicitations``) are asked as URL-mode input requests, and a step
with an ``elicitationId`` is held as ``ctx.require_url``'s is (``url_steps``).

Rules:

* The steps are made and checked as ``ctx.require_url`` makes them (``Context.url_steps``:
  a message and a valid URL each, -32021 for a client without URL mode). In a task the
  request was answered already: the error goes on and fails the task.
* A step given an ``elicitationId``, once the person accepted it, is not asked again
  while its page is open: each round first runs the handler from its start (its own
  check of the work may pass: then it answers), and when it raises the step again the
  round waits at most ``flow_wait`` seconds for ``server.complete_elicitation(id,
  principal)``, under the principal that asked (``ctx.principal``; one principal's
  completion never releases another's), a completion made after the step was first asked
  (the marker then seen rides in the request's memo), on any instance sharing the store.
  Still open, the round ends with the state alone; done, the handler runs again at once,
  in the same round, and what it does then (an answer, a question) is the round's. It
  sees nothing new: it runs from its start, as at 2025-11-25 after the client's retry,
  and checks its own record of the work (what the page's backend stored before it
  completed the step). A handler with no record of its own asks with
  ``ctx.require_url``, whose answer says the page is done.
* Held only when every step of the raise is accepted (or already held) and no other
  question of the round is open: a step new in this raise is asked (those held are not
  asked again, their time goes on); a declined or cancelled step ends the request: a
  tool's ``isError`` result; for a prompt or resource, -32600 (the user's choice).
* A step not done within ``ask_timeout`` seconds of being asked: the handler runs again
  at once (the work may be done by other means); raising the step again, it is asked
  once more under ``<key>#2`` (still released by any completion since it was first
  asked); not done in time again, the request ends as for a step cancelled (logged), as
  ``ctx.require_url`` answers ``cancel``. A step raised again once its page was done (the
  handler did not find the work) is asked anew: only a completion after that releases
  it (logged at INFO).
* A step without an ``elicitationId`` is asked again on every retry until the handler
  stops raising it: nothing can complete it.
* At most one wait per round: what the run that followed the release raises is asked (a
  step released is asked anew, one whose time was over once more). That run keys its
  questions afresh, and the answers the round carried for the steps were theirs: a
  question of its own under a step's key is asked, not handed the step's answer.
* A step's record (in the memo, sealed in ``requestState``) follows the step itself (its
  fingerprint), not its place in the raise: a held step stays held when a step before
  it is no longer raised (its work done). Records of steps not raised now are dropped,
  so the state does not grow with every step a handler ever raised (a URL made anew in
  each run, say).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from mcp_elicit.core.mrtr import Ask, Replay
from mcp_elicit.errors import InvalidRequest, ToolError, URLElicitationRequired
from mcp_elicit.server.url_steps import STEP_ASKS
from mcp_elicit.wire.headers import shown

if TYPE_CHECKING:
    from mcp_elicit.server.context import Context
    from mcp_elicit.server.url_mode import UrlMode

__all__ = ["settle"]

log = logging.getLogger("mcp_elicit.server")

REFUSALS = ("decline", "cancel")
#: Where the steps' records are kept in the request's memo (sealed in ``requestState``), by
#: fingerprint: a step keeps its record whatever its place in the raise (its key).
_SLOTS = "mcp-elicit/raised"


async def settle(
    ctx: Context, replay: Replay, required: URLElicitationRequired, *, tool: bool, hold: bool
) -> bool:
    """Ask or hold the steps ``required`` names (see the rules). True when the handler is
    to run again now (every step done, or its time over); False when the round ends with
    what it asks (``replay.want``), or with the state alone. A refused step raises the
    request's failure (``ToolError`` for a ``tool``, else ``InvalidRequest``); ``hold``
    False: this round waits no more."""
    steps = ctx.url_steps(required)
    mode = ctx._url_mode
    who = ctx._principal  # not ``principal``: reading it here does not make the result the caller's
    principal = who.subject if who is not None else None
    asks: list[Ask] = []
    held: list[tuple[str, dict[str, Any]]] = []
    # the records of the steps raised now (the others' are dropped: the state stays small)
    records = ctx.slot(_SLOTS)
    kept: dict[str, dict[str, Any]] = {}
    read: set[str] = set()  # the keys whose answers were read here
    for step in steps:
        step_id = step.params.get("elicitationId")
        if mode is None or not isinstance(step_id, str):  # nothing can complete it: asked again
            if (action := _action(replay, step.key, step)) in REFUSALS:
                raise _refusal(step, action, tool)
            asks.append(step)
            continue
        if step.fingerprint in kept:  # the same step twice in one raise: one step
            continue
        slot = kept[step.fingerprint] = records.get(step.fingerprint) or {}
        if not slot:  # first raised in this request
            slot.update(seen=await mode.steps.marker(step_id, principal), nth=1)
            _asked(slot, mode)
        elif slot["at"] == "done":  # raised again once its page was done: the work was not found
            log.info(
                "%s: URL step %s was completed, but the handler raised it again: asked anew",
                ctx._label(),
                shown(step_id),
            )
            slot.update(seen=await mode.steps.marker(step_id, principal), nth=1)
            _asked(slot, mode)
        elif slot["at"] == "over":  # not done in time: asked once more, then cancel
            if slot["nth"] >= STEP_ASKS:
                log.info(
                    "%s: the page of URL step %s was not done within %g s, asked %d times; treating it as cancel",
                    ctx._label(),
                    shown(step_id),
                    mode.ask_timeout,
                    STEP_ASKS,
                )
                raise _refusal(step, "cancel", tool)
            slot["nth"] += 1
            _asked(slot, mode)
        elif slot["at"] == "asked":  # asked in an earlier round (the last, when answered now)
            read.add(slot["key"])
            action = _action(replay, slot["key"], step)
            if action in REFUSALS:
                raise _refusal(step, action, tool)
            if action == "accept":
                slot["at"] = "accepted"
        if slot["at"] == "accepted":
            held.append((step_id, slot))
        else:  # asked under its key in this raise (unique in this run of the handler)
            asked = step if slot["nth"] == 1 else Ask(f"{step.key}#{slot['nth']}", step.method, step.params)
            slot["key"] = asked.key
            asks.append(asked)
    records.clear()
    records.update(kept)
    if asks or replay.outstanding or not hold:
        for ask in asks:
            replay.want(ask)
        return False
    assert mode is not None  # every step is held: each has an id, and URL mode is there
    if not await _held(mode, principal, held):
        return False
    _forget(replay, read)
    ctx._run_again()
    return True


def _asked(slot: dict[str, Any], mode: UrlMode) -> None:
    """The step is asked now: its time runs from here."""
    slot["at"], slot["since"] = "asked", mode.clock()


def _action(replay: Replay, key: str, step: Ask) -> str | None:
    """The client's answer to ``step`` as asked under ``key`` in the last round (its
    ``action``), if any."""
    answer = replay.fresh.get(key) if replay.pending.get(key) == step.fingerprint else None
    action = answer.get("action") if isinstance(answer, dict) else None
    return action if isinstance(action, str) else None


def _forget(replay: Replay, keys: set[str]) -> None:
    """The answers under ``keys`` were the steps' (read here, not by ``Replay.resolve``):
    the handler run again in this round, whose questions are keyed afresh, asks its own
    under those keys rather than be handed them."""
    replay.pending = {key: fp for key, fp in replay.pending.items() if key not in keys}
    replay.fresh = {key: answer for key, answer in replay.fresh.items() if key not in keys}


def _refusal(step: Ask, action: str, tool: bool) -> ToolError | InvalidRequest:
    """The request's failure when the user declined or cancelled ``step``: a ``tool``'s
    ``ToolError`` (its ``isError`` result), else -32600 (the user's choice)."""
    said = (
        f"the user did not complete a step this request needs ({action}): "
        f"{step.params['message']} ({step.params['url']})"
    )
    if tool:
        return ToolError(said[0].upper() + said[1:])
    return InvalidRequest(f"Invalid request: {said}")


async def _held(mode: UrlMode, principal: str | None, held: list[tuple[str, dict[str, Any]]]) -> bool:
    """Wait, at most ``flow_wait`` seconds in all, for each held step's page; True once
    every one is done or past its ``ask_timeout``; False when one is still open (the
    round ends with the state alone). A server that is stopping looks once, at once."""
    steps = mode.steps
    end = mode.clock() + mode.flow_wait
    for step_id, slot in held:
        seen, deadline = str(slot["seen"]), float(slot["since"]) + mode.ask_timeout
        wait = functools.partial(
            steps.wait, step_id, principal, seen, max(min(end, deadline) - mode.clock(), 0.0)
        )
        if await mode.unless_stopping(wait, functools.partial(steps.done, step_id, principal, seen)):
            slot["at"] = "done"
        elif mode.clock() >= deadline:
            slot["at"] = "over"
        else:
            return False
    return True
