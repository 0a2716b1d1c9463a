"""Several clients sharing one stored authorization (transports/http_auth.py with a
``TokenStore``) against a real authorization server on 127.0.0.1 that rotates refresh
tokens and refuses a spent one (tests/support/mcp_authorization.py).

Two processes (or two ``OAuth`` in one process) that hold the same expiring token must
spend its refresh token once: one refreshes under the store's lock, the other waits, reads
the record again and uses the new token. A refresh token spent twice would be refused, and
that client would ask the person to sign in again. ``RefreshBarrier`` holds each refresh
request at the server until the other client's arrives (or a few seconds pass), so that
clients which both refresh are caught every time, not only when the scheduler says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth import FileTokenStore, MemoryTokenStore, OAuth, TokenStore
from mcp_elicit.transports.http_client import connect_http

from support.mcp_authorization import FollowRedirect, McpAuthorization, whoami_server
from support.procs import uvicorn_server
from support.waiting import hang_guard

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

# One CLI-like client: waits for "go" on stdin, then calls ``whoami`` with the tokens in the
# file. Nobody is there to sign in again: a new authorization fails the process.
CLIENT = """
import asyncio, sys
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth import FileTokenStore, OAuth
from mcp_elicit.transports.http_client import connect_http

class Nobody:
    redirect_uri = "http://127.0.0.1:9/callback"

    async def authorize(self, url, *, issuer):
        raise AuthorizationError("a new sign-in was asked for")

async def main(url, path):
    auth = OAuth(Nobody(), store=FileTokenStore(path))
    async with connect_http(url, auth=auth, versions=["2026-07-28"], timeout=30) as client:
        result = await client.call_tool("whoami", {})
    print(result["content"][0]["text"], flush=True)

print("ready", flush=True)
sys.stdin.readline()
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""

