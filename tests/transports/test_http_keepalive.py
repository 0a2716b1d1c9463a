"""Long requests are kept alive: SSE comments on a silent response, so that a proxy's idle
timeout does not cut a request while a person answers a question.

Real HTTP (uvicorn on 127.0.0.1), and a real nginx with a one-second
``proxy_read_timeout`` in front of it: the requests that outlive that timeout only get
through because of the comments (the same request with keep-alives off gets nginx's 504,
which shows the test can fail). Every JSON-RPC message is checked against its revision's
schema.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.nginx import SKIP_REASON, nginx_available, nginx_balancer
from support.procs import uvicorn_server
from support.sessions import ACCEPT, ask_name_server, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


def build(delay: float, released: asyncio.Event | None = None) -> Server:
    """A server whose tool ``slow`` answers after ``delay`` seconds, or once ``released``
    is set (at most 10 s later: then it fails)."""
    app = ask_name_server("keepalive")

    @app.tool()
    async def slow(ctx: Context) -> str:
        """Answers after a while, like a tool waiting on something slow."""
        if released is None:
            await asyncio.sleep(delay)
        else:
            await asyncio.wait_for(released.wait(), 10)
        return "done"

    return app


def modern_call(rid: int, name: str) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "_meta": META}}
    headers = {
        "accept": ACCEPT,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    return body, headers


async def read_stream(response: httpx.Response) -> tuple[bytes, list[dict[str, Any]]]:
    """The raw body and the JSON-RPC messages of its SSE events."""
    raw = b""
    decoder = EventDecoder()
    messages = []
    async for chunk in response.aiter_bytes():
        raw += chunk
        messages += [orjson.loads(event.data) for event in decoder.feed(chunk)]
    return raw, messages


async def test_a_long_request_switches_to_sse_and_gets_comments(wire: WireChecker) -> None:
    released = asyncio.Event()  # the tool answers once the client has read two comments
    async with uvicorn_server(StreamableHTTP(build(0.0, released), keepalive=0.2)) as running:
        body, headers = modern_call(1, "slow")
        wire.request(body)
        async with httpx.AsyncClient(timeout=15) as http:
            async with http.stream("POST", running.url, json=body, headers=headers) as response:
                assert response.status_code == 200
                assert response.headers["content-type"] == "text/event-stream"
                raw = b""
                chunks = response.aiter_bytes()
                async for chunk in chunks:
                    raw += chunk
                    if raw.count(b":\n\n") >= 2:
                        break
                released.set()
                async for chunk in chunks:
                    raw += chunk
    # comments (":\n\n") come first, two of them before the tool could answer, then the answer
    assert raw.startswith(b":\n\n") and raw.count(b":\n\n") >= 2, raw
    messages = [orjson.loads(event.data) for event in EventDecoder().feed(raw)]
    (message,) = messages
    wire.response("tools/call", message)
    assert message["id"] == 1 and message["result"]["content"][0]["text"] == "done"


async def test_a_fast_request_and_a_json_only_client_get_plain_json(wire: WireChecker) -> None:
    async with uvicorn_server(StreamableHTTP(build(0.8), keepalive=0.2)) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            body, headers = modern_call(2, "slow")
            headers["accept"] = "application/json"  # no SSE: nothing to keep it alive with
            response = await http.post(running.url, json=body, headers=headers)
            assert response.headers["content-type"] == "application/json"
            wire.response("tools/call", response.json())
            assert response.json()["result"]["content"][0]["text"] == "done"
    async with uvicorn_server(StreamableHTTP(build(0.0), keepalive=0.2)) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            body, headers = modern_call(3, "slow")
            response = await http.post(running.url, json=body, headers=headers)
            assert response.headers["content-type"] == "application/json"
            assert response.json()["result"]["content"][0]["text"] == "done"


async def test_a_session_question_waiting_for_its_answer_gets_comments(wire_2025: WireChecker) -> None:
    async with uvicorn_server(StreamableHTTP(build(0.0), keepalive=0.2)) as running:
        async with httpx.AsyncClient(timeout=10) as http:
            raw, messages = await session_call_answered_late(http, running.url, 0.8, wire_2025)
    question, result = messages
    assert question["method"] == "elicitation/create"
    assert result["result"]["content"][0]["text"] == "hello Ada"
    # between the question and the answer, the stream was kept alive
    between = raw[raw.index(b"elicitation/create") : raw.index(b"hello Ada")]
    assert between.count(b":\n\n") >= 2, raw


async def session_call_answered_late(
    http: httpx.AsyncClient, url: str, delay: float, wire: WireChecker
) -> tuple[bytes, list[dict[str, Any]]]:
    """Open a 2025-11-25 session, call ``ask_name``, answer its question after ``delay``
    seconds; the raw stream and the messages on it."""
    headers = await open_session(http, url, wire)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name"}}
    wire.request(call)
    raw = b""
    messages: list[dict[str, Any]] = []
    decoder = EventDecoder()
    async with http.stream("POST", url, json=call, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        async for chunk in response.aiter_bytes():
            raw += chunk
            for event in decoder.feed(chunk):
                message = orjson.loads(event.data)
                messages.append(message)
                if message.get("method") == "elicitation/create":
                    wire.outgoing(message)
                    await asyncio.sleep(delay)  # a person typing
                    answer = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"action": "accept", "content": {"name": "Ada"}},
                    }
                    wire.outgoing(answer, "elicitation/create")
                    posted = await http.post(url, json=answer, headers=headers)
                    assert posted.status_code == 202
                else:
                    wire.response("tools/call", message)
    return raw, messages


def test_keepalive_must_be_positive_or_none() -> None:
    app = build(0.0)
    assert StreamableHTTP(app, keepalive=None).keepalive is None
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ConfigError, match="keepalive"):
            StreamableHTTP(app, keepalive=bad)


# ---- behind a proxy with an idle timeout -------------------------------------------------


Proxied = Callable[[StreamableHTTP], contextlib.AbstractAsyncContextManager[str]]


@pytest.fixture
def proxied(tmp_path: Path) -> Proxied:
    """Serve an app behind nginx with a one-second idle timeout; yields the proxied URL."""
    if not nginx_available():
        pytest.skip(SKIP_REASON)

    @contextlib.asynccontextmanager
    async def serve(app: StreamableHTTP) -> AsyncIterator[str]:
        async with uvicorn_server(app) as running:
            with nginx_balancer([running.port], tmp_path / f"nginx-{running.port}", read_timeout=1.0) as lb:
                yield lb.base + "/mcp"

    return serve


async def test_behind_a_proxy_a_long_request_survives_only_with_keepalives(proxied: Proxied) -> None:
    body, headers = modern_call(4, "slow")
    async with proxied(StreamableHTTP(build(2.5), keepalive=0.3)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            async with http.stream("POST", url, json=body, headers=headers) as response:
                assert response.status_code == 200
                _, messages = await read_stream(response)
    assert messages[-1]["result"]["content"][0]["text"] == "done"
    async with proxied(StreamableHTTP(build(2.5), keepalive=None)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.post(url, json=body, headers=headers)
    assert response.status_code == 504  # nginx gave up on the silent upstream


async def test_behind_a_proxy_a_person_may_take_longer_than_the_idle_timeout(
    proxied: Proxied, wire_2025: WireChecker
) -> None:
    async with proxied(StreamableHTTP(build(0.0), keepalive=0.3)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            _, messages = await session_call_answered_late(http, url, 2.5, wire_2025)
    assert messages[-1]["result"]["content"][0]["text"] == "hello Ada"
    async with proxied(StreamableHTTP(build(0.0), keepalive=None)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            # nginx closes the silent stream after a second: the answer never arrives
            with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
                await session_call_answered_late(http, url, 2.5, wire_2025)


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_behind_a_proxy_mcp_elicits_own_client_waits_out_a_slow_tool(
    proxied: Proxied, revision: str
) -> None:
    async with proxied(StreamableHTTP(build(2.5), keepalive=0.3)) as url:
        async with connect_http(url, versions=[revision]) as client:
            assert client.revision == revision
            result = await client.call_tool("slow")
    assert result["content"][0]["text"] == "done"
