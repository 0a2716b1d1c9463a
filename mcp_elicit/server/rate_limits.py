"""How often one caller may call tools, get prompts, read resources and complete arguments:
``Server(max_calls_per_minute=, call_burst=)``.

Rules:

* Off unless ``max_calls_per_minute`` is given (1e-9 at least: a slower limit's wait would
  not fit the wire's whole seconds, and one with no finite interval would limit nothing;
  1e9 at most, and ``call_burst`` too: thirty times a faster one, the completions', would
  overflow or step under the core's rounding); then each caller makes at most
  ``call_burst`` ``tools/call`` requests at once (a tenth of the minute's, at least one,
  when not given), then one each ``60 / max_calls_per_minute`` seconds (``CallLimit``,
  the core's GCRA, on a monotonic clock). Every ``tools/call`` counts, an unknown tool's
  or a malformed one's too: a flood of them costs the server as much.
* A caller is the authenticated principal (all of its sessions and requests); without
  authentication, every request is one caller, on every revision and transport (stdio:
  the one client of the process; HTTP: every unauthenticated 2026-07-28 request and
  2025-11-25 session together). A session is no caller of its own: opening one is not
  limited, so a client opening one for each call would escape the limit.
* ``prompts/get`` and ``resources/read`` run the server's code too, and may ask questions:
  they share a budget of their own, ``READS`` (10) times the calls' (a host reads
  resources by itself: several attached at once, a subscribed one again when told it
  changed), so neither spends the tool calls' budget nor theirs. Every request counts, an
  unknown prompt's or URI's too.
* A 2026-07-28 ``tools/call``, ``prompts/get`` or ``resources/read`` carrying a
  ``requestState`` (a string: null is no state, and runs as a first request) is a later
  round of a request already counted (a person answered its questions): it is not
  counted as a call or a read, so answering is never refused for the requests made.
  Rounds have a budget of their own, ``ROUNDS`` (10) times the calls' (rate and burst):
  far above a person's pace, it bounds a script sending states again (each state that
  opens runs the handler from its start, and asking again seals a new one). A state that
  does not open is refused before any handler runs.
* ``completion/complete`` has a budget of its own, ``COMPLETIONS`` (30) times the calls'
  (a client completes as the person types: see ``docs/design/rate-limits.md``).
* A refused request is ``RateLimited`` (a ``PrincipalLimitReached``: -32600, the caller's own doing; HTTP 429
  on 2026-07-28, with Retry-After), saying in how many whole seconds to try again, which
  ``data.retryAfter`` holds too; ``data.limit`` names the budget (``BUDGETS``) and
  ``data.most`` its calls a minute. Nothing of the handler runs.
* The count is this process's: instances sharing a store each count on their own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Final

from mcp_elicit.core.rate_limit import CallLimit
from mcp_elicit.core.server import Call
from mcp_elicit.errors import RateLimited
from mcp_elicit.server.auth import Principal
from mcp_elicit.wire.jsonrpc import integral

__all__ = ["ToolCallLimit", "default_burst"]

#: The option every budget is made from.
OPTION: Final = "max_calls_per_minute"
#: How many times a call's budget its later rounds have (the rounds carrying answers).
ROUNDS: Final = 10
#: How many times a call's budget ``prompts/get`` and ``resources/read`` have together.
READS: Final = 10
#: How many times a call's budget ``completion/complete`` has.
COMPLETIONS: Final = 30
#: Each budget: its ``data.limit`` name, how many times the calls' it is, what it counts.
BUDGETS: Final = (
    ("max_calls_per_minute", 1, "tool calls"),
    ("max_rounds_per_minute", ROUNDS, "requests carrying a requestState (later rounds)"),
    ("max_reads_per_minute", READS, "prompts/get and resources/read requests"),
    ("max_completions_per_minute", COMPLETIONS, "completions"),
)


def default_burst(per_minute: float) -> int:
    """A tenth of a minute's calls, at least one (as a principal's share is a tenth)."""
    return max(1, math.floor(per_minute / 10))


class _Budget:
    """One kind of request's budget, per caller, and the words of its refusal."""

    __slots__ = ("limit", "most", "name", "option", "steps", "what")

    def __init__(self, name: str, times: int, what: str, per_minute: float, burst: int) -> None:
        self.name, self.what = name, what
        self.steps = CallLimit(times * per_minute / 60.0, times * burst)
        # 12 digits: the product's float noise (30 * 0.06 is 1.7999999999999998) is no rate;
        # the message says it as data.most does (":g" would cut 1.23456789 to 1.23457)
        self.most, at_once = integral(float(f"{times * per_minute:.12g}")), times * burst
        self.limit = f"{self.most} a minute" + (f", {at_once} at once" if at_once > 1 else "")
        self.option = OPTION if times == 1 else f"{times} times {OPTION}"

    def take(self, principal: Principal | None, now: float) -> None:
        """Count one request of the caller, or raise ``RateLimited``."""
        key = None if principal is None else principal.subject
        wait = self.steps.take(key, now)
        if wait:
            after = max(1, math.ceil(wait))
            who = "unauthenticated callers" if principal is None else f"principal {principal.subject!r}"
            raise RateLimited(
                f"Too many {self.what}: {who} may make {self.limit} ({self.option}); try again in {after} s",
                {"limit": self.name, "most": self.most, "retryAfter": after},
            )


class ToolCallLimit:
    """The server's rate limits per caller: tool calls, later rounds, prompts and resource
    reads, completions."""

    __slots__ = ("burst", "calls", "clock", "completions", "per_minute", "reads", "rounds")

    def __init__(self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.burst = burst
        self.clock = clock
        self.calls, self.rounds, self.reads, self.completions = (
            _Budget(*b, per_minute, burst) for b in BUDGETS
        )

    def check(self, call: Call, principal: Principal | None) -> None:
        """Count ``call``, a ``tools/call``, ``prompts/get`` or ``resources/read`` (a later
        round of one: on the rounds' budget), or raise ``RateLimited`` saying when to try
        again."""
        if call.modern and isinstance(call.params.get("requestState"), str):  # null is no state
            budget = self.rounds
        else:
            budget = self.calls if call.method == "tools/call" else self.reads
        budget.take(principal, self.clock())

    def check_completion(self, principal: Principal | None) -> None:
        """Count a ``completion/complete``, or raise ``RateLimited``."""
        self.completions.take(principal, self.clock())
