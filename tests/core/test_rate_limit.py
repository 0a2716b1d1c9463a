"""The sans-IO rate limits: time is a number the test passes, never slept."""

from __future__ import annotations

import math

import pytest

from mcp_elicit.core.rate_limit import CallLimit, LogBudget


def test_a_burst_goes_at_once_then_one_each_interval() -> None:
    limit = CallLimit(per_second=2.0, burst=3)
    assert [limit.take("a", 100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limit.take("a", 100.0)
    assert wait == pytest.approx(0.5)
    assert limit.take("a", 100.0 + wait - 0.01) > 0  # not a moment early
    assert limit.take("a", 100.0 + wait) == 0.0  # then exactly one
    assert limit.take("a", 100.0 + wait) == pytest.approx(0.5)


def test_a_refused_step_is_not_counted() -> None:
    limit = CallLimit(per_second=1.0, burst=1)
    assert limit.take("a", 0.0) == 0.0
    for _ in range(50):  # hammering while refused does not push the wait further
        assert limit.take("a", 0.25) == pytest.approx(0.75)
    assert limit.take("a", 1.0) == 0.0


def test_each_key_has_its_own_budget() -> None:
    limit = CallLimit(per_second=1.0, burst=1)
    assert limit.take(("principal", "alice"), 0.0) == 0.0
    assert limit.take(("principal", "alice"), 0.0) > 0
    assert limit.take(("principal", "bob"), 0.0) == 0.0
    assert limit.take(None, 0.0) == 0.0


def test_an_idle_caller_gets_its_whole_burst_back_and_no_more() -> None:
    limit = CallLimit(per_second=1.0, burst=2)
    assert limit.take("a", 0.0) == limit.take("a", 0.0) == 0.0
    later = 3600.0  # an hour idle: the burst again, not an hour's worth
    assert limit.take("a", later) == limit.take("a", later) == 0.0
    assert limit.take("a", later) > 0


def test_a_clock_going_back_allows_nothing_early() -> None:
    limit = CallLimit(per_second=1.0, burst=1)
    assert limit.take("a", 10.0) == 0.0
    assert limit.take("a", 5.0) == pytest.approx(6.0)  # the second due at 11: five more to wait


def test_keys_with_no_debt_are_forgotten() -> None:
    limit = CallLimit(per_second=10.0, burst=1)
    for n in range(1000):
        assert limit.take(n, float(n)) == 0.0  # each one second after the last: no debt kept
    assert len(limit) < 130


def test_keys_in_debt_are_kept_through_a_sweep() -> None:
    limit = CallLimit(per_second=1.0, burst=1)
    for n in range(200):
        limit.take(n, 0.0)
    assert limit.take(0, 0.0) > 0  # swept more than once, still remembered
    assert len(limit) == 200


@pytest.mark.parametrize(
    ("per_second", "burst"),
    [(0.0, 1), (-1.0, 1), (math.nan, 1), (math.inf, 1), (1.0, 0), (1e-320, 1), (1e-320, 3)],
)
def test_a_limit_that_cannot_work_is_refused(per_second: float, burst: int) -> None:
    with pytest.raises(ValueError, match="rate limit"):
        CallLimit(per_second, burst)


def test_log_messages_past_the_budget_are_dropped_and_counted() -> None:
    budget = LogBudget(per_second=10.0, burst=2)
    assert budget.take(0.0, 1) == (True, None, 1)
    assert budget.take(0.0, 1) == (True, None, 1)
    send, notice, _ = budget.take(0.0, 1)  # the first drop says so, once
    assert not send and notice is not None and "past 10 a second" in notice
    assert budget.take(0.0, 3) == (False, None, 3)
    assert budget.take(0.0, 0) == (False, None, 0)
    send, notice, level = budget.take(0.1, 0)  # the next one sent says how many were not
    assert send and notice == "3 log messages dropped (more than 10 a second)"
    assert level == 3  # at the most severe level dropped
    assert budget.take(1.0, 0) == (True, None, 0)
    assert budget.take(1.0, 0) == (True, None, 0)
    send, notice, _ = budget.take(1.0, 0)
    assert not send and notice is None  # told once per request
    assert budget.take(2.0, 2)[1] == "1 log message dropped (more than 10 a second)"
