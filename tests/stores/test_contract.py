"""The store contract: one suite, run unchanged on every backend (memory, SQLite, Redis).

What every ``Store`` promises (``mcp_elicit/stores/base.py``): bytes in, the same bytes
out; namespaces apart; expiry by time to live; ``add`` set-if-absent and ``take``
get-and-delete, both atomic under contention, also between two store objects sharing a
backend (two instances); a subscriber sees what is published after it subscribed, from
any store object on the backend, and ``next`` gives up on time; ``close`` is idempotent
and ends what the store opened.

Expiry uses an injected clock on memory and SQLite and real time (short TTLs) on Redis; every wait
is bounded.
"""

from __future__ import annotations

import asyncio
import math
import os
import time

import pytest

from mcp_elicit.stores import Store
from stores.backends import Backend

from support.waiting import HOURS, hang_guard

pytestmark = pytest.mark.anyio

WAIT = 5.0  # the longest a test waits for a message that should come


# ---- values ------------------------------------------------------------------------------


async def test_get_of_a_missing_key_is_none(store: Store) -> None:
    assert await store.get("flow", "nothing-here") is None


async def test_put_get_overwrite(store: Store) -> None:
    await store.put("flow", "k", b"one")
    assert await store.get("flow", "k") == b"one"
    await store.put("flow", "k", b"two")
    assert await store.get("flow", "k") == b"two"


async def test_delete(store: Store) -> None:
    await store.put("flow", "k", b"v")
    assert await store.delete("flow", "k") is True
    assert await store.get("flow", "k") is None
    assert await store.delete("flow", "k") is False
    assert await store.delete("flow", "never") is False


async def test_an_empty_value_is_not_absent(store: Store) -> None:
    await store.put("flow", "empty", b"")
    assert await store.get("flow", "empty") == b""
    assert await store.add("flow", "empty", b"x") is False
    assert await store.take("flow", "empty") == b""
    assert await store.get("flow", "empty") is None


async def test_every_byte_value_survives(store: Store) -> None:
    every = bytes(range(256))
    await store.put("vault", "bytes", every)
    assert await store.get("vault", "bytes") == every
    await store.put("vault", "reversed", every[::-1] * 3)
    assert await store.take("vault", "reversed") == every[::-1] * 3
    for b in (0, 0x0A, 0x0D, 0x27, 0x5C, 0x80, 0xFF):
        await store.put("vault", f"one-{b}", bytes([b]))
        assert await store.get("vault", f"one-{b}") == bytes([b])


async def test_a_large_value_survives(store: Store) -> None:
    big = os.urandom(1024 * 1024)
    await store.put("vault", "big", big)
    got = await store.get("vault", "big")
    assert got is not None and len(got) == len(big) and got == big
    assert await store.add("vault", "big2", big) is True
    assert await store.take("vault", "big2") == big


async def test_namespaces_are_apart(store: Store) -> None:
    await store.put("flow", "same", b"flow")
    await store.put("vault", "same", b"vault")
    assert await store.get("flow", "same") == b"flow"
    assert await store.get("vault", "same") == b"vault"
    assert await store.get("tokens", "same") is None
    assert await store.delete("flow", "same") is True
    assert await store.get("vault", "same") == b"vault"
    assert await store.add("tokens", "same", b"t") is True
    assert await store.take("vault", "same") == b"vault"
    assert await store.get("tokens", "same") == b"t"


async def test_keys_with_separators_do_not_collide(store: Store) -> None:
    await store.put("flow", "a:b", b"1")
    await store.put("flow", "a", b"2")
    await store.put("flow-a", "b", b"3")
    await store.put("flow", "a b ~!%*?", b"4")
    await store.put("flow", "k" * 512, b"5")
    assert [
        await store.get("flow", "a:b"),
        await store.get("flow", "a"),
        await store.get("flow-a", "b"),
        await store.get("flow", "a b ~!%*?"),
        await store.get("flow", "k" * 512),
    ] == [b"1", b"2", b"3", b"4", b"5"]


