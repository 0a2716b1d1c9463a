"""The completions of URL steps that the store refuses one at a time (``server/step_records.py``):
a user's own store failing for one key (``OSError`` for that key alone), while it takes the
ones behind it, must not hold the line up.

Rules:

* A completion whose write fails for the store being down is tried once more with the next
  one in the line, at once. That one written, the first is the store's trouble alone: it is
  set aside (``set_aside``), said once as a warning, and tried again on its own after 1,
  2, 4... up to ``RETRY_MOST`` seconds (``retry_due``) while the line goes on; the next one
  failing too, the store is down, and the line waits as it does for an outage.
* A completion set aside is given up ``RETRY_FOR`` seconds after it was made, or when the
  server stops (one more try first), or at a failure that is not the store being down,
  each said (``step_line.lost``); written at last, it is said at INFO. Its further failures
  are said at DEBUG only: its tries (``write_alone``) go past the server's view of its
  store (``stores.guarded.Guarded``), which says an outage when a call fails and its end
  when the next succeeds, so a pair of lines (an ERROR) a try, while the others are
  written between them. That view still says the failure that set it aside, and any
  outage of the store, as the line's own writes meet it.
* Two of them failing in a row for the store being down, the store is down: those whose
  time came too wait for the next round (the line goes on meanwhile), and at the stop they
  are given up at once, in one warning, untried. Each try on a store that does not answer
  waits up to its timeout (a silent Redis: ten seconds), so trying every one would make a
  stop last as many times that as there are completions set aside.
* The completions set aside count toward the line's bound.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from mcp_elicit.server.step_line import Completion, Line, lost
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores.guarded import Guarded

__all__ = ["retry_due", "set_aside", "write_alone"]

log = logging.getLogger("mcp_elicit.server")


def set_aside(line: Line, done: Completion, said: str, first: float, most: float, lasts: float) -> None:
    """``done`` failed alone (``said``): try it again on its own from ``first`` seconds on."""
    done.delay = first
    done.retry_at = line.loop.time() + first
    line.aside.append(done)
    log.warning(
        "the completion of URL step %r could not be recorded in the store (%s), though the store "
        "takes the completions behind it: it is tried again on its own after %g, %g, %g... up to "
        "%g s while the others go on, and given up %g s after it was made",
        done.elicitation_id[:64],
        said,
        first,
        first * 2,
        first * 4,
        most,
        lasts,
    )


async def write_alone(steps: StepCompletions | None, done: Completion) -> None:
    """Write ``done``, set aside, to ``steps`` (None: nowhere any more), past ``Guarded``."""
    if steps is None:
        return
    if isinstance(steps.store, Guarded):
        steps = StepCompletions(steps.store.inner, ttl=steps.ttl)
    notice = None if done.told is None else done.told()  # made now: see ``step_line.Told``
    if not done.marked:
        await steps.mark(done.elicitation_id, done.principal)
        done.marked = True
    await steps.tell(done.elicitation_id, done.principal, notice)


async def retry_due(
    line: Line,
    write: Callable[[Completion], Awaitable[None]],
    failure: Callable[[Exception], tuple[str, bool]],
    most: float,
    lasts: float,
    *,
    stopping: bool,
) -> None:
    """Try once each completion set aside whose time came (every one when ``stopping``).
    ``failure`` says a write's error: its words, and whether it is the store being down."""
    due = [done for done in line.aside if stopping or done.retry_at <= line.loop.time()]
    downs = 0  # failed in a row for the store being down
    for tried, done in enumerate(due, 1):
        try:
            await write(done)  # left in ``aside`` meanwhile: a cancellation names it
        except Exception as exc:  # any backend's failure
            said, down = failure(exc)
            downs = downs + 1 if down else 0
            if stopping or not down or done.until <= line.loop.time():
                line.aside.remove(done)
                if stopping:
                    said += "; given up: the server is stopping"
                elif down:
                    said += f"; given up: tried for {lasts:g} s"
                lost([done], said)
            else:
                done.delay = min(done.delay * 2, most)
                done.retry_at = line.loop.time() + done.delay
                log.debug("the completion of URL step %r still fails: %s", done.elicitation_id[:64], said)
            if downs >= 2:  # the store is down: the others wait, or (stopping) are given up
                _give_up_untried(line, due[tried:], stopping=stopping)
                return
            continue
        downs = 0
        line.aside.remove(done)
        log.info("the completion of URL step %r is recorded, at last", done.elicitation_id[:64])


def _give_up_untried(line: Line, rest: list[Completion], *, stopping: bool) -> None:
    """At the stop, give up ``rest`` (set aside, not tried: the store is down), said at once."""
    if not stopping or not rest:
        return
    for done in rest:
        line.aside.remove(done)
    lost(rest, "not tried again: two before them failed, the store is down; given up: the server is stopping")
