"""How often one caller may call tools: ``Server(max_calls_per_minute=, call_burst=)``.

Rules:

* Off unless ``max_calls_per_minute`` is given (1e-9 at least: a slower limit's wait would
  not fit the wire's whole seconds, and one with no finite interval would limit nothing);
  then each caller makes at most
  ``call_burst`` ``tools/call`` requests at once (a tenth of the minute's, at least one,
  when not given), then one each ``60 / max_calls_per_minute`` seconds (``CallLimit``,
  the core's GCRA, on a monotonic clock). Every ``tools/call`` counts, an unknown tool's
  or a malformed one's too: a flood of them costs the server as much.
* A caller is what each principal's share of sessions and tasks is keyed by: the
  authenticated principal (all of its sessions and requests); without authentication, a
  2025-11-25 (or earlier) session on its own, and every other request together (stdio: the
  one client of the process; HTTP: every unauthenticated 2026-07-28 caller as one).
* A 2026-07-28 ``tools/call`` carrying a ``requestState`` (a string: null is no state, and
  runs as a first call) is a later round of a call already counted (a person answered its
  questions): it is not counted as a call, so answering is never refused for the calls
  made. Rounds have a budget of their own, ``ROUNDS`` (10) times the calls' (rate and
  burst): far above a person's pace, it bounds a script sending states again (each state
  that opens runs the tool from its start, and asking again seals a new one). A state
  that does not open is refused before any handler runs.
* A refused call is ``PrincipalLimitReached`` (-32600, the caller's own doing; HTTP 429
  on 2026-07-28, with Retry-After), saying in how many whole seconds to try again, which
  ``data.retryAfter`` holds too. Nothing of the handler runs.
* The count is this process's: instances sharing a store each count on their own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable

from mcp_elicit.core.rate_limit import CallLimit
from mcp_elicit.core.server import Call
from mcp_elicit.errors import PrincipalLimitReached
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.questions import Asker
from mcp_elicit.server.rev_2025_11_25 import SessionAsker
from mcp_elicit.wire.jsonrpc import integral

__all__ = ["ToolCallLimit", "default_burst"]

#: The option a refusal names.
OPTION = "max_calls_per_minute"
#: How many times a call's budget its later rounds have (the rounds carrying answers).
ROUNDS = 10


def default_burst(per_minute: float) -> int:
    """A tenth of a minute's calls, at least one (as a principal's share is a tenth)."""
    return max(1, math.floor(per_minute / 10))


class ToolCallLimit:
    """The server's ``tools/call`` rate limit, per caller; later rounds apart."""

    __slots__ = ("burst", "calls", "clock", "per_minute", "rounds")

    def __init__(self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.burst = burst
        self.clock = clock
        self.calls = CallLimit(per_minute / 60.0, burst)
        self.rounds = CallLimit(ROUNDS * per_minute / 60.0, ROUNDS * burst)

    def check(self, call: Call, principal: Principal | None, asker: Asker | None) -> None:
        """Count ``call``, or raise ``PrincipalLimitReached`` saying when to try again."""
        if principal is not None:
            key: Hashable = ("principal", principal.subject)
            who = f"principal {principal.subject!r}"
        elif isinstance(asker, SessionAsker):
            key, who = ("session", asker.session.id), "this session"
        else:
            key, who = None, "unauthenticated callers"
        later = call.modern and isinstance(call.params.get("requestState"), str)  # null is no state
        wait = (self.rounds if later else self.calls).take(key, self.clock())
        if wait:
            after = max(1, math.ceil(wait))
            times = ROUNDS if later else 1
            what = "later rounds of tool calls" if later else "tool calls"
            most = f"{times * self.per_minute:g} a minute" + (
                f", {times * self.burst} at once" if times * self.burst > 1 else ""
            )
            option = f"{ROUNDS} times {OPTION}" if later else OPTION
            raise PrincipalLimitReached(
                f"Too many {what}: {who} may make {most} ({option}); try again in {after} s",
                {"limit": OPTION, "most": integral(times * self.per_minute), "retryAfter": after},
            )
