"""The relay's own subscription refused by a real ``redis-server`` for the store's
configuration (the server's ACL user loses its channels under a running server): it was
retried with a warning a try, "messages from other instances stopped", as if Redis were
down, without saying that someone must grant a right. It is now said once, at ERROR, in
the store's own words (the patterns to grant), tried again quietly, and said heard again
once the right is back."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server import relay_listening

from support.redis import RedisServer, redis_available, redis_server
from support.waiting import eventually, hang_guard

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not redis_available(), reason="redis-server is not installed"),
]

KEYS = KeyRing([bytes(range(40, 72))])
PASSWORD = "app-Pw-1"
REFUSED = "refuses the relay's subscription, which waiting does not mend"


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[tuple[RedisServer, Any]]:
    """A ``redis-server`` with a user ``app`` (every right), and a client of its default user."""
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


async def test_the_relay_subscription_refused_says_once_what_to_grant_then_retries_quietly(
    redis: tuple[RedisServer, Any], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, admin = redis
    monkeypatch.setattr(relay_listening, "RETRY_FIRST", 0.01)
    monkeypatch.setattr(relay_listening, "RETRY_MOST", 0.02)  # the quiet pace, made short
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    app = Server(
        "shop", state_keys=KEYS, store=f"redis://app:{PASSWORD}@127.0.0.1:{server.port}/0?prefix={prefix}"
    )
    await app.start()
    try:
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            await admin.execute_command("ACL", "SETUSER", "app", "resetchannels")
            await admin.execute_command("CLIENT", "KILL", "USER", "app")  # its subscription too
            await eventually(
                lambda: len(_lines(caplog, logging.DEBUG, "still refuses the relay's subscription")) >= 3,
                "the subscription tried again, quietly",
            )
            refused = _lines(caplog, logging.ERROR, REFUSED)
            assert len(refused) == 1, caplog.text
            assert f"give the user ~{prefix}:* &{prefix}:*" in refused[0], refused[0]
            assert PASSWORD not in refused[0]
            stopped = _lines(caplog, logging.WARNING, "messages from other instances stopped")
            assert len(stopped) <= 1, caplog.text  # the cut connection, at most: not a try each
            await admin.execute_command("ACL", "SETUSER", "app", "&*")
            await eventually(
                lambda: _lines(caplog, logging.INFO, "messages from other instances heard again"),
                "the subscription working again, said",
            )
            assert len(_lines(caplog, logging.ERROR, REFUSED)) == 1, caplog.text
    finally:
        async with hang_guard("the stop"):
            await app.stop()
