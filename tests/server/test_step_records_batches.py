"""How the line of completions of URL steps writes them (``server/step_records.py``): on a
healthy Redis, a burst is sent together, two pipelines per batch (the markers, then the
wake-ups and notices), where it was written one completion (three commands, three round
trips) after another; and a user's own store that
fails for one key alone no longer holds the completions behind it up for as long as that
one is tried (ten minutes): that one is set aside, said once, tried again on its own
schedule and given up at its bound, while the others are written."""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server import step_records, url_steps
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import MemoryStore, RedisStore, open_store
from mcp_elicit.stores.writes import Write

from support.redis import redis_available, redis_server
from support.waiting import HANG_GUARD, HOURS, eventually, hang_guard

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])
BURST = 300
SET_ASIDE = "though the store takes the completions behind it"


def _said(caplog: pytest.LogCaptureFixture, text: str, level: int = logging.DEBUG) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= level and text in r.getMessage()]


class CountedRedis(RedisStore):
    """A ``RedisStore`` counting the calls that write completions' markers."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.calls: Counter[str] = Counter()

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        self.calls["put"] += namespace == url_steps.NAMESPACE  # not the start's own check
        await super().put(namespace, key, value, ttl=ttl)

    async def write_many(self, writes: Sequence[Write]) -> None:
        self.calls["write_many"] += 1
        await super().write_many(writes)


@pytest.mark.skipif(not redis_available(), reason="redis-server is not installed")
async def test_a_burst_of_completions_on_a_healthy_redis_is_written_in_batches(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        url = f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}"
        store = CountedRedis(url)
        app = Server("shop", state_keys=KEYS, store=store)
        steps = [f"pay-{n}" for n in range(BURST)]
        reader = StepCompletions(open_store(url), ttl=600.0)
        try:
            await app.start()
            try:
                for step in steps:
                    app.complete_elicitation(step, "alice")
                async with hang_guard("the stop, writing the burst"):
                    await app.stop()
            finally:
                await app.stop()
            missing = [step for step in steps if not await reader.marker(step, "alice")]
            assert missing == [], f"{len(missing)} completions were not recorded"
            assert store.calls["put"] == 0, f"written one by one: {store.calls}"
            batches = -(-BURST // step_records.BATCH)
            assert store.calls["write_many"] == 2 * batches, store.calls  # markers, then wake-ups
        finally:
            await reader.store.close()
            await store.close()


class OneKeyFails(MemoryStore):
    """A user's own store whose disk refuses the marker of one step: ``OSError`` for that
    key alone, while ``refusing`` holds its key."""

    def __init__(self, step: str, principal: str) -> None:
        super().__init__()
        self.refusing = {url_steps._key(step, principal)}

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == url_steps.NAMESPACE and key in self.refusing:
            raise OSError(28, "No space left on device (the shard of this key)")
        await super().put(namespace, key, value, ttl=ttl)


async def test_one_key_the_store_refuses_does_not_hold_up_the_completions_behind_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The completions behind the failing one are written at once (an outage's backoff,
    hours here, would hang the test); the failing one is said once, and written once the
    store takes it (tried once more as the server stops: its own schedule is hours)."""
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)
    store = OneKeyFails("bad", "alice")
    reader = StepCompletions(store, ttl=600.0)
    app = Server("shop", state_keys=KEYS, store=store)
    await app.start()
    try:
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            for step in ("bad", "pay-1", "pay-2"):
                app.complete_elicitation(step, "alice")

            async def behind_written() -> bool:
                return all([await reader.marker(step, "alice") for step in ("pay-1", "pay-2")])

            await eventually(behind_written, "the completions behind the failing one written")
            app.complete_elicitation("pay-3", "alice")  # one made later is not held up either
            await eventually(lambda: reader.marker("pay-3", "alice"), "a later completion written")
            aside = _said(caplog, SET_ASIDE, logging.WARNING)
            assert len(aside) == 1 and "'bad'" in aside[0] and "No space left" in aside[0], caplog.text
            assert not await reader.marker("bad", "alice")
            store.refusing.clear()  # the disk has room again
            async with hang_guard("the stop"):
                await app.stop()
        assert await reader.marker("bad", "alice"), "the failing completion was lost"
        assert _said(caplog, "'bad' is recorded, at last", logging.INFO), caplog.text
        assert len(_said(caplog, SET_ASIDE)) == 1, caplog.text
        assert not _said(caplog, "could not be recorded in the store yet"), caplog.text
    finally:
        await app.stop()


async def test_a_key_the_store_keeps_refusing_is_given_up_at_its_bound_said_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_records, "RETRY_FIRST", 0.01)
    monkeypatch.setattr(step_records, "RETRY_MOST", 0.02)
    monkeypatch.setattr(step_records, "RETRY_FOR", 0.5)  # its bound, made short
    store = OneKeyFails("bad", "alice")
    reader = StepCompletions(store, ttl=600.0)
    app = Server("shop", state_keys=KEYS, store=store)
    await app.start()
    try:
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            for step in ("bad", "pay-1"):
                app.complete_elicitation(step, "alice")
            await eventually(lambda: _said(caplog, "given up: tried for 0.5 s"), "the failing one given up")
            assert await reader.marker("pay-1", "alice"), "the one behind it was not written"
            assert len(_said(caplog, "'bad' still fails", logging.DEBUG)) >= 2, "not tried on its own"
            given_up = _said(caplog, "could not be recorded in the store", logging.WARNING)
            assert len(given_up) == 2 and "'bad'" in given_up[1], caplog.text  # set aside, given up
            async with hang_guard("the stop", HANG_GUARD):
                await app.stop()
    finally:
        await app.stop()
