"""What the log says of completions of URL steps during an outage of a real ``redis-server``
(the test kills it): past the line's bound, completions arriving one at a time are dropped
with one warning naming them (the first said at once, those dropped after it gathered and
said together, here when the server stops), not a warning each, which flooded the log
for as long as the outage lasted; and a completion whose marker Redis took before it went
down, given up at the stop with only its notices left, is said to be recorded but not
told, not "could not be recorded"."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server import step_line, step_records
from mcp_elicit.stores.redis import RedisStore

from support.redis import redis_available, redis_server
from support.waiting import HOURS, eventually, hang_guard

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not redis_available(), reason="redis-server is not installed"),
]

KEYS = KeyRing([bytes(range(40, 72))])
DROPPED = "the oldest are dropped"


def _said(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if text in record.getMessage()]


async def _its_turn() -> None:
    """Return once the loop has run what was scheduled before (a completion's ``_run``)."""
    loop = asyncio.get_running_loop()
    turn = loop.create_future()
    loop.call_soon(turn.set_result, None)
    await turn


async def test_completions_dropped_one_at_a_time_past_the_bound_are_said_together(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # tried again when the server stops
    monkeypatch.setattr(step_records, "MAX_WAITING", 2)
    monkeypatch.setattr(step_line, "DROPS_SAID_EVERY", HOURS)  # the gathered ones: said at the stop
    with redis_server(tmp_path) as redis:
        app = Server("shop", state_keys=KEYS, store=f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}")
        await app.start()
        try:
            redis.proc.kill()
            redis.proc.wait()
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                app.complete_elicitation("pay-0", "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store yet"), "the first write failing"
                )
                for n in range(1, 9):  # one at a time, each seen by the loop before the next
                    app.complete_elicitation(f"pay-{n}", "alice")
                    await _its_turn()
                # pay-1 and pay-2 wait behind pay-0: pay-3 drops pay-1 (said at once), the
                # next five drop pay-2..pay-6, gathered
                (first,) = _said(caplog, DROPPED)
                assert "'pay-1'" in first and "'pay-2'" not in first, first
        finally:
            async with hang_guard("the stop during the outage"):
                await app.stop()
    dropped = _said(caplog, DROPPED)
    assert len(dropped) == 2, "a warning per completion dropped: " + "\n".join(dropped)
    assert all(f"'pay-{n}'" in dropped[1] for n in range(2, 7)), dropped[1]
    assert not any(f"'pay-{n}'" in dropped[1] for n in (1, 7, 8)), dropped[1]


class KilledAfterTheMarker(RedisStore):
    """The server's Redis store, whose server is killed once armed and a step is marked:
    its first notice then fails, as Redis going down between the two does."""

    def __init__(self, url: str, kill: Callable[[], None]) -> None:
        super().__init__(url)
        self.kill = kill
        self.armed = False

    async def publish(self, channel: str, message: bytes) -> None:
        if self.armed:
            self.armed = False
            self.kill()
        await super().publish(channel, message)


async def test_a_completion_marked_then_given_up_at_the_stop_is_said_recorded_not_told(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # tried again when the server stops
    with redis_server(tmp_path) as redis:
        url = f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}"

        def kill() -> None:
            redis.proc.kill()
            redis.proc.wait()

        store = KilledAfterTheMarker(url, kill)
        app = Server("shop", state_keys=KEYS, store=store)
        await app.start()
        try:
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                store.armed = True
                app.complete_elicitation("pay-1", "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store yet"),
                    "the notice failing once Redis is down",
                )
        finally:
            async with hang_guard("the stop during the outage"):
                await app.stop()
            await store.close()
        said = _said(caplog, "'pay-1'")
    assert not any("could not be recorded in the store (" in line for line in said), said
    (given_up,) = [line for line in said if "given up: the server is stopping" in line]
    assert "is recorded in the store, but not told" in given_up, given_up
    assert "see it when they next look" in given_up, given_up
