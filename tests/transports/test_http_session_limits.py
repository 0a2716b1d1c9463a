"""2025-11-25 sessions over real HTTP: the limit on sessions. A session with an open stream is
not evicted, there is no room while every session listens, and one principal cannot push
another's session out or use it."""

from __future__ import annotations

import httpx
import pytest

from mcp_elicit.server.auth import StaticTokens
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http_sessions import Session
from support.procs import uvicorn_server
from support.sessions import ACCEPT, ask_name_server, initialize_body
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_a_session_with_an_open_stream_is_not_evicted(wire_2025: WireChecker) -> None:
    app = ask_name_server("http-sessions-bounded", max_sessions=2)
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening, idle = Session(http, running.url, wire_2025), Session(http, running.url, wire_2025)
        await listening.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            await idle.open()
            await Session(http, running.url, wire_2025).open()
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            kept = await http.post(running.url, json=ping, headers=listening.headers())
            assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, "the listening session stays"
            gone = await http.post(running.url, json=ping, headers=idle.headers())
            assert gone.status_code == 404, "the idle session made room"


async def test_no_room_while_every_session_listens(wire_2025: WireChecker) -> None:
    app = ask_name_server("http-sessions-full", max_sessions=1)
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening = Session(http, running.url, wire_2025)
        await listening.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            refused = await http.post(
                running.url, json=initialize_body(capabilities={}), headers={"accept": ACCEPT}
            )
            assert refused.status_code == 503
            assert "mcp-session-id" not in refused.headers
            assert refused.json()["error"]["message"] == "Too many sessions; try again later"
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            kept = await http.post(running.url, json=ping, headers=listening.headers())
            assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}


async def test_one_principal_cannot_push_anothers_session_out_or_use_it() -> None:
    """Over HTTP with bearer tokens: ann opening sessions without end leaves bob's
    session open, and ann, holding bob's session id, gets 404 on POST, GET and DELETE."""
    app = ask_name_server(
        "http-sessions-principals",
        auth=StaticTokens({"token-ann": "ann", "token-bob": "bob"}),
        max_sessions=4,
        max_sessions_per_principal=2,
    )
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):

        async def open_as(token: str) -> dict[str, str]:
            headers = {"accept": ACCEPT, "authorization": f"Bearer {token}"}
            opened = await http.post(running.url, json=initialize_body(), headers=headers)
            assert opened.status_code == 200, opened.text
            return {
                **headers,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }

        bob = await open_as("token-bob")
        for _ in range(6):
            await open_as("token-ann")
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        kept = await http.post(running.url, json=ping, headers=bob)
        assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, (
            "ann's sessions did not push bob's out"
        )
        as_ann = {**bob, "authorization": "Bearer token-ann"}
        for method in ("POST", "GET", "DELETE"):
            foreign = await http.request(
                method, running.url, headers=as_ann, json=ping if method == "POST" else None
            )
            assert foreign.status_code == 404, method
            assert foreign.json()["error"]["message"].startswith("Session not found"), method
        still = await http.post(running.url, json=ping, headers=bob)
        assert still.status_code == 200, "bob's session survived ann's attempts"
