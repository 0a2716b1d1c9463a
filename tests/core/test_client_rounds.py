"""The client's multi round-trip bookkeeping (core.rounds), no I/O."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.core.rounds import Complete, NeedInput, RoundLimits, Rounds
from mcp_elicit.errors import ConfigError, ProtocolViolation, RoundsExceeded

ASK = {
    "method": "elicitation/create",
    "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}},
}


def need(state: str | None = None, **requests: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def test_a_result_without_result_type_is_complete() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    step = rounds.step({"content": []})
    assert isinstance(step, Complete)
    assert step.result == {"content": []}


def test_complete_is_final_and_copied() -> None:
    result = {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}
    step = Rounds("tools/call", {"name": "t"}).step(result)
    assert isinstance(step, Complete)
    assert step.result == result
    assert step.result is not result


def test_retry_carries_the_original_params_answers_under_the_same_keys_and_the_state() -> None:
    original = {"name": "book", "arguments": {"restaurant": "noma"}}
    rounds = Rounds("tools/call", original)
    step = rounds.step(need("opaque-1", details=ASK, confirm=ASK))
    assert isinstance(step, NeedInput)
    assert [r.key for r in step.requests] == ["details", "confirm"]
    assert step.delay == 0.0
    params = rounds.retry({"details": {"action": "accept", "content": {}}, "confirm": {"action": "decline"}})
    assert params == {
        "name": "book",
        "arguments": {"restaurant": "noma"},
        "inputResponses": {"details": {"action": "accept", "content": {}}, "confirm": {"action": "decline"}},
        "requestState": "opaque-1",
    }
    assert original == {"name": "book", "arguments": {"restaurant": "noma"}}


def test_no_state_means_no_state_in_the_retry() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    rounds.step(need(None, confirm=ASK))
    params = rounds.retry({"confirm": {"action": "cancel"}})
    assert "requestState" not in params
    assert params["inputResponses"] == {"confirm": {"action": "cancel"}}


def test_state_of_an_earlier_round_never_leaks_into_a_later_one() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    rounds.step(need("round-1", a=ASK))
    first = rounds.retry({"a": {"action": "accept"}})
    rounds.step(need(None, b=ASK))
    second = rounds.retry({"b": {"action": "accept"}})
    assert first["requestState"] == "round-1"
    assert "requestState" not in second
    assert second["inputResponses"] == {"b": {"action": "accept"}}


def test_given_retry_keys_in_the_original_params_are_dropped() -> None:
    rounds = Rounds("tools/call", {"name": "t", "requestState": "stale", "inputResponses": {"x": {}}})
    assert rounds.params == {"name": "t"}


@given(st.text(min_size=0, max_size=200))
def test_request_state_is_echoed_byte_for_byte(state: str) -> None:
    rounds = Rounds("prompts/get", {"name": "p"})
    rounds.step(need(state, k=ASK))
    assert rounds.retry({"k": {"action": "accept"}})["requestState"] == state


def test_answers_must_match_the_keys_asked() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    rounds.step(need("s", a=ASK, b=ASK))
    with pytest.raises(ValueError, match="missing \\['b'\\], extra \\['c'\\]"):
        rounds.retry({"a": {}, "c": {}})


def test_retry_without_a_pending_step_is_a_bug() -> None:
    with pytest.raises(RuntimeError):
        Rounds("tools/call", {"name": "t"}).retry({})


def test_state_only_rounds_back_off_then_fail() -> None:
    limits = RoundLimits(max_rounds=20, max_state_only=3, backoff=(0.0, 0.5, 2.0))
    rounds = Rounds("resources/read", {"uri": "x://y"}, limits)
    delays = []
    for _ in range(3):
        step = rounds.step(need("s"))
        assert isinstance(step, NeedInput)
        assert step.requests == ()
        delays.append(step.delay)
        assert "inputResponses" not in rounds.retry({})
    assert delays == [0.0, 0.5, 2.0]
    with pytest.raises(RoundsExceeded, match=r"4 times in a row with only a requestState.*the limit is 3"):
        rounds.step(need("s"))


def test_a_round_with_questions_resets_the_state_only_count() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, RoundLimits(max_rounds=50, max_state_only=2))
    for _ in range(5):
        rounds.step(need("s"))
        rounds.retry({})
        rounds.step(need("s"))
        rounds.retry({})
        rounds.step(need("s", q=ASK))
        rounds.retry({"q": {"action": "accept"}})


def test_the_last_backoff_repeats() -> None:
    limits = RoundLimits(backoff=(0.1, 0.2))
    assert [limits.delay(n) for n in range(1, 5)] == [0.1, 0.2, 0.2, 0.2]
    assert RoundLimits(backoff=()).delay(3) == 0.0


def test_rounds_are_bounded() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, RoundLimits(max_rounds=3))
    for _ in range(2):
        rounds.step(need("s", q=ASK))
        rounds.retry({"q": {"action": "accept"}})
    with pytest.raises(RoundsExceeded, match="after 3 rounds \\(the limit is 3\\)"):
        rounds.step(need("s", q=ASK))


def test_a_complete_result_after_many_rounds_is_still_fine() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, RoundLimits(max_rounds=3))
    for _ in range(2):
        rounds.step(need("s", q=ASK))
        rounds.retry({"q": {"action": "accept"}})
    assert isinstance(rounds.step({"resultType": "complete"}), Complete)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"resultType": "partial"}, "resultType 'partial'"),
        ({"resultType": "input_required"}, "neither inputRequests nor requestState"),
        # it said "neither inputRequests nor requestState" to a server that sent {}
        (
            {"resultType": "input_required", "inputRequests": {}},
            r"input_required with an empty inputRequests \(nothing to answer\) and no requestState",
        ),
        ({"resultType": "input_required", "requestState": 7}, "must be a string"),
        # null was taken for absent: the state went unechoed, the questions unasked
        (
            {"resultType": "input_required", "inputRequests": {"a": ASK}, "requestState": None},
            "requestState in the tools/call result must be a string, not None",
        ),
        (
            {"resultType": "input_required", "inputRequests": None, "requestState": "s"},
            "inputRequests in the tools/call result must be an object of key to request, not None",
        ),
        ({"resultType": "input_required", "inputRequests": []}, "must be an object"),
        ({"resultType": "input_required", "inputRequests": {"a": "x"}}, "must be an object"),
        (
            {"resultType": "input_required", "inputRequests": {"a": {"method": "tools/call", "params": {}}}},
            "may only ask for",
        ),
        (
            {"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list", "params": 3}}},
            "must be an object",
        ),
        (
            {"resultType": "input_required", "inputRequests": {"a": {"method": ["roots/list"]}}},
            r"asks for \['roots/list'\]; a server may only ask for",
        ),
        (
            {"resultType": "input_required", "inputRequests": {"a": {"method": {"m": 1}}}},
            "a server may only ask for",
        ),
    ],
)
def test_malformed_results_are_protocol_violations(result: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolViolation, match=message):
        Rounds("tools/call", {"name": "t"}).step(result)


def test_input_required_only_on_the_three_methods() -> None:
    with pytest.raises(ProtocolViolation, match="only tools/call, prompts/get and resources/read"):
        Rounds("tools/list", {}).step(need("s"))


def test_missing_params_of_an_input_request_mean_empty() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    step = rounds.step({"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}})
    assert isinstance(step, NeedInput)
    assert step.requests[0].params == {}


def test_a_round_with_more_input_requests_than_the_limit_is_a_violation() -> None:
    rounds = Rounds("tools/call", {"name": "t"})
    asks = {f"q{i}": ASK for i in range(33)}
    with pytest.raises(ProtocolViolation, match=r"33 input requests in one round.*at most 32"):
        rounds.step(need(**asks))


def test_the_input_request_limit_is_configurable() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, RoundLimits(max_requests=2))
    step = rounds.step(need(a=ASK, b=ASK))
    assert isinstance(step, NeedInput) and len(step.requests) == 2
    rounds.retry({"a": {}, "b": {}})
    with pytest.raises(ProtocolViolation, match="at most 2"):
        rounds.step(need(a=ASK, b=ASK, c=ASK))


def test_a_request_state_longer_than_the_limit_is_a_violation() -> None:
    rounds = Rounds("tools/call", {"name": "t"}, RoundLimits(max_state_bytes=8))
    step = rounds.step(need("12345678", a=ASK))
    assert isinstance(step, NeedInput) and step.state == "12345678"
    rounds.retry({"a": {}})
    with pytest.raises(ProtocolViolation, match=r"requestState of 9 bytes.*at most 8"):
        rounds.step(need("é2345678", a=ASK))  # 8 characters, 9 bytes


def _nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_a_server_value_nested_too_deeply_to_quote_is_still_a_protocol_violation() -> None:
    # 1000 levels (a JSON reader takes 1024): quoting it with repr raised RecursionError
    deep = _nested(1000)
    with pytest.raises(ProtocolViolation, match=r"resultType \[\[\[\[\.\.\.\]\]\]\]"):
        Rounds("tools/call", {"name": "t"}).step({"resultType": deep})
    asks = {"k": {"method": deep, "params": {}}}
    with pytest.raises(ProtocolViolation, match=r"asks for \[\[\[\[\.\.\.\]\]\]\]"):
        Rounds("tools/call", {"name": "t"}).step({"resultType": "input_required", "inputRequests": asks})


def test_a_long_value_is_quoted_short() -> None:
    with pytest.raises(ProtocolViolation) as caught:
        Rounds("tools/call", {"name": "t"}).step({"resultType": "x" * 1_000_000})
    assert len(str(caught.value)) < 300


def test_the_request_state_stays_out_of_reprs() -> None:
    sealed = "v1.0011223344556677.sealed-answers-of-the-last-round"
    rounds = Rounds("tools/call", {"name": "t"})
    step = rounds.step(need(sealed, a=ASK))
    assert isinstance(step, NeedInput)
    assert step.state == sealed  # still sent with the retry
    assert sealed not in repr(step)
    assert sealed not in repr(rounds)
    assert "elicitation/create" in repr(step)  # what was asked is still shown


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("max_rounds", 0, "a whole number, at least 1"),
        ("max_rounds", None, "a whole number, at least 1"),
        ("max_rounds", 2.5, "a whole number, at least 1"),
        ("max_rounds", True, "a whole number, at least 1"),
        ("max_requests", 0, "a whole number, at least 1"),
        ("max_requests", "32", "a whole number, at least 1"),
        ("max_state_only", -1, "a whole number, at least 0"),
        ("max_state_bytes", -1, "a whole number, at least 0"),
        ("backoff", (0.1, -1), "a sequence of finite numbers of seconds, at least 0"),
        ("backoff", (float("nan"),), "a sequence of finite numbers of seconds, at least 0"),
        ("backoff", 0.5, "a sequence of finite numbers of seconds, at least 0"),
        ("url_wait", -1, "a finite number of seconds, at least 0"),
        ("url_wait", float("inf"), "a finite number of seconds, at least 0"),
        ("url_wait", "600", "a finite number of seconds, at least 0"),
        ("outage_wait", -1, "a finite number of seconds, at least 0"),
        ("outage_wait", float("nan"), "a finite number of seconds, at least 0"),
    ],
)
def test_limits_that_cannot_work_are_refused_naming_them(option: str, value: object, expected: str) -> None:
    """They were taken: None or "32" failed mid-call with a TypeError after the first
    round, 0 rounds failed the first input_required 'after 1 rounds (the limit is 0)', a
    negative or nan delay retried at once, and a lone number failed the first state-only
    round with a TypeError."""
    with pytest.raises(
        ConfigError, match=rf"^RoundLimits {option} {re.escape(repr(value))}: expected {expected}$"
    ):
        RoundLimits(**{option: value})  # type: ignore[arg-type]


def test_limits_at_their_least_are_taken() -> None:
    limits = RoundLimits(max_rounds=1, max_state_only=0, max_requests=1, max_state_bytes=0, backoff=[0])  # type: ignore[arg-type]
    assert limits.backoff == (0.0,)
    with pytest.raises(RoundsExceeded, match=r"after 1 rounds \(the limit is 1\)"):
        Rounds("tools/call", {"name": "t"}, limits).step(need(q=ASK))
