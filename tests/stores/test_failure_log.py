"""``FailureLog``: a store's outage said when it begins, once a minute while it lasts (with
how many calls failed), and when it ends; never once per call."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit.stores.failure_log import FailureLog

LOGGER = "test.failure_log"


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]


def test_an_outage_is_said_when_it_begins_each_minute_while_it_lasts_and_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    now = [100.0]
    outage = FailureLog(
        logging.getLogger(LOGGER), "the store S failed", "the store S answers again", clock=lambda: now[0]
    )
    outage.answered()  # no outage: nothing to say
    for _ in range(61):  # a burst, one a second of requests, all failing
        outage.failed(ConnectionError("Redis store redis://h:1/0: connection refused"))
        now[0] += 1.0
    assert outage.failing
    outage.answered()
    assert not outage.failing
    outage.failed(TimeoutError("timed out"))  # a new outage is said again
    assert lines(caplog) == [
        ("ERROR", "the store S failed: connection refused"),
        (
            "ERROR",
            "the store S failed, 60 more times in the last 60 s (61 since it began): connection refused",
        ),
        ("INFO", "the store S answers again, after 61 failed calls"),
        ("ERROR", "the store S failed: timed out"),
    ]
