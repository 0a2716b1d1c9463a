"""The client's multi round-trip bookkeeping (core.rounds) while a URL step it accepted is
pending: state-only rounds are bounded by time (``RoundLimits.url_wait``, from the round
that asked the step), not by count, and said once; with nothing pending they are counted.
No I/O: the clock is a number."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.rounds import NeedInput, RoundLimits, Rounds
from mcp_elicit.errors import RoundsExceeded

URL = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://idp.example.com/s"},
}
FORM = {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {"type": "object"}}}
ACCEPT = {"action": "accept"}
LIMITS = RoundLimits(max_rounds=6, max_state_only=2, url_wait=600)


def need(**requests: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"resultType": "input_required", "requestState": "s"}
    if requests:
        out["inputRequests"] = requests
    return out


def accepted(limits: RoundLimits = LIMITS, at: float = 100.0) -> Rounds:
    """Rounds whose first round, at ``at``, asked a URL step the person accepted."""
    rounds = Rounds("tools/call", {"name": "t"}, limits)
    rounds.step(need(signin=URL), at)
    rounds.retry({"signin": ACCEPT})
    return rounds


def test_an_accepted_page_is_waited_for_past_every_count_and_said_once() -> None:
    rounds = accepted()
    said = []
    for n in range(50):  # more than max_state_only and max_rounds
        step = rounds.step(need(), 100.0 + n * 10)
        assert isinstance(step, NeedInput) and step.requests == ()
        said.append([r.key for r in step.awaiting_pages])
        rounds.retry({})
    assert said == [["signin"]] + [[]] * 49
    assert rounds.waited == 50


def test_the_wait_ends_after_url_wait_from_the_round_that_asked() -> None:
    rounds = accepted(at=100.0)
    rounds.step(need(), 700.0)  # 600 s: still within
    rounds.retry({})
    with pytest.raises(
        RoundsExceeded,
        match=r"waited more than 600 s for the page at idp\.example\.com to be finished \(RoundLimits\.url_wait\)",
    ):
        rounds.step(need(), 700.5)


@pytest.mark.parametrize("answer", [{"action": "decline"}, {"action": "cancel"}])
def test_a_page_not_accepted_is_not_waited_for(answer: dict[str, Any]) -> None:
    rounds = Rounds("tools/call", {"name": "t"}, LIMITS)
    rounds.step(need(signin=URL), 0.0)
    rounds.retry({"signin": answer})
    for n in range(2):
        assert rounds.step(need(), 1.0 + n).awaiting_pages == ()  # type: ignore[union-attr]
        rounds.retry({})
    with pytest.raises(RoundsExceeded, match=r"3 times in a row.*the limit is 2"):
        rounds.step(need(), 5.0)


def test_an_accepted_form_is_not_a_page() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, LIMITS)
    rounds.step(need(q=FORM), 0.0)
    rounds.retry({"q": {"action": "accept", "content": {}}})
    for n in range(2):
        rounds.step(need(), 1.0 + n)
        rounds.retry({})
    with pytest.raises(RoundsExceeded, match=r"3 times in a row"):
        rounds.step(need(), 5.0)


def test_without_a_clock_the_rounds_are_counted() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, LIMITS)
    rounds.step(need(signin=URL))
    rounds.retry({"signin": ACCEPT})
    for _ in range(2):
        rounds.step(need())
        rounds.retry({})
    with pytest.raises(RoundsExceeded, match=r"3 times in a row"):
        rounds.step(need())


def test_a_round_that_asks_again_ends_the_wait() -> None:
    """The server moved on (the page is done, it asks a form): its state-only rounds are
    counted again, and the rounds that asked count against max_rounds."""
    rounds = accepted()
    for n in range(5):
        rounds.step(need(), 101.0 + n)
        rounds.retry({})
    rounds.step(need(q=FORM), 110.0)
    rounds.retry({"q": {"action": "accept", "content": {}}})
    for n in range(2):
        rounds.step(need(), 111.0 + n)
        rounds.retry({})
    with pytest.raises(RoundsExceeded, match=r"3 times in a row"):
        rounds.step(need(), 120.0)


def test_a_server_that_asks_a_page_each_round_is_still_bounded_by_max_rounds() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, LIMITS)
    for n in range(5):
        rounds.step(need(signin=URL), float(n))
        rounds.retry({"signin": ACCEPT})
        rounds.step(need(), n + 0.5)  # waited for: not counted
        rounds.retry({})
    with pytest.raises(RoundsExceeded, match=r"after 6 rounds \(the limit is 6\)"):
        rounds.step(need(signin=URL), 10.0)


def test_a_new_page_has_its_own_wait_and_is_said_again() -> None:
    rounds = accepted(at=0.0)
    assert rounds.step(need(), 500.0).awaiting_pages  # type: ignore[union-attr]
    rounds.retry({})
    rounds.step(need(connect=URL), 550.0)
    rounds.retry({"connect": ACCEPT})
    step = rounds.step(need(), 1100.0)  # 700 s after the first ask, 550 s after this one
    assert isinstance(step, NeedInput)
    assert [r.key for r in step.awaiting_pages] == ["connect"]


def test_every_page_accepted_in_one_round_is_waited_for_and_said_once() -> None:
    """A round asked two pages and the person accepted both: the server waits for both,
    so the client says it waits for each, once, in the order asked (not only the last)."""
    other = {**URL, "params": {**URL["params"], "url": "https://pay.example.net/p"}}
    rounds = Rounds("tools/call", {"name": "t"}, LIMITS)
    rounds.step(need(signin=URL, pay=other, q=FORM), 0.0)
    rounds.retry({"signin": ACCEPT, "pay": ACCEPT, "q": {"action": "accept", "content": {}}})
    said = []
    for n in range(3):
        step = rounds.step(need(), 1.0 + n)
        assert isinstance(step, NeedInput)
        said.append([r.key for r in step.awaiting_pages])
        rounds.retry({})
    assert said == [["signin", "pay"], [], []]
    with pytest.raises(RoundsExceeded, match=r"for the pages at idp\.example\.com and pay\.example\.net"):
        rounds.step(need(), 601.0)
