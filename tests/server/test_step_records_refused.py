"""A Redis store that refuses the server for its configuration, which no outage is: a
password missing or refused, an ACL user lacking a right, a database number the server
lacks; against a real ``redis-server``. A start fails at once with a ``ConfigError`` saying
what to fix, the password hidden (a command refused, or a database the server lacks, was
met with advice that did not fit, or none). A completion refused so at run time (the password changed under a running server,
a right taken away) was taken for an outage: a warning a try, 1, 2, 4... seconds apart,
for 10 minutes, the server's log saying only "cannot reach its storage". It is now said
once, as the configuration, with what to fix, tried again at the slowest pace without a
word more, and written once the refusal ends."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.server import step_records
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import open_store

from support.redis import RedisServer, redis_available, redis_server
from support.waiting import HANG_GUARD, HOURS, eventually, hang_guard

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not redis_available(), reason="redis-server is not installed"),
]

KEYS = KeyRing([bytes(range(40, 72))])
ADMIN_PASSWORD = "admin-Pw-7"
PASSWORD = "app-Pw-1"
NEW_PASSWORD = "app-Pw-2"


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[tuple[RedisServer, Any]]:
    """A ``redis-server`` whose default user needs ``ADMIN_PASSWORD`` (``requirepass``), with
    a user ``app`` (password ``PASSWORD``, every right), and an admin client on it."""
    redis_asyncio = pytest.importorskip("redis.asyncio")
    with redis_server(tmp_path) as server:
        server.command("CONFIG", "SET", "requirepass", ADMIN_PASSWORD)
        admin = redis_asyncio.Redis.from_url(server.url.replace("redis://", f"redis://:{ADMIN_PASSWORD}@"))
        try:
            await admin.execute_command("ACL", "SETUSER", "app", "on", f">{PASSWORD}", "~*", "&*", "+@all")
            yield server, admin
        finally:
            await admin.aclose()


def _url(server: RedisServer, userinfo: str, db: int = 0) -> str:
    return f"redis://{userinfo}127.0.0.1:{server.port}/{db}?prefix=test-{uuid.uuid4().hex[:12]}"


async def _refused_logins(admin: Any) -> int:
    """How many times Redis refused a login (its ACL log counts repeats in one entry)."""
    entries = await admin.acl_log()
    return sum(int(entry["count"]) for entry in entries if entry["reason"] == "auth")


@pytest.mark.parametrize(
    ("userinfo", "db", "grant", "says"),
    [
        (f"app:{NEW_PASSWORD}@", 0, None, "refused the user name or password given in the URL"),
        ("", 0, None, "the server wants a password: give it in the URL"),
        (f"app:{PASSWORD}@", 0, "-getdel", "the store uses GET, SET, GETDEL"),
        (f"app:{PASSWORD}@", 0, "resetkeys", "give the user ~mcp-elicit:* &mcp-elicit:*"),
        (f"app:{PASSWORD}@", 99, None, "the server has fewer databases than that"),
    ],
    ids=["wrong password", "no password", "a command refused", "its keys refused", "no such database"],
)
async def test_a_start_on_a_store_refusing_its_configuration_fails_at_once_saying_what_to_fix(
    redis: tuple[RedisServer, Any], userinfo: str, db: int, grant: str | None, says: str
) -> None:
    server, admin = redis
    if grant is not None:
        await admin.execute_command("ACL", "SETUSER", "app", grant)
    url = _url(server, userinfo, db)
    app = Server("shop", state_keys=KEYS, store=url)
    async with hang_guard("a start on a store that refuses it"):
        with pytest.raises(ConfigError) as caught:
            await app.start()
    text = str(caught.value)
    shown = f"redis://{'app:***@' if userinfo else ''}127.0.0.1:{server.port}/{db}"
    assert f"the URL-mode store {shown}" in text and "cannot be used" in text, text
    assert says.replace("mcp-elicit", url.rsplit("=", 1)[1]) in text, text
    assert PASSWORD not in text and NEW_PASSWORD not in text, text
    # at once: a refused login is not tried again
    assert await _refused_logins(admin) <= 1, "a refused password was tried again"


def _lines(caplog: pytest.LogCaptureFixture, level: int, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and text in r.getMessage()]


@pytest.mark.parametrize("refusal", ["password changed", "right taken away", "webhook's wrong password"])
async def test_a_completion_refused_for_the_store_configuration_is_said_once_and_kept(
    redis: tuple[RedisServer, Any],
    refusal: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Refused by the store's configuration, a completion is said once, at ERROR, naming
    the refusal and what to fix, and is tried again at the slowest pace (made short
    here), quietly; once the refusal ends (the old password added back on the Redis side,
    the right given back) it is written. An outage's pace is never taken: it is hours."""
    server, admin = redis
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # an outage's pace would hang here
    monkeypatch.setattr(step_records, "RETRY_MOST", 0.05)  # the slowest pace, made short
    webhook = refusal == "webhook's wrong password"
    url = _url(server, f"app:{PASSWORD}@")
    app = Server("shop", state_keys=KEYS, store=url)
    if not webhook:
        await app.start()
    try:
        if refusal == "right taken away":
            await admin.execute_command("ACL", "SETUSER", "app", "-set")
        else:  # the password changes, and the connections made with the old one are cut
            await admin.execute_command("ACL", "SETUSER", "app", "resetpass", f">{NEW_PASSWORD}")
            await admin.execute_command("CLIENT", "KILL", "USER", "app")
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            app.complete_elicitation("pay-1", "alice")
            await eventually(
                lambda: len(_lines(caplog, logging.DEBUG, "still refuses")) >= 3,
                "the completion tried again, at the slowest pace",
            )
            refused = _lines(caplog, logging.ERROR, "for its configuration, not for an outage")
            assert len(refused) == 1, caplog.text
            said = "refused the user name or password" if "password" in refusal else "the store uses"
            assert said in refused[0] and "'pay-1'" in refused[0], refused[0]
            assert not _lines(caplog, logging.WARNING, "could not be recorded"), caplog.text
            if refusal == "right taken away":
                await admin.execute_command("ACL", "SETUSER", "app", "+set")
            else:  # the old password added back beside the new one, as a rotation does
                await admin.execute_command("ACL", "SETUSER", "app", f">{PASSWORD}")
            await eventually(lambda: _lines(caplog, logging.INFO, "'pay-1' is recorded"), "the write")
        reader = StepCompletions(open_store(url), ttl=600.0)
        try:
            assert await reader.wait("pay-1", "alice", "", HANG_GUARD), "the completion was lost"
        finally:
            await reader.store.close()
    finally:
        async with hang_guard("the stop"):
            await app.stop()
    assert PASSWORD not in caplog.text and NEW_PASSWORD not in caplog.text, caplog.text


