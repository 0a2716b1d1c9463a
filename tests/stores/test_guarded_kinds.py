"""``Guarded`` over a store whose keys answer while its channels fail (a Redis user whose
channels were taken away, a user's own store whose broker is down): a completion's put
succeeds and its publish fails, try after try. Each try wrote an INFO "answers again"
and a new ERROR, a pair a try; the outage is now said once when it begins and once when
the channels answer again."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit.errors import StoreUnavailable
from mcp_elicit.stores import MemoryStore
from mcp_elicit.stores.guarded import Guarded

pytestmark = pytest.mark.anyio


class ChannelsDown(MemoryStore):
    """A store of one's own whose publish fails while ``down``."""

    down = True

    async def publish(self, channel: str, message: bytes) -> None:
        if self.down:
            raise OSError(111, "Connection refused (the message broker)")
        await super().publish(channel, message)


def _lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "mcp_elicit.stores"]


async def test_a_put_that_succeeds_between_failing_publishes_ends_no_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inner = ChannelsDown()
    store = Guarded(inner, "S")
    caplog.set_level(logging.INFO, logger="mcp_elicit.stores")
    for n in range(5):  # a completion tried again and again: its marker, then its wake-up
        await store.put("step", f"k{n}", b"done")
        with pytest.raises(StoreUnavailable):
            await store.publish("step:k", b"complete")
    assert _lines(caplog) == [
        ("ERROR", "the store S failed: [Errno 111] Connection refused (the message broker)")
    ]
    inner.down = False
    await store.get("step", "k0")  # keys never failed: still no end of the outage
    await store.publish("step:k", b"complete")
    assert _lines(caplog)[1:] == [("INFO", "the store S answers again, after 5 failed calls")]


class AllDown(ChannelsDown):
    """Its keys fail too while ``down``: the whole store is out."""

    async def get(self, namespace: str, key: str) -> bytes | None:
        if self.down:
            raise OSError(111, "Connection refused (the database)")
        return await super().get(namespace, key)


async def test_an_outage_of_keys_and_channels_ends_when_a_kind_that_failed_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Once the store is back, the first call of a kind that failed ends the outage for
    every kind (the channels not used since do not keep it open)."""
    inner = AllDown()
    store = Guarded(inner, "S")
    caplog.set_level(logging.INFO, logger="mcp_elicit.stores")
    with pytest.raises(StoreUnavailable):
        await store.get("step", "k")
    with pytest.raises(StoreUnavailable):
        await store.publish("c", b"m")
    inner.down = False
    await store.get("step", "k")
    assert [level for level, _ in _lines(caplog)] == ["ERROR", "INFO"], _lines(caplog)
    assert _lines(caplog)[1][1] == "the store S answers again, after 2 failed calls"
