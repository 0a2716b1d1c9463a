"""2025-11-25 over real HTTP (uvicorn on 127.0.0.1): a session the server no longer holds
answers 404, and the client opens a new one and sends the request again there, whatever
the 404's body says (this project's server and the official SDKs send a JSON-RPC error)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.errors import InvalidRequest, TransportError
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio

V2025 = ["2025-11-25"]


def counting_server() -> tuple[Server, list[str]]:
    server = Server("renewing")
    ran: list[str] = []

    @server.tool()
    async def note(text: str) -> str:
        """Notes ``text`` (each run is counted)."""
        ran.append(text)
        return f"noted {text}"

    return server, ran


async def test_a_session_the_server_ended_is_renewed_and_its_requests_sent_again() -> None:
    """The server's 404 for a session it no longer holds carries a JSON-RPC error with the
    request's id; the client raised it (InvalidRequest, "Session not found") instead of
    starting the new session the 404 asks for, so every later request failed the same way.
    Now tools/list and tools/call go again in a new session; the call runs once, since the
    404 answered it before the server looked at it."""
    server, ran = counting_server()
    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(running.url, versions=V2025, timeout=30) as client:
            first = client.session.session_id  # type: ignore[union-attr]
            assert first is not None
            async with httpx.AsyncClient() as raw:
                ended = await raw.delete(
                    running.url, headers={"Mcp-Session-Id": first, "MCP-Protocol-Version": "2025-11-25"}
                )
            assert ended.status_code == 200
            assert [t["name"] for t in await client.list_tools()] == ["note"]
            renewed = client.session.session_id  # type: ignore[union-attr]
            assert renewed not in (None, first)
            async with httpx.AsyncClient() as raw:
                await raw.delete(
                    running.url, headers={"Mcp-Session-Id": renewed, "MCP-Protocol-Version": "2025-11-25"}
                )
            out = await client.call_tool("note", {"text": "a"})
            assert out["content"][0]["text"] == "noted a"
            assert client.session.session_id not in (None, first, renewed)  # type: ignore[union-attr]
    assert ran == ["a"]


async def not_found(send: Any, body: bytes, kind: bytes = b"application/json") -> None:
    headers = [(b"content-type", kind), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def forgetting(inner: StreamableHTTP, body: bytes, forgotten: set[str]) -> Any:
    """``inner``, except that a request of a session in ``forgotten`` gets 404 with ``body``."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        session = dict(scope.get("headers", [])).get(b"mcp-session-id", b"").decode()
        if scope["type"] == "http" and session in forgotten:
            await not_found(send, body)
            return
        await inner(scope, receive, send)

    return app


#: The official Python SDK's 404 for an unknown session: a JSON-RPC error without an id.
SDK_BODY = orjson.dumps(
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
)


async def test_a_404_with_an_error_without_an_id_renews_the_session_too() -> None:
    """Other servers' 404 (the official SDK's) carries a JSON-RPC error whose id is null,
    which the client took for the request's answer and raised."""
    server, ran = counting_server()
    forgotten: set[str] = set()
    async with uvicorn_server(forgetting(StreamableHTTP(server), SDK_BODY, forgotten)) as running:
        async with connect_http(running.url, versions=V2025, timeout=30) as client:
            first = client.session.session_id  # type: ignore[union-attr]
            assert first is not None
            forgotten.add(first)
            out = await client.call_tool("note", {"text": "b"})
            assert out["content"][0]["text"] == "noted b"
            assert client.session.session_id not in (None, first)  # type: ignore[union-attr]
    assert ran == ["b"]


async def posted(receive: Any) -> tuple[bytes, Any]:
    """A POST's whole body, and a ``receive`` that gives it again (to the app behind)."""
    whole = b""
    while True:
        message = await receive()
        whole += message.get("body", b"")
        if not message.get("more_body"):
            break
    given = False

    async def again() -> Any:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": whole, "more_body": False}

    return whole, again


async def test_concurrent_requests_meeting_the_404_share_one_new_session() -> None:
    server, _ = counting_server()
    forgotten: set[str] = set()
    initializes: list[bytes] = []
    app = forgetting(StreamableHTTP(server), SDK_BODY, forgotten)

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            body, receive = await posted(receive)
            if orjson.loads(body).get("method") == "initialize":
                initializes.append(body)
        await app(scope, receive, send)

    async with uvicorn_server(counting) as running:
        async with connect_http(running.url, versions=V2025, timeout=30) as client:
            forgotten.add(client.session.session_id)  # type: ignore[union-attr, arg-type]
            lists = await asyncio.gather(*(client.list_tools() for _ in range(4)))
            assert [[t["name"] for t in tools] for tools in lists] == [["note"]] * 4
    assert len(initializes) == 2


async def test_a_server_that_answers_404_again_fails_the_request_with_its_own_error() -> None:
    """A 404 after the renewal (a server that answers every tools/call so) ends the request
    with the server's JSON-RPC error, after one new session: no loop. The error says the
    status too, and what a server that forgets its sessions at once usually is."""
    server, ran = counting_server()
    inner = StreamableHTTP(server)
    initializes: list[bytes] = []

    async def refusing_calls(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            body, receive = await posted(receive)
            method = orjson.loads(body).get("method")
            if method == "initialize":
                initializes.append(body)
            if method == "tools/call":
                await not_found(send, SDK_BODY)
                return
        await inner(scope, receive, send)

    async with uvicorn_server(refusing_calls) as running:
        async with connect_http(running.url, versions=V2025, timeout=30) as client:
            with pytest.raises(InvalidRequest, match="Session not found") as refused:
                await client.call_tool("note", {"text": "c"})
    assert ran == []
    assert len(initializes) == 2
    assert refused.value.http_status == 404
    assert "HTTP 404 in a new session too" in str(refused.value)
    assert "several instances" in str(refused.value)


async def test_a_404_in_plain_text_in_the_new_session_too_says_why_once() -> None:
    """A 404 without a JSON-RPC error in it after the renewal said only "got HTTP 404 and
    no JSON-RPC response": not that it came in a new session too, as one with an error
    says. It says so now, the status once."""
    server, ran = counting_server()
    inner = StreamableHTTP(server)

    async def refusing_calls(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            body, receive = await posted(receive)
            if orjson.loads(body).get("method") == "tools/call":
                await not_found(send, b"Session not found", b"text/plain")
                return
        await inner(scope, receive, send)

    async with uvicorn_server(refusing_calls) as running:
        async with connect_http(running.url, versions=V2025, timeout=30) as client:
            with pytest.raises(TransportError, match="Session not found") as refused:
                await client.call_tool("note", {"text": "c"})
    said = str(refused.value)
    assert ran == []
    assert "in a new session too: the server forgets a session as soon as it opens it" in said, said
    assert said.count("HTTP 404") == 1, said
