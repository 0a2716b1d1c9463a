"""A URL step completed (``complete_elicitation``, a payment webhook's) while the server's
Redis is down, against a real ``redis-server`` the test stops and starts again: the
completion is written once Redis is back, rather than lost (the request held on the step
waited until its bound, then asked the person again); a server stopped during the outage
gives it up at once, saying so, rather than waiting to try again."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from pathlib import Path

import orjson
import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server import step_notices, step_records
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import open_store

from support.redis import redis_available, redis_server, started_again
from support.waiting import HANG_GUARD, HOURS, eventually, hang_guard

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not redis_available(), reason="redis-server is not installed"),
]

KEYS = KeyRing([bytes(range(40, 72))])


def _said(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


async def test_a_completion_made_while_redis_is_down_is_recorded_once_it_is_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path) as redis:
        url = f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}"
        app = Server("shop", state_keys=KEYS, store=url)
        await app.start()
        try:
            redis.proc.kill()
            redis.proc.wait()
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                app.complete_elicitation("pay-1", "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store"),
                    "the write failing while Redis is down",
                )
                with started_again(redis):
                    reader = StepCompletions(open_store(url), ttl=600.0)
                    try:
                        assert await reader.wait("pay-1", "alice", "", HANG_GUARD), "the completion was lost"
                    finally:
                        await reader.store.close()
                    await eventually(lambda: _said(caplog, "'pay-1' is recorded"), "the write said done")
                    assert not _said(caplog, "could not be recorded in the store ("), caplog.text
        finally:
            await app.stop()


async def test_a_server_stopped_while_a_completion_waits_for_redis_gives_it_up_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_records, "RETRY_FIRST", 3600.0)  # the stop must not wait it out
    with redis_server(tmp_path) as redis:
        app = Server("shop", state_keys=KEYS, store=f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}")
        await app.start()
        try:
            redis.proc.kill()
            redis.proc.wait()
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                app.complete_elicitation("pay-1", "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store yet"),
                    "the write failing while Redis is down",
                )
            # the pause set: it was read once, at import, so this stop waited a second out
            assert _said(caplog, "trying again in 3600 s"), caplog.text
        finally:
            async with hang_guard("the stop while a completion waits to be written again"):
                await app.stop()
    assert _said(caplog, "'pay-1' could not be recorded in the store ("), caplog.text


async def test_a_completion_cancelled_while_it_waits_for_redis_is_logged_as_not_recorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A webhook's ``asyncio.run`` ends (cancelling what is left) while its completion waits
    to try Redis again: the completion is logged as not recorded. A cancellation then, in
    the pause between tries, where such a write spends nearly all its time, was said
    nowhere: only one cut short in a try itself was logged."""
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # cancelled in the pause, surely
    with redis_server(tmp_path) as redis:
        app = Server("shop", state_keys=KEYS, store=f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}")
        redis.proc.kill()
        redis.proc.wait()

        async def webhook() -> None:  # never starts the server: the write opens its store
            app.complete_elicitation("pay-1", "alice")
            await eventually(
                lambda: _said(caplog, "could not be recorded in the store yet"),
                "the write failing while Redis is down",
            )

        with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
            async with hang_guard("asyncio.run cancelling the write waiting to try again"):
                await asyncio.to_thread(asyncio.run, webhook())
    assert _said(
        caplog,
        "'pay-1' could not be recorded in the store (the write was cancelled while the store was down)",
    ), caplog.text


async def test_a_completion_written_after_a_long_outage_tells_the_other_instances_in_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notice telling the other instances (their 2025-11-25 sessions) that the step is
    done is sealed for a minute. It was sealed at the call, so a completion written after an
    outage of more than a minute published one every instance refused as late, and their
    sessions were never told. It is now sealed when it is sent."""
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # tried again when the server stops
    now = [1_000_000.0]
    with redis_server(tmp_path) as redis:
        url = f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}"
        app = Server("shop", state_keys=KEYS, store=url, clock=lambda: now[0])
        await app.start()
        stopped = False
        try:
            redis.proc.kill()
            redis.proc.wait()
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                app.complete_elicitation("pay-1", "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store yet"), "the write failing"
                )
            now[0] += 600.0  # the outage lasted ten minutes
            with started_again(redis):
                listener = open_store(url)
                try:
                    async with listener.subscribe(app.relay.channel) as subscription:
                        async with hang_guard("the stop writing the completion"):
                            await app.stop()  # wakes the write, which tries once more: Redis is back
                        stopped = True
                        sent = orjson.loads(await subscription.next(HANG_GUARD))
                        while "sealed" not in sent:  # the relay's other messages, if any
                            sent = orjson.loads(await subscription.next(HANG_GUARD))
                finally:
                    await listener.close()
        finally:
            if not stopped:
                await app.stop()
    notice = step_notices.open_notice(app.relay._mirroring(), sent["sealed"], now=now[0])
    assert notice == ("pay-1", "alice"), "the other instances refuse the notice as late"


async def test_a_completion_given_up_after_its_tries_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that tried for ``RETRY_FOR`` seconds (here none) and failed is given up, and
    the line says why it stopped trying, not only the store's last error."""
    monkeypatch.setattr(step_records, "RETRY_FOR", 0.0)
    with redis_server(tmp_path) as redis:
        app = Server("shop", state_keys=KEYS, store=f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}")
        redis.proc.kill()
        redis.proc.wait()
        try:
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                app.complete_elicitation("pay-1", "alice")
                await eventually(lambda: _said(caplog, "could not be recorded in the store ("), "the give-up")
        finally:
            await app.stop()
    assert _said(caplog, "; given up: tried for 0 s)"), caplog.text
    assert not _said(caplog, "trying again"), caplog.text