# Holds the lock on one record of the token file until killed.
HOLDER = """
import asyncio, sys
from mcp_elicit.transports.token_store import FileTokenStore

async def main():
    async with FileTokenStore(sys.argv[1]).locked(sys.argv[2], timeout=5):
        print("held", flush=True)
        await asyncio.sleep(60)

asyncio.run(main())
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RefreshBarrier:
    """In front of the site: counts the refresh requests at ``/token`` and holds each one
    until ``parties`` have arrived or ``wait`` seconds have passed."""

    def __init__(self, app: Any, *, parties: int = 2, wait: float = 2.0) -> None:
        self.app = app
        self.parties = parties
        self.wait = wait
        self.refreshes = 0
        self._all_in = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/token":
            await self.app(scope, receive, send)
            return
        messages = [await receive()]
        while messages[-1]["type"] == "http.request" and messages[-1].get("more_body"):
            messages.append(await receive())
        if b"grant_type=refresh_token" in b"".join(m.get("body", b"") for m in messages):
            self.refreshes += 1
            if self.refreshes >= self.parties:
                self._all_in.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_in.wait(), self.wait)
        replay = iter(messages)

        async def again() -> Any:
            message = next(replay, None)
            return message if message is not None else await receive()

        await self.app(scope, again, send)


@contextlib.asynccontextmanager
async def barred_site(wait: float = 2.0) -> AsyncIterator[tuple[McpAuthorization, RefreshBarrier]]:
    site = McpAuthorization(whoami_server())
    barrier = RefreshBarrier(site.app, wait=wait)
    async with uvicorn_server(barrier) as running:
        site.base = f"http://127.0.0.1:{running.port}"
        yield site, barrier


async def call(site: McpAuthorization, auth: OAuth) -> str:
    async with connect_http(site.url, auth=auth, versions=["2026-07-28"], timeout=30) as client:
        result = await client.call_tool("whoami", {})
    await auth.aclose()
    return str(result["content"][0]["text"])


async def signed_in(site: McpAuthorization, store: TokenStore) -> None:
    """One sign-in kept in ``store``, then its access token dead at the server (its refresh
    token still good): the next use of it needs a refresh."""
    assert await call(site, OAuth(FollowRedirect(), store=store)) == "hello"
    site.provider.expire_all()


def assert_live(site: McpAuthorization, record: Any) -> None:
    token = site.provider.tokens[record["tokens"]["access_token"]]
    assert not token.is_expired()
    assert not token.is_revoked()


async def test_two_processes_sharing_a_token_file_refresh_it_once(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tokens.json"
    async with barred_site(wait=3.0) as (site, barrier):
        await signed_in(site, FileTokenStore(path))
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                CLIENT,
                site.url,
                str(path),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=ENV,
            )
            for _ in range(2)
        ]
        try:
            for proc in procs:  # both started and imported before either reads the file
                assert proc.stdout is not None
                assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"ready\n"
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(b"go\n")
            outcomes = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), 60)
        finally:
            for proc in procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
        for proc, (out, err) in zip(procs, outcomes, strict=True):
            assert proc.returncode == 0, err.decode(errors="replace")
            assert out == b"hello\n"
        assert barrier.refreshes == 1
        assert site.provider.refreshes == 1
        assert site.provider.exchanges == 1  # nobody signed in again
        assert_live(site, json.loads(path.read_text())[site.url])


async def test_two_clients_sharing_a_memory_store_refresh_it_once() -> None:
    store = MemoryTokenStore()
    async with barred_site() as (site, barrier):
        await signed_in(site, store)
        authorizers = [FollowRedirect(), FollowRedirect()]
        clients = [OAuth(a, store=store) for a in authorizers]
        texts = await asyncio.wait_for(asyncio.gather(*(call(site, c) for c in clients)), 30)
        assert texts == ["hello", "hello"]
        assert barrier.refreshes == 1
        assert [a.asked for a in authorizers] == [[], []]
        assert site.provider.exchanges == 1
        assert_live(site, store.records[site.url])


async def test_a_record_locked_too_long_is_an_error_and_a_dead_holder_frees_it(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    async with barred_site() as (site, barrier):
        await signed_in(site, FileTokenStore(path))
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HOLDER, str(path), site.url, stdout=asyncio.subprocess.PIPE, env=ENV
        )
        try:
            assert holder.stdout is not None
            assert await asyncio.wait_for(holder.stdout.readline(), 30) == b"held\n"
            with pytest.raises(AuthorizationError, match="locked by another process") as caught:
                async with hang_guard("a call waiting for a record locked by another process"):
                    await call(site, OAuth(FollowRedirect(), store=FileTokenStore(path), lock_timeout=0.5))
            assert "not let go within 0.5 s" in str(caught.value), "the lock_timeout given"
            assert str(path) in str(caught.value)
            holder.send_signal(signal.SIGKILL)  # dies holding it: the kernel lets go
            await asyncio.wait_for(holder.wait(), 10)
        finally:
            if holder.returncode is None:
                holder.kill()
                await holder.wait()
        authorizer = FollowRedirect()
        assert await call(site, OAuth(authorizer, store=FileTokenStore(path), lock_timeout=5)) == "hello"
        assert authorizer.asked == []  # refreshed, no new sign-in
        assert barrier.refreshes == 1


class LoadSaveOnly:
    """A store written before ``TokenStore.locked``: load and save, nothing to lock."""

    def __init__(self) -> None:
        self.records: dict[str, Any] = {}

    async def load(self, key: str) -> Any:
        return self.records.get(key)

    async def save(self, key: str, record: Any) -> None:
        self.records[key] = record


async def test_a_store_without_a_lock_still_serves_and_refreshes() -> None:
    store = LoadSaveOnly()
    async with barred_site(wait=0.1) as (site, barrier):
        await signed_in(site, store)  # type: ignore[arg-type]
        authorizer = FollowRedirect()
        assert await call(site, OAuth(authorizer, store=store)) == "hello"  # type: ignore[arg-type]
        assert authorizer.asked == []
        assert barrier.refreshes == 1
        assert_live(site, store.records[site.url])
