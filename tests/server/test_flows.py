"""URL-mode flows in a store shared by several instances: exactly one way of finishing a
flow wins, whatever order the instances write in; of the browsers that opened its link,
the first to come back holds it, on whichever instance; and a record the running version cannot
read (damaged, or written by another version) is reported, never a crash."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import orjson
import pytest

from mcp_elicit.server.flows import NAMESPACE, Flows
from mcp_elicit.stores import MemoryStore, RedisStore, SqliteStore, Store

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def instances(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Callable[[], Flows]]:
    """Makes ``Flows`` of another instance: its own store object on the shared backend."""
    opened: list[Store] = []
    memory = MemoryStore()

    def open_store() -> Store:
        if request.param == "memory":
            return memory
        if request.param == "sqlite":
            return SqliteStore(tmp_path / "state.db")
        url: str = request.getfixturevalue("redis_url")
        return RedisStore(url, prefix=f"flows-{id(request)}")

    def instance() -> Flows:
        store = open_store()
        opened.append(store)
        return Flows(store)

    yield instance
    for store in {id(s): s for s in opened}.values():
        await store.close()


async def test_of_two_instances_finishing_at_once_exactly_one_wins(instances: Callable[[], Flows]) -> None:
    a, b = instances(), instances()
    for _ in range(20):
        flow, _link = await a.start("secret", "api_key", "alice")
        seen_a, seen_b = await a.get(flow.id), await b.get(flow.id)
        assert seen_a is not None and seen_b is not None
        won = await asyncio.gather(a.finish(seen_a, "complete"), b.finish(seen_b, "declined"))
        assert sorted(won) == [False, True]
        winner = "complete" if won[0] else "declined"
        for flows in (a, b):
            final = await flows.get(flow.id)
            assert final is not None and final.status == winner


async def test_a_late_finish_changes_nothing(instances: Callable[[], Flows]) -> None:
    a, b = instances(), instances()
    flow, _link = await a.start("secret", "api_key", "alice")
    stale = await b.get(flow.id)
    assert stale is not None
    first = await a.finish(flow, "declined", detail="no")
    late = await b.finish(stale, "complete")
    final = await a.get(flow.id)
    assert final is not None and (final.status, final.detail) == ("declined", "no")
    assert (first, late) == (True, False)


async def test_a_stale_save_does_not_reopen_a_finished_flow(instances: Callable[[], Flows]) -> None:
    a, b = instances(), instances()
    flow, _link = await a.start("secret", "api_key", "alice")
    stale = await b.get(flow.id)  # as a claim in flight on instance b read it
    assert stale is not None
    await a.finish(flow, "cancelled")
    stale.browser = "a cookie digest"
    await b.save(stale)  # the claim writes back what it read, still pending
    for flows in (a, b):
        final = await flows.get(flow.id)
        assert final is not None and final.done and final.status == "cancelled"


async def test_of_two_pending_claims_the_first_confirmed_holds_the_flow(
    instances: Callable[[], Flows],
) -> None:
    a, b = instances(), instances()
    flow, link = await a.start("secret", "api_key", "alice")
    first = await a.claim(flow.id, link)
    second = await b.claim(flow.id, link)  # the link is not used up by a claim
    assert first is not None and second is not None
    (_, lost), (_, back) = first, second
    assert await a.claim("another-flow", link) is None
    held = await a.confirm(flow, back)  # confirmed on another instance than its claim
    assert held is not None and held.owns(back)
    refused = await b.confirm(flow, lost)
    assert refused is not None and not refused.owns(lost) and refused.owns(back)
    assert await b.claim(flow.id, link) is None, "the link is dead once a claim is confirmed"
    again = await b.confirm(flow, back)
    assert again is not None and again.owns(back)


async def test_a_record_from_a_newer_version_is_read(instances: Callable[[], Flows]) -> None:
    flows = instances()
    flow, _link = await flows.start("secret", "api_key", "alice")
    record = orjson.loads(await flows.store.get(NAMESPACE, f"id:{flow.id}") or b"")
    await flows.store.put(NAMESPACE, f"id:{flow.id}", orjson.dumps({**record, "attempts": 2}), ttl=60)
    found = await flows.get(flow.id)
    assert found is not None and (found.id, found.name, found.status) == (flow.id, "api_key", "pending")


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b"[1, 2]",
        b'{"id": "x"}',
        b'{"id": "F", "kind": "secret", "name": "n", "principal": null, "expires": "soon"}',
        b'{"id": "F", "kind": "secret", "name": "n", "principal": null, "expires": 1e300, "status": "odd"}',
        b'{"id": "F", "kind": "secret", "name": "n", "principal": null, "expires": 1e300, "extra": 3}',
    ],
)
async def test_a_damaged_record_reads_as_gone_and_is_reported(
    instances: Callable[[], Flows], damage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    flows = instances()
    await flows.store.put(NAMESPACE, "id:F", damage, ttl=60)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.flows"):
        assert await flows.get("F") is None
    assert "flow F" in caplog.text and "cannot be read" in caplog.text


async def test_a_damaged_end_marker_reads_as_failed_and_is_reported(
    instances: Callable[[], Flows], caplog: pytest.LogCaptureFixture
) -> None:
    flows = instances()
    flow, _link = await flows.start("secret", "api_key", "alice")
    await flows.store.put(NAMESPACE, f"end:{flow.id}", b'{"status": 7}', ttl=60)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.flows"):
        found = await flows.get(flow.id)
    assert found is not None and found.status == "failed"
    assert f"flow {flow.id[:6]}" in caplog.text and "cannot be read" in caplog.text


async def test_two_confirms_at_once_agree_on_the_browser_holding_the_flow(
    instances: Callable[[], Flows],
) -> None:
    """The loser of two confirms at once learns who won (never "nobody yet"): the same
    browser's two requests both hold the flow, another browser's is told it lost."""
    a, b = instances(), instances()
    for _ in range(10):
        flow, link = await a.start("secret", "api_key", "alice")
        first, second = await a.claim(flow.id, link), await b.claim(flow.id, link)
        assert first is not None and second is not None
        same = await asyncio.gather(a.confirm(flow, first[1]), b.confirm(flow, first[1]))
        assert all(seen is not None and seen.owns(first[1]) for seen in same), same
        flow, link = await a.start("secret", "api_key", "alice")
        first, second = await a.claim(flow.id, link), await b.claim(flow.id, link)
        assert first is not None and second is not None
        both = await asyncio.gather(a.confirm(flow, first[1]), b.confirm(flow, second[1]))
        assert all(seen is not None and seen.browser is not None for seen in both), both
        held = [seen.owns(cookie) for seen, (_, cookie) in zip(both, (first, second), strict=True) if seen]
        assert sorted(held) == [False, True], both


async def test_a_finish_that_read_the_flow_before_its_confirm_keeps_the_browser_holding_it(
    instances: Callable[[], Flows],
) -> None:
    """A record written back by a finish that read the flow before a browser's confirm
    (its save lands last) does not take the page from that browser: it is still the
    flow's, and sees how the flow ended."""
    a, b = instances(), instances()
    flow, link = await a.start("secret", "api_key", "alice")
    claimed = await a.claim(flow.id, link)
    assert claimed is not None
    read_by_finish = await b.get(flow.id)
    assert read_by_finish is not None and read_by_finish.browser is None
    held = await a.confirm(flow, claimed[1])
    assert held is not None and held.owns(claimed[1])
    read_by_finish.status = "cancelled"
    await b.save(read_by_finish)  # the finish's late write, without the browser
    final = await a.get(flow.id)
    assert final is not None and final.owns(claimed[1]) and final.status == "cancelled"
