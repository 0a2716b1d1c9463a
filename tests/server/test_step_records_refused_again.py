"""A Redis that refuses the completions of URL steps for its configuration (a right taken
away from the server's ACL user), against a real ``redis-server``: the refusal is said
once for as long as it lasts, also when the line of completions empties (each given up at
its bound) and fills again, where each new line said it again; and said again once a
write succeeded and the refusal came back (a new one)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server import step_records
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import open_store

from support.redis import RedisServer, redis_available, redis_server
from support.waiting import HOURS, eventually, hang_guard

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not redis_available(), reason="redis-server is not installed"),
]

KEYS = KeyRing([bytes(range(40, 72))])
PASSWORD = "app-Pw-1"
REFUSED = "for its configuration, not for an outage"


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[tuple[RedisServer, Any]]:
    """A ``redis-server`` with a user ``app`` (password ``PASSWORD``, every right), and a
    client of its default user."""
    redis_asyncio = pytest.importorskip("redis.asyncio")
    with redis_server(tmp_path) as server:
        admin = redis_asyncio.Redis.from_url(server.url)
        try:
            await admin.execute_command("ACL", "SETUSER", "app", "on", f">{PASSWORD}", "~*", "&*", "+@all")
            yield server, admin
        finally:
            await admin.aclose()


def _lines(caplog: pytest.LogCaptureFixture, level: int, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and text in r.getMessage()]


def _given_up(caplog: pytest.LogCaptureFixture, count: int) -> Callable[[], bool]:
    return lambda: len(_lines(caplog, logging.WARNING, "given up: tried for")) >= count


async def test_a_refusal_is_said_once_while_it_lasts_though_the_line_empties_and_refills(
    redis: tuple[RedisServer, Any], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, admin = redis
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # an outage's pace would hang here
    monkeypatch.setattr(step_records, "RETRY_MOST", 0.02)  # the slowest pace, made short
    monkeypatch.setattr(step_records, "RETRY_FOR", 0.2)  # each given up soon: the line empties
    url = f"redis://app:{PASSWORD}@127.0.0.1:{server.port}/0?prefix=test-{uuid.uuid4().hex[:12]}"
    app = Server("shop", state_keys=KEYS, store=url)
    await app.start()
    reader = StepCompletions(open_store(url), ttl=600.0)
    try:
        await admin.execute_command("ACL", "SETUSER", "app", "-set")
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            for n, step in enumerate(["pay-1", "pay-2", "pay-3"], 1):
                app.complete_elicitation(step, "alice")  # the line empty again before each
                await eventually(_given_up(caplog, n), f"{step} given up")
            refused = _lines(caplog, logging.ERROR, REFUSED)
            assert len(refused) == 1 and "'pay-1'" in refused[0], caplog.text
            await admin.execute_command("ACL", "SETUSER", "app", "+set")
            app.complete_elicitation("pay-4", "alice")
            await eventually(lambda: reader.marker("pay-4", "alice"), "pay-4 written once the right is back")
            await admin.execute_command("ACL", "SETUSER", "app", "-set")  # a new refusal: said anew
            app.complete_elicitation("pay-5", "alice")
            await eventually(lambda: len(_lines(caplog, logging.ERROR, REFUSED)) == 2, "the new refusal said")
            assert "'pay-5'" in _lines(caplog, logging.ERROR, REFUSED)[1]
    finally:
        await reader.store.close()
        async with hang_guard("the stop"):
            await app.stop()