BAD_NAMES = [
    ("", "k"),
    ("Flow", "k"),
    ("flow:x", "k"),
    ("fl ow", "k"),
    ("9flow", "k"),
    ("f" * 33, "k"),
    ("flow", ""),
    ("flow", "k" * 513),
    ("flow", "tab\there"),
    ("flow", "new\nline"),
    ("flow", "caf\u00e9"),
    ("flow", "nul\x00"),
]


@pytest.mark.parametrize(("namespace", "key"), BAD_NAMES)
async def test_bad_namespaces_and_keys_are_refused(store: Store, namespace: str, key: str) -> None:
    with pytest.raises(ValueError, match="store"):
        await store.put(namespace, key, b"v")
    with pytest.raises(ValueError, match="store"):
        await store.get(namespace, key)
    with pytest.raises(ValueError, match="store"):
        await store.add(namespace, key, b"v")
    with pytest.raises(ValueError, match="store"):
        await store.take(namespace, key)
    with pytest.raises(ValueError, match="store"):
        await store.delete(namespace, key)


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), True])
async def test_bad_ttls_are_refused(store: Store, ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        await store.put("flow", "k", b"v", ttl=ttl)
    with pytest.raises(ValueError, match="ttl"):
        await store.add("flow", "k", b"v", ttl=ttl)
    assert await store.get("flow", "k") is None


@pytest.mark.parametrize("value", ["text", bytearray(b"v"), memoryview(b"v"), None, 3])
async def test_values_must_be_bytes(store: Store, value: object) -> None:
    with pytest.raises(TypeError, match="bytes"):
        await store.put("flow", "k", value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes"):
        await store.add("flow", "k", value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes"):
        await store.publish("chan", value)  # type: ignore[arg-type]
    assert await store.get("flow", "k") is None


# ---- time to live ------------------------------------------------------------------------


async def test_entries_expire(backend: Backend, store: Store) -> None:
    ttl = backend.ttl
    await store.put("flow", "get", b"v", ttl=ttl)
    await store.put("flow", "take", b"v", ttl=ttl)
    await store.put("flow", "delete", b"v", ttl=ttl)
    await store.put("flow", "forever", b"v")
    await store.put("flow", "renewed", b"v", ttl=ttl)
    await store.put("flow", "renewed", b"w")  # a put without ttl keeps the entry forever
    await store.put("flow", "extended", b"v", ttl=ttl)
    await store.put("flow", "extended", b"w", ttl=60)
    assert await store.get("flow", "get") == b"v"
    await backend.elapse(ttl * 1.3)
    assert await store.get("flow", "get") is None
    assert await store.take("flow", "take") is None
    assert await store.delete("flow", "delete") is False
    assert await store.get("flow", "forever") == b"v"
    assert await store.get("flow", "renewed") == b"w"
    assert await store.get("flow", "extended") == b"w"


async def test_add_succeeds_again_once_the_entry_expired(backend: Backend, store: Store) -> None:
    ttl = backend.ttl
    assert await store.add("used", "nonce", b"first", ttl=ttl) is True
    assert await store.add("used", "nonce", b"second", ttl=ttl) is False
    assert await store.get("used", "nonce") == b"first"
    await backend.elapse(ttl * 1.3)
    assert await store.add("used", "nonce", b"third") is True
    assert await store.get("used", "nonce") == b"third"
    await backend.elapse(ttl * 1.3)
    assert await store.get("used", "nonce") == b"third", "an add without ttl keeps the entry"


async def test_a_long_ttl_keeps_the_entry(backend: Backend, store: Store) -> None:
    await store.put("flow", "k", b"v", ttl=3600)
    assert await store.add("flow", "k", b"w", ttl=3600) is False
    await backend.elapse(0.05)
    assert await store.get("flow", "k") == b"v"


@pytest.mark.parametrize(
    "ttl",
    [1e16, 2.0**63, 1e308, pytest.param(10**400, id="int-1e400"), pytest.param(2**1024, id="int-2**1024")],
)
async def test_a_huge_ttl_is_as_good_as_forever(store: Store, ttl: float) -> None:
    await store.put("flow", "put", b"v", ttl=ttl)
    assert await store.add("flow", "add", b"v", ttl=ttl) is True
    assert await store.add("flow", "add", b"w", ttl=ttl) is False
    assert await store.get("flow", "put") == b"v"
    assert await store.take("flow", "add") == b"v"


# ---- add and take --------------------------------------------------------------------------


async def test_add_only_when_absent(store: Store) -> None:
    assert await store.add("used", "m", b"1") is True
    assert await store.add("used", "m", b"2") is False
    assert await store.get("used", "m") == b"1"
    await store.delete("used", "m")
    assert await store.add("used", "m", b"3") is True
    assert await store.take("used", "m") == b"3"
    assert await store.add("used", "m", b"4") is True


async def test_take_reads_and_deletes(store: Store) -> None:
    await store.put("flow", "once", b"v")
    assert await store.take("flow", "once") == b"v"
    assert await store.take("flow", "once") is None
    assert await store.get("flow", "once") is None
    assert await store.take("flow", "never") is None


async def test_concurrent_adds_on_one_store_store_once(store: Store) -> None:
    results = await asyncio.gather(*(store.add("used", "race", str(i).encode()) for i in range(50)))
    assert results.count(True) == 1
    winner = results.index(True)
    assert await store.get("used", "race") == str(winner).encode()


async def test_concurrent_adds_from_two_instances_store_once(backend: Backend) -> None:
    a, b = backend.open(), backend.open()
    for round_ in range(3):
        key = f"race-{round_}"
        stores = [a if i % 2 else b for i in range(50)]
        results = await asyncio.gather(*(s.add("used", key, str(i).encode()) for i, s in enumerate(stores)))
        assert results.count(True) == 1, results
        winner = results.index(True)
        assert await a.get("used", key) == str(winner).encode()
        assert await b.get("used", key) == str(winner).encode()


async def test_concurrent_takes_from_two_instances_get_it_once(backend: Backend) -> None:
    a, b = backend.open(), backend.open()
    for round_ in range(3):
        key = f"link-{round_}"
        await a.put("flow", key, b"the value")
        results = await asyncio.gather(*((a if i % 2 else b).take("flow", key) for i in range(50)))
        assert [r for r in results if r is not None] == [b"the value"], results
        assert await b.get("flow", key) is None


async def test_two_instances_share_the_data(backend: Backend) -> None:
    a, b = backend.open(), backend.open()
    if backend.shared_by_objects:
        assert a is not b
    await a.put("flow", "shared", b"from a", ttl=60)
    assert await b.get("flow", "shared") == b"from a"
    assert await b.add("flow", "shared", b"from b") is False
    assert await b.take("flow", "shared") == b"from a"
    assert await a.get("flow", "shared") is None


# ---- publish / subscribe -------------------------------------------------------------------


async def test_a_subscriber_sees_what_is_published_after_it_subscribed(store: Store) -> None:
    await store.publish("done:1", b"too early")
    async with store.subscribe("done:1") as sub:
        await store.publish("done:1", b"in time")
        assert await sub.next(WAIT) == b"in time"
        assert await sub.next(0.1) is None


async def test_messages_arrive_whole_and_in_order(store: Store) -> None:
    messages = [bytes(range(256)), b"", b"\x00", *(f"m{i}".encode() for i in range(20))]
    async with store.subscribe("ordered") as sub:
        for m in messages:
            await store.publish("ordered", m)
        assert [await sub.next(WAIT) for _ in messages] == messages
        assert await sub.next(0.1) is None


async def test_every_subscriber_gets_each_message(store: Store) -> None:
    async with store.subscribe("fan") as one, store.subscribe("fan") as two:
        await store.publish("fan", b"hello")
        assert await one.next(WAIT) == b"hello"
        assert await two.next(WAIT) == b"hello"


async def test_channels_are_apart(store: Store) -> None:
    async with store.subscribe("left") as left, store.subscribe("right") as right:
        await store.publish("left", b"L")
        assert await left.next(WAIT) == b"L"
        assert await right.next(0.1) is None


async def test_a_publish_on_one_instance_reaches_a_subscriber_on_another(backend: Backend) -> None:
    a, b = backend.open(), backend.open()
    async with a.subscribe("done:x") as sub:
        await b.publish("done:x", b"from b")
        assert await sub.next(WAIT) == b"from b"


async def test_next_gives_up_on_time(store: Store) -> None:
    async with store.subscribe("quiet") as sub:
        assert await sub.next(0) is None
        assert await sub.next(-1) is None
        started = time.monotonic()
        async with hang_guard("next(0.2) on a quiet channel"):
            assert await sub.next(0.2) is None
        assert time.monotonic() - started >= 0.15, "the wait was honoured"


async def test_next_without_a_limit_waits_for_the_message(store: Store) -> None:
    async with store.subscribe("patient") as sub:
        waiting = asyncio.ensure_future(sub.next(math.inf))
        await asyncio.sleep(0.05)
        await store.publish("patient", b"at last")
        assert await asyncio.wait_for(waiting, WAIT) == b"at last"
        with pytest.raises(ValueError, match="timeout"):
            await sub.next(math.nan)


async def test_a_waiter_wakes_when_another_instance_completes(backend: Backend) -> None:
    """The URL-mode pattern: subscribe, then check the state, then wait for the event."""
    waiter_side, page_side = backend.open(), backend.open()

    async def wait_for_completion(flow: str) -> bytes | None:
        async with waiter_side.subscribe(f"done:{flow}") as sub:
            state = await waiter_side.get("flow", flow)
            deadline = time.monotonic() + HOURS  # only the event can end the wait in time
            while state is None and time.monotonic() < deadline:
                await sub.next(deadline - time.monotonic())
                state = await waiter_side.get("flow", flow)
            return state

    async def complete(flow: str) -> None:
        await page_side.put("flow", flow, b"completed", ttl=60)
        await page_side.publish(f"done:{flow}", b"")

    # completion after the waiter subscribed: the event wakes it
    waiting = asyncio.ensure_future(wait_for_completion("f1"))
    await asyncio.sleep(0.1)
    await complete("f1")
    async with hang_guard("the waiter woken by the completion event"):
        assert await waiting == b"completed"
    # completion before the waiter started: the check finds it
    await complete("f2")
    assert await wait_for_completion("f2") == b"completed"


async def test_a_subscription_takes_one_reader_at_a_time(store: Store) -> None:
    async with store.subscribe("busy") as sub:
        first = asyncio.ensure_future(sub.next(WAIT))
        await asyncio.sleep(0.05)
        with pytest.raises(RuntimeError, match="already waiting"):
            await sub.next(0.1)
        await store.publish("busy", b"for the first")
        assert await asyncio.wait_for(first, WAIT) == b"for the first"


async def test_cancelling_next_loses_nothing(store: Store) -> None:
    async with store.subscribe("cancel") as sub:
        waiting = asyncio.ensure_future(sub.next(WAIT))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await store.publish("cancel", b"after")
        assert await sub.next(WAIT) == b"after"


async def test_bad_channels_are_refused(store: Store) -> None:
    for channel in ("", "x" * 513, "new\nline", "caf\u00e9"):
        with pytest.raises(ValueError, match="channel"):
            await store.publish(channel, b"m")
        with pytest.raises(ValueError, match="channel"):
            store.subscribe(channel)


# ---- closing -------------------------------------------------------------------------------


async def test_close_is_idempotent_and_final(backend: Backend) -> None:
    store = backend.open()
    await store.put("flow", "k", b"v")
    await store.close()
    await store.close()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("flow", "k")
    with pytest.raises(RuntimeError, match="closed"):
        await store.put("flow", "k", b"v")
    with pytest.raises(RuntimeError, match="closed"):
        await store.publish("c", b"m")
    with pytest.raises(RuntimeError, match="closed"):
        store.subscribe("c")


async def test_close_ends_open_subscriptions(backend: Backend) -> None:
    store = backend.open()
    async with store.subscribe("ending") as sub:
        waiting = asyncio.ensure_future(sub.next(WAIT))
        await asyncio.sleep(0.05)
        await store.close()
        with pytest.raises(RuntimeError, match="closed"):  # not None: the wait did not run out
            await asyncio.wait_for(waiting, 2 * WAIT)
        with pytest.raises(RuntimeError, match="closed"):
            await sub.next(0.1)
