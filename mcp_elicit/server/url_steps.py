"""A handler's own URL step held until its page is done: ``ctx.require_url(message, url,
elicitation_id=...)`` sends the person to a page the handler names (a payment, a sign-in
elsewhere), and the page's backend (a payment webhook) calls
``server.complete_elicitation(elicitation_id, principal)`` once its work is done.

Rules:

* On 2025-11-25 nothing changes: the step is -32042 and the client retries once the
  session's ``notifications/elicitation/complete`` came (``rev_2025_11_25``).
* On 2026-07-28 ``accept`` means the person agreed to open the page, not that its work is
  done, so the step's answer is held until ``complete_elicitation`` marked that id done
  for the principal that asked, as the server's own pages are (``url_asking``): each
  round waits at most ``flow_wait`` seconds (woken at once by the completion's event),
  and still not done, ends with the state alone (``ctx.pause``); the retry waits again.
  In a task the handler waits in place. Only a step given an ``elicitation_id`` is held
  (nothing else can complete it); ``ctx.elicit_url`` never waits (it is the "open this
  page" form). A handler's own ``raise URLElicitationRequired`` is held with the same
  markers and times (``url_raised``).
* A step not done within ``ask_timeout`` seconds of being asked is asked again (the
  person may have closed the page), under a key of its own, at most ``STEP_ASKS`` times
  in all; then its answer is ``cancel`` (logged), as a page of the server's own that
  expired unfinished. Asked again, it is still released by any completion since it was
  first asked (one that came just after the last look is not lost). Declined or
  cancelled, the answer is as given, at once.
* A completion is recorded in the store (``UrlMode.step_completed``), so a retry held on
  any instance sharing it sees it, and keyed by principal and id (hashed): one
  principal's completion never releases another's step. Each completion is a new marker;
  only one made after the step was asked releases it (the marker seen when it was asked
  rides in the request's memo), so an earlier completion of the same id does not.
* A step once released stays released for the rest of the request (later rounds do not
  wait again); what the memo holds travels sealed in ``requestState``.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from mcp_elicit.core.mrtr import Ask
from mcp_elicit.server.flows import watch
from mcp_elicit.stores.base import Store
from mcp_elicit.stores.writes import Publish, Put, Write, write_all
from mcp_elicit.wire.headers import shown
from mcp_elicit.wire.versions import is_modern

if TYPE_CHECKING:
    from mcp_elicit.server.context import Context
    from mcp_elicit.server.questions import Asker
    from mcp_elicit.server.url_mode import UrlMode

__all__ = ["STEP_ASKS", "StepCompletions", "default_store_made", "require_step"]

#: How many times one step is asked in one request at most (once, and once more when its
#: page was not done within ``ask_timeout``).
STEP_ASKS = 2
NAMESPACE = "step"

log = logging.getLogger("mcp_elicit.server")


class StepCompletions:
    """Completion markers of the handlers' own URL steps, in the store."""

    def __init__(
        self, store: Store, *, ttl: float, recheck: float = 1.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        #: How long a completion is kept (a retry held on it reads it within that).
        self.ttl = ttl
        self.recheck = recheck
        self.clock = clock

    async def marker(self, elicitation_id: str, principal: str | None) -> str:
        """The last completion of ``principal``'s ``elicitation_id`` still kept; "" when none."""
        raw = await self.store.get(NAMESPACE, _key(elicitation_id, principal))
        return raw.decode("ascii", "replace") if raw else ""

    async def complete(
        self, elicitation_id: str, principal: str | None, told: tuple[str, bytes] | None = None
    ) -> None:
        """Mark the step done (``mark``), then tell it (``tell``)."""
        await self.mark(elicitation_id, principal)
        await self.tell(elicitation_id, principal, told)

    async def mark(self, elicitation_id: str, principal: str | None) -> None:
        """Mark the step done (a new marker): what the requests held on it read."""
        key = _key(elicitation_id, principal)
        await self.store.put(NAMESPACE, key, secrets.token_hex(8).encode("ascii"), ttl=self.ttl)

    async def tell(self, elicitation_id: str, principal: str | None, told: tuple[str, bytes] | None) -> None:
        """Wake whoever waits for the step marked done (each also looks again every
        ``recheck`` seconds); then publish ``told`` (a channel and a message: the relay's,
        for other instances' sessions)."""
        await self.store.publish(f"{NAMESPACE}:{_key(elicitation_id, principal)}", b"complete")
        if told is not None:
            await self.store.publish(*told)

    async def complete_many(self, steps: Sequence[tuple[str, str | None, tuple[str, bytes] | None]]) -> None:
        """``complete`` each of ``steps`` (an id, its principal, what to publish), sent to the
        store together (``stores.writes``: a round trip on Redis for the markers, then one for
        the wake-ups and notices, sent only once every marker is written: Redis runs every
        command of a pipeline whatever failed before it). Any may be written when it fails."""
        marks: list[Write] = []
        tells: list[Write] = []
        for elicitation_id, principal, told in steps:
            key = _key(elicitation_id, principal)
            marks.append(Put(NAMESPACE, key, secrets.token_hex(8).encode("ascii"), self.ttl))
            tells.append(Publish(f"{NAMESPACE}:{key}", b"complete"))
            if told is not None:
                tells.append(Publish(*told))
        await write_all(self.store, marks)
        await write_all(self.store, tells)

    async def done(self, elicitation_id: str, principal: str | None, seen: str) -> bool:
        """True when the step was completed since the marker ``seen`` was read."""
        return await self.marker(elicitation_id, principal) not in ("", seen)

    async def wait(self, elicitation_id: str, principal: str | None, seen: str, timeout: float) -> bool:
        """``done``, once it is or ``timeout`` seconds passed."""

        async def look() -> tuple[bool, bool]:
            finished = await self.done(elicitation_id, principal, seen)
            return finished, finished

        channel = f"{NAMESPACE}:{_key(elicitation_id, principal)}"
        return await watch(self.store, channel, look, timeout, recheck=self.recheck, clock=self.clock)


async def require_step(ctx: Context, asker: Asker, ask: Ask, mode: UrlMode | None) -> Any:
    """The raw answer to the URL step ``ask`` that the request cannot go on without
    (``ctx.require_url``), held on 2026-07-28 until its page is done (see the rules)."""
    step_id = ask.params.get("elicitationId")
    if mode is None or not isinstance(step_id, str) or not is_modern(ctx.revision):
        return await asker.require_url(ask)
    who = ctx._principal  # not ``principal``: reading it here does not make the result the caller's
    principal = who.subject if who is not None else None
    seen: str | None = None  # the marker when the step was first asked
    for nth in range(1, STEP_ASKS + 1):
        step = ask if nth == 1 else Ask(f"{ask.key}#{nth}", ask.method, ask.params)
        slot = ctx.slot(f"mcp-elicit/step/{step.key}")
        if not isinstance(slot.get("seen"), str):  # asked now: a completion since it was first asked counts
            slot["seen"] = seen if seen is not None else await mode.steps.marker(step_id, principal)
            slot["since"] = mode.clock()
        seen = str(slot["seen"])
        if slot.get("held") == "over":  # asked in an earlier round, not done in time
            continue
        answer = await asker.require_url(step)
        if not isinstance(answer, dict) or answer.get("action") != "accept" or slot.get("held") == "done":
            return answer
        if await _held(ctx, mode, step_id, principal, slot):
            slot["held"] = "done"
            return answer
        slot["held"] = "over"
    log.info(
        "%s: the page of URL step %s was not done within %g s, asked %d times; treating it as cancel",
        ctx._label(),
        shown(step_id),
        mode.ask_timeout,
        STEP_ASKS,
    )
    return {"action": "cancel"}


async def _held(
    ctx: Context, mode: UrlMode, step_id: str, principal: str | None, slot: dict[str, Any]
) -> bool:
    """Wait for the step's page (see the rules); False once its time is over. A round
    waits at most ``flow_wait`` seconds, then ends with the state alone while it is not
    done; in a task the handler waits in place until the time is over."""
    steps, seen = mode.steps, str(slot["seen"])
    since = slot.get("since")
    deadline = (float(since) if isinstance(since, int | float) else mode.clock()) + mode.ask_timeout
    if ctx.waits_in_place:  # a task: the handler waits here, whatever the server does
        return await steps.wait(step_id, principal, seen, max(deadline - mode.clock(), 0.0))
    while True:
        wait = functools.partial(
            steps.wait, step_id, principal, seen, min(mode.flow_wait, max(deadline - mode.clock(), 0.0))
        )
        done = await mode.unless_stopping(wait, functools.partial(steps.done, step_id, principal, seen))
        if done:
            return True
        if mode.clock() >= deadline:
            return False
        await ctx.pause()


def _key(elicitation_id: str, principal: str | None) -> str:
    """The store key of a principal's step: a hash (the id is the handler's own text)."""
    return hashlib.sha256(orjson.dumps([principal, elicitation_id])).hexdigest()[:40]


def default_store_made() -> bool:
    """Whether the default store's file exists: a process of this user on this machine
    opened it (one that holds a step did), so a completion made here must reach it. A path
    that cannot be looked at (a directory not this user's, a name too long) counts as
    made: opening it then fails, and the log says why, rather than ``complete_elicitation``
    raising into the webhook that called it."""
    from mcp_elicit.stores.url import STATE_FILE, default_data_dir

    try:
        os.stat(Path(default_data_dir(), STATE_FILE))
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        pass
    return True
