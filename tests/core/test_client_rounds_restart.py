"""The client's rounds started again after the server refused a retry's state
(core.rounds ``Rounds.restart``), no I/O: from the original params, once, and the answers
given before kept for identical questions only."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.rounds import NeedInput, Rounds, refuses_state
from mcp_elicit.errors import RoundsExceeded

NAME = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}
MOOD = {"method": "elicitation/create", "params": {"message": "Mood?", "requestedSchema": {"type": "object"}}}
ANN = {"action": "accept", "content": {"name": "Ann"}}
CALM = {"action": "accept", "content": {"mood": "calm"}}


def need(state: str | None = None, **requests: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return result


def _answered_twice() -> Rounds:
    """A request whose person answered the name, then the mood (the retry of which the
    server then refuses)."""
    rounds = Rounds("tools/call", {"name": "survey", "arguments": {"a": 1}})
    step = rounds.step(need("s1", name=NAME))
    assert isinstance(step, NeedInput)
    rounds.retry({"name": ANN})
    step = rounds.step(need("s2", mood=MOOD))
    assert isinstance(step, NeedInput)
    sent = rounds.retry({"mood": CALM})
    assert sent["requestState"] == "s2"
    return rounds


def test_a_restart_is_the_original_params_and_counts_from_zero() -> None:
    rounds = _answered_twice()
    assert rounds.restart() == {"name": "survey", "arguments": {"a": 1}}
    assert rounds.restarted
    assert (rounds.rounds, rounds.state_only, rounds.waited) == (0, 0, 0)


def test_identical_questions_after_a_restart_get_the_answers_given_before() -> None:
    rounds = _answered_twice()
    rounds.restart()
    step = rounds.step(need("t1", name=NAME))
    assert isinstance(step, NeedInput)
    assert step.requests == () and step.known == {"name": ANN}
    assert rounds.retry({}) == {
        "name": "survey",
        "arguments": {"a": 1},
        "inputResponses": {"name": ANN},
        "requestState": "t1",
    }


def test_a_question_that_differs_after_a_restart_is_asked() -> None:
    rounds = _answered_twice()
    rounds.restart()
    other = {"method": "elicitation/create", "params": {**MOOD["params"], "message": "Mood now?"}}
    step = rounds.step(need("t1", name=NAME, mood=other, again={**NAME}))
    assert isinstance(step, NeedInput)
    assert [r.key for r in step.requests] == ["mood", "again"]  # another text; another key
    assert step.known == {"name": ANN}
    sent = rounds.retry({"mood": CALM, "again": ANN})
    assert list(sent["inputResponses"]) == ["name", "mood", "again"]  # as the server asked them


def test_before_a_restart_an_identical_question_is_asked_again() -> None:
    rounds = _answered_twice()
    step = rounds.step(need("s3", name=NAME))
    assert isinstance(step, NeedInput)
    assert [r.key for r in step.requests] == ["name"] and step.known == {}


def test_no_restart_after_a_retry_without_state_nor_a_second_one() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    rounds.step(need(None, name=NAME))
    rounds.retry({"name": ANN})
    assert rounds.restart() is None  # that -32602 is about something else
    assert not rounds.restarted
    rounds = _answered_twice()
    assert rounds.restart() is not None
    assert rounds.restart() is None  # the first round after it carried no state
    rounds.step(need("t1", name=NAME))
    rounds.retry({})
    assert rounds.restart() is None  # at most once


def test_a_refusal_of_the_state_is_told_from_any_other() -> None:
    assert refuses_state("Invalid or expired requestState", None)
    assert refuses_state("the state has expired", {"why": 1})
    assert not refuses_state("Invalid or expired requestState", {"requestState": "v1.renewed"})
    assert not refuses_state(
        "Invalid params: inputResponses['llm'] answers sampling/createMessage, but ...", None
    )
    assert not refuses_state(
        "Invalid params: the answers given so far take 2471 bytes, more than a requestState carries", None
    )
    assert not refuses_state("Invalid params: no account named 'Ann'", None)
    assert not refuses_state("Invalid params: a statement is required", None)


URL = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://x.example/a", "elicitationId": "e1"},
}


def test_a_page_accepted_before_a_restart_is_not_said_again_nor_its_wait_begun_again() -> None:
    """The person is on the page (accepted before the state lapsed): after the restart the
    step is answered from before, not shown; its wait is not said a second time and goes
    on from when the page was first asked (``url_wait``, a page's life), not from zero."""
    rounds = Rounds("tools/call", {"name": "t"})
    rounds.step(need("s1", u=URL), 0.0)
    rounds.retry({"u": {"action": "accept"}})
    step = rounds.step(need("s2"), 1.0)
    assert isinstance(step, NeedInput) and [p.key for p in step.awaiting_pages] == ["u"]
    rounds.retry({})
    assert rounds.restart() is not None
    step = rounds.step(need("t1", u=URL), 500.0)
    assert isinstance(step, NeedInput) and step.requests == () and list(step.known) == ["u"]
    rounds.retry({})
    step = rounds.step(need("t2"), 501.0)
    assert isinstance(step, NeedInput) and step.awaiting_pages == ()  # said once, before
    rounds.retry({})
    with pytest.raises(RoundsExceeded, match="url_wait"):
        rounds.step(need("t3"), 601.0)  # 601 s after the page was first asked