async def test_completions_whose_channels_are_refused_are_recorded_each_the_refusal_said_once(
    redis: tuple[RedisServer, Any], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Redis user's channels taken away under a running server (``resetchannels``): the
    markers the held requests read are still written, only the wake-ups and the notice to
    the other instances are refused. The first completion was tried again and again (its
    marker written each time) while the ones behind it were never written, each given up
    after 10 minutes, the first too, said "could not be recorded" though it was. Each is
    now recorded, the refusal of its notices said once."""
    server, admin = redis
    monkeypatch.setattr(step_records, "RETRY_MOST", 0.05)  # the slowest pace, made short
    url = _url(server, f"app:{PASSWORD}@")
    app = Server("shop", state_keys=KEYS, store=url)
    await app.start()
    steps = ["pay-0", "pay-1", "pay-2"]
    reader = StepCompletions(open_store(url), ttl=600.0)
    try:
        await admin.execute_command("ACL", "SETUSER", "app", "resetchannels")
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            for step in steps:
                app.complete_elicitation(step, "alice")

            async def settled() -> bool:  # all written, or the line stuck on the first
                if len(_lines(caplog, logging.DEBUG, "still refuses")) >= 3:
                    return True
                return all([await reader.marker(step, "alice") for step in steps])

            await eventually(settled, "the completions written, or the first tried again")
            assert [step for step in steps if not await reader.marker(step, "alice")] == [], caplog.text
            refused = _lines(caplog, logging.ERROR, "for its configuration")
            assert len(refused) == 1 and "'pay-0'" in refused[0], caplog.text
    finally:
        await reader.store.close()
        async with hang_guard("the stop"):
            await app.stop()
    assert not _lines(caplog, logging.WARNING, "could not be recorded"), caplog.text
