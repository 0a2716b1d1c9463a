"""What the HTTP server does when a client's moves overlap each other or the shutdown:
each race made deterministic with a hook in the ASGI app or the handler, over real
uvicorn on 127.0.0.1. Expected: exactly once where promised, a clear error otherwise,
and nothing left in the server's maps."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import meta, mirrored_headers
from support.procs import uvicorn_server
from support.sessions import ACCEPT, initialize_body, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

Scope = dict[str, Any]
ASGI = Callable[..., Any]


def entered_body(app: ASGI, started: asyncio.Event) -> ASGI:
    """``app``, setting ``started`` once a request of it reads the first piece of its body
    (it passed every check made before the body)."""

    async def wrapped(scope: Scope, receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        async def reading() -> Any:
            started.set()
            return await receive()

        await app(scope, reading, send)

    return wrapped


def counted_server(runs: list[str]) -> Server:
    app = Server("races")

    @app.tool()
    async def work(ctx: Context) -> str:
        runs.append("work")
        return "done"

    return app


async def _post_in_two_pieces(
    port: int, head: dict[str, str], body: bytes, between: Callable[[], Any]
) -> bytes:
    """POST ``body`` to ``/mcp`` on a raw connection, its first bytes, then ``between()``,
    then the rest; the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = "".join(f"{k}: {v}\r\n" for k, v in {**head, "content-length": str(len(body))}.items())
        writer.write(f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n{lines}\r\n".encode())
        writer.write(body[:10])
        await writer.drain()
        await between()
        writer.write(body[10:])
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()


@pytest.mark.parametrize("era", ["2025-11-25 initialize", "2026-07-28 tools/call"])
async def test_a_request_whose_body_arrives_after_begin_shutdown_is_refused(era: str) -> None:
    runs: list[str] = []
    server = counted_server(runs)
    app = StreamableHTTP(server)
    started = asyncio.Event()
    if era.startswith("2025"):
        body = orjson.dumps(initialize_body())
        head = {"content-type": "application/json", "accept": ACCEPT}
    else:
        params = {"name": "work", "arguments": {}, "_meta": meta()}
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        head = mirrored_headers("tools/call", params)

    async def shut() -> None:
        await asyncio.wait_for(started.wait(), 5)  # the request passed the check for a shutdown
        app.begin_shutdown()

    async with uvicorn_server(entered_body(app, started)) as running:
        answer = await _post_in_two_pieces(running.port, head, body, shut)
    status = answer.split(b"\r\n", 1)[0]
    assert status == b"HTTP/1.1 503 Service Unavailable", answer
    refusal = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert refusal["id"] == (0 if era.startswith("2025") else 1)
    assert "shutting down" in refusal["error"]["message"]
    assert b"mcp-session-id" not in answer.lower()
    assert len(server.sessions) == 0  # no session opened on a server that stopped
    assert runs == []  # nor a handler run


async def test_a_cancelled_request_whose_handler_returns_anyway_is_not_answered(
    wire_2025: WireChecker,
) -> None:
    """The client cancelled the request; its handler caught the cancellation and returned.
    Nothing is sent for the request (as over stdio) and the session keeps no trace of it."""
    started = asyncio.Event()
    server = Server("races")

    @server.tool()
    async def stubborn(ctx: Context) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass  # swallowed: the handler ends as if nothing happened
        return "finished anyway"

    async with uvicorn_server(StreamableHTTP(server)) as running, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "stubborn"}}
        answer = asyncio.ensure_future(http.post(running.url, json=call, headers=headers))
        await asyncio.wait_for(started.wait(), 5)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        assert (await http.post(running.url, json=cancel, headers=headers)).status_code == 202
        body = (await asyncio.wait_for(answer, 5)).content
        assert b"finished anyway" not in body, body
        session = server.sessions.get(headers["mcp-session-id"], None)
        assert session is not None
        assert not session.cancelled and not session.inflight


class PausingStore(MemoryStore):
    """A memory store whose writes to the vault wait for ``go`` (after setting ``writing``)."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = asyncio.Event()
        self.go = asyncio.Event()

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "vault":
            self.writing.set()
            await self.go.wait()
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_secret_whose_flow_is_cancelled_while_it_is_being_saved_is_not_kept() -> None:
    """The page has checked the flow is open and is saving the secret when the request
    gives the flow up (cancelled): the flow's end is the truth, so the secret is not kept
    and the page does not say it was saved."""
    store = PausingStore()
    server = Server("races", state_keys=KeyRing([bytes(range(40, 72))]), store=store, flow_wait=0.3)

    @server.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("api_key")
        return answer.action

    params = {"name": "use_key", "_meta": meta({"elicitation": {"form": {}, "url": {}}})}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with (
        uvicorn_server(StreamableHTTP(server)) as running,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
    ):
        first = (
            await http.post(running.url, json=call, headers=mirrored_headers("tools/call", params))
        ).json()
        url = next(iter(first["result"]["inputRequests"].values()))["params"]["url"]
        flow_id = url.split("/flows/")[1].split("?")[0]
        claimed = await browser.get(url)
        location = claimed.url.join(claimed.headers["location"])
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', (await browser.get(location)).text)
        assert csrf is not None
        form = {"csrf": csrf.group(1), "action": "submit", "value": "sk-secret"}
        posted = asyncio.ensure_future(browser.post(location, data=form))
        await asyncio.wait_for(store.writing.wait(), 5)  # the page is saving the secret
        flow = await server.url_mode.flows.get(flow_id)
        assert flow is not None and await server.url_mode.flows.finish(flow, "cancelled")
        store.go.set()
        page = await asyncio.wait_for(posted, 5)
        assert "Saved" not in page.text
        assert await server.url_mode.vault.get("vault", "api_key", None) is None
    await store.close()
