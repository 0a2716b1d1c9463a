"""Asking for a URL-mode flow from a handler, and waiting for its page: what
``ctx.secret()`` and ``ctx.connect()`` do once nothing usable is stored yet.

Rules:

* An ask starts a flow, sends a URL-mode elicitation pointing at the flow's page, and
  once the client accepts, waits (bounded, woken by the completion event) for the page to
  finish. Still pending after the wait: on 2026-07-28 the round ends with the sealed
  state alone (the flow id rides in it) and the client comes back; on 2025-11-25 (and in
  a task) the request keeps waiting in place, within ``ask_timeout`` (past it the answer
  is ``cancel`` and the flow is cancelled: its page takes nothing more; so too when the
  request is cancelled while it waits).
* Declining or cancelling, in the client or on the page, ends the flow and is the answer.
  A sign-in whose grant lacked scopes asked for (``oauth_scopes``) raises ``OAuthError``
  naming them instead of answering ``cancel``.
* Each ask is a question (and a flow) of its own: asked again after a decline, the same
  secret gets a new link; a replayed round finds its flow again by its memo key.
* Two requests may ask for the same secret (or connection) of one principal at once, each
  with its own flow. Once one page stored it, a request still waiting on its own page
  goes on with the stored value (checked after each bounded wait): its flow ends
  ``complete`` (its page takes nothing more, its session hears it completed).
* A client that did not declare URL mode gets -32021 before any flow is written. One
  principal has at most ``max_flows_per_principal`` flows open at once
  (``flows.FlowQuota``): past it, an ask that needs a new flow is refused
  (``PrincipalLimitReached``, -32600) saying so, before a flow is written.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from mcp_elicit.core.rev_2025_11_25 import url_mode_missing
from mcp_elicit.server.flows import Flow, Flows, FlowStatus

if TYPE_CHECKING:
    from mcp_elicit.server.context import Context
    from mcp_elicit.server.url_mode import UrlMode

__all__ = ["Outcome", "end_flow", "run_flow"]

Outcome = Literal["accept", "decline", "cancel"]


async def run_flow(mode: UrlMode, ctx: Context, kind: str, name: str, message: str) -> Outcome:
    """Ask for a flow of ``kind`` (``"secret"``, ``"oauth"``) for ``name`` and wait for its
    page (see the rules); the answer the handler gets."""
    if not ctx.can_elicit("url"):  # before a flow is written or a page server started
        raise url_mode_missing(ctx.revision)
    principal = ctx.principal.subject if ctx.principal else None
    # each ask is a question (and a flow) of its own: asked again after a decline, the
    # same secret gets a new link, not the ended flow's; replayed rounds count alike
    nth = ctx._occurrence(f"mcp-elicit/{kind}/{name}")
    memo_key = f"mcp-elicit/{kind}/{name}" if nth == 1 else f"mcp-elicit/{kind}#{nth}/{name}"
    slot = ctx.slot(memo_key)
    if slot.get("id") is None:
        ticket = await mode.quota.admit(principal, mode.flows)
        try:
            started, token = await mode.flows.start(kind, name, principal)
        finally:
            mode.quota.ended(ticket, principal)
        mode.quota.opened(started)
        slot["id"], slot["url"] = started.id, await mode.link(started, token)
    flow_id = str(slot["id"])
    outcome = await _ask(mode, ctx, flow_id, str(slot["url"]), kind, name, message, memo_key)
    mode.quota.ended(flow_id, principal)  # not when a round ends with the flow pending
    if outcome == "cancel" and kind == "oauth":  # failed for a grant narrower than asked?
        await mode.oauth.check_grant(flow_id, name)
    return outcome


async def _ask(
    mode: UrlMode, ctx: Context, flow_id: str, url: str, kind: str, name: str, message: str, memo_key: str
) -> Outcome:
    principal = ctx.principal.subject if ctx.principal else None
    answer = await ctx.elicit_url(message, url, elicitation_id=flow_id, key=memo_key)
    if answer.action != "accept":
        await end_flow(mode.flows, flow_id, "declined" if answer.action == "decline" else "cancelled")
        return answer.action
    if not ctx.waits_in_place:
        while True:  # one bounded wait per round; still pending: a state-only round
            outcome = _outcome(await mode.wait_for(flow_id))
            if outcome is None:
                outcome = await _stored_meanwhile(mode, flow_id, kind, name, principal)
            if outcome is not None:
                return outcome
            await ctx.pause()
    try:
        return await _wait_in_place(mode, flow_id, kind, name, principal)
    except asyncio.CancelledError:  # the request is gone (cancelled, its session ended)
        await asyncio.shield(_give_up(mode, flow_id, principal))
        raise


async def _wait_in_place(mode: UrlMode, flow_id: str, kind: str, name: str, principal: str | None) -> Outcome:
    """2025-11-25, or a task: wait for the page within the question budget."""
    deadline = mode.clock() + mode.ask_timeout
    while True:
        left = deadline - mode.clock()
        outcome = _outcome(await mode.flows.wait(flow_id, min(mode.flow_wait, max(left, 0.0))))
        if outcome is None:
            outcome = await _stored_meanwhile(mode, flow_id, kind, name, principal)
        if outcome is not None:
            # the page may have been served by another instance: tell our session here
            if mode.on_finish is not None:
                mode.on_finish(flow_id, principal)
            return outcome
        if left <= 0:
            await _give_up(mode, flow_id, principal)
            return "cancel"


async def _stored_meanwhile(
    mode: UrlMode, flow_id: str, kind: str, name: str, principal: str | None
) -> Outcome | None:
    """The answer when another flow stored what this one asks for (its page is then
    closed, ``complete``); None when nothing is stored yet."""
    if kind == "oauth":
        stored = await mode.oauth.stored(name, principal) is not None
    else:
        stored = await mode.vault.get("vault", name, principal) is not None
    if not stored:
        return None
    current = await mode.flows.get(flow_id)
    if current is None:
        return "accept"
    if not current.done:
        await mode.flows.finish(current, "complete")  # or it ended meanwhile: as it ended
    return _outcome(current) or "accept"


async def _give_up(mode: UrlMode, flow_id: str, principal: str | None) -> None:
    """Nobody waits for the page any more: it must take nothing more, and the session
    that asked stops waiting to hear it finish."""
    mode.quota.ended(flow_id, principal)
    if mode.on_abandon is not None:
        mode.on_abandon(flow_id, principal)
    await end_flow(mode.flows, flow_id, "cancelled")


async def end_flow(flows: Flows, flow_id: str, status: FlowStatus) -> None:
    """End the flow with ``status`` unless it already ended (its page then says so)."""
    current = await flows.get(flow_id)
    if current is not None and not current.done:
        await flows.finish(current, status)


def _outcome(flow: Flow | None) -> Outcome | None:
    if flow is None:
        return "cancel"  # expired before it was finished
    if flow.status == "complete":
        return "accept"
    if flow.status == "declined":
        return "decline"
    if flow.status in ("cancelled", "failed"):
        return "cancel"
    return None