async def test_completions_made_during_an_outage_wait_in_one_bounded_line_in_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each completion made while Redis was down kept a task of its own, trying again on
    its own: without bound, as many as people finished their steps. They now wait in one
    line per event loop, written in order by one task; past ``MAX_WAITING`` the oldest
    waiting are dropped, named in the log, and the others are written once Redis is back."""
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # tried again when the server stops
    monkeypatch.setattr(step_records, "MAX_WAITING", 3)
    steps = [f"pay-{n}" for n in range(6)]
    with redis_server(tmp_path) as redis:
        url = f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}"
        app = Server("shop", state_keys=KEYS, store=url)
        await app.start()
        stopped = False
        try:
            redis.proc.kill()
            redis.proc.wait()
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                app.complete_elicitation(steps[0], "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store yet"), "the first write failing"
                )
                for step in steps[1:]:
                    app.complete_elicitation(step, "alice")
                await eventually(lambda: _said(caplog, "the oldest are dropped"), "the line's bound reached")
                tasks = [task for task in app.url_mode._records._writing if not task.done()]
                assert len(tasks) == 1, f"a task per completion: {tasks}"
            dropped = [r.getMessage() for r in caplog.records if "the oldest are dropped" in r.getMessage()]
            assert len(dropped) == 1 and "'pay-1', 'pay-2'" in dropped[0], dropped
            assert not _said(caplog, "'pay-3'") and not _said(caplog, "'pay-5'"), caplog.text
            with started_again(redis):
                listener = open_store(url)
                try:
                    async with listener.subscribe(app.relay.channel) as subscription:
                        async with hang_guard("the stop writing the completions"):
                            await app.stop()  # wakes the line, which tries again: Redis is back
                        stopped = True
                        told = []
                        while len(told) < 4:
                            sent = orjson.loads(await subscription.next(HANG_GUARD))
                            if "sealed" in sent:  # the relay's other messages, if any
                                notice = step_notices.open_notice(
                                    app.relay._mirroring(), sent["sealed"], now=time.time()
                                )
                                told.append(notice[0] if notice else None)
                    reader = StepCompletions(listener, ttl=600.0)
                    recorded = [step for step in steps if await reader.marker(step, "alice")]
                finally:
                    await listener.close()
        finally:
            if not stopped:
                await app.stop()
    assert told == ["pay-0", "pay-3", "pay-4", "pay-5"], "not written in the order they were made"
    assert recorded == ["pay-0", "pay-3", "pay-4", "pay-5"], recorded


async def test_a_server_stopped_during_an_outage_gives_up_its_whole_line_at_once_naming_each(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # the stop must not wait it out
    with redis_server(tmp_path) as redis:
        app = Server("shop", state_keys=KEYS, store=f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}")
        await app.start()
        try:
            redis.proc.kill()
            redis.proc.wait()
            with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
                for step in ("pay-0", "pay-1", "pay-2"):
                    app.complete_elicitation(step, "alice")
                await eventually(
                    lambda: _said(caplog, "could not be recorded in the store yet"), "the write failing"
                )
        finally:
            async with hang_guard("the stop while completions wait to be written again"):
                await app.stop()
    given_up = [
        r.getMessage() for r in caplog.records if "given up: the server is stopping" in r.getMessage()
    ]
    assert len(given_up) == 1 and "'pay-0', 'pay-1', 'pay-2'" in given_up[0], caplog.text


def test_a_completion_a_closed_loop_left_waiting_for_redis_is_logged_at_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose event loop was closed, without its stop, while a completion waited to
    try Redis again, started on a new loop (``server/left_loops.py``): that completion was
    logged nowhere, unless another completion came later, and the old loop's line was kept
    for good. The start now lets go of it, as a stop would have, naming the step."""
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # waiting when the loop closes
    with redis_server(tmp_path) as redis:
        app = Server("shop", state_keys=KEYS, store=f"{redis.url}?prefix=test-{uuid.uuid4().hex[:12]}")

        async def first() -> None:
            await app.start()
            redis.proc.kill()
            redis.proc.wait()
            app.complete_elicitation("pay-1", "alice")
            await eventually(
                lambda: _said(caplog, "could not be recorded in the store yet"), "the write failing"
            )

        async def second() -> None:
            async with hang_guard("the start on a new loop"):
                await app.start()
            try:
                assert _said(caplog, "being written on it ('pay-1'): they may not be recorded"), caplog.text
                assert all(not loop.is_closed() for loop in app.url_mode._records._lines), "the old line kept"
            finally:
                await app.stop()

        with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(first())
            finally:
                loop.close()  # its tasks neither awaited nor cancelled
            with started_again(redis):
                asyncio.run(second())
    assert not app.url_mode._records._writing, "the old loop's task kept"
