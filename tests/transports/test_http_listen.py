"""``subscriptions/listen`` over real Streamable HTTP (uvicorn on 127.0.0.1): a long-lived
SSE response that carries the acknowledgement and then each change; stopping the server
answers it (graceful closure) instead of holding the shutdown; a client that goes is
forgotten; a client that cannot take SSE is told so."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.http import meta, mirrored_headers
from support.procs import uvicorn_server
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SUB = "io.modelcontextprotocol/subscriptionId"


def build() -> Server:
    app = Server("http-listen")

    @app.tool()
    def first() -> str:
        """There from the start."""
        return "first"

    return app


def listen_body(rid: int = 7) -> dict[str, Any]:
    params = {"notifications": {"toolsListChanged": True}, "_meta": meta()}
    return {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}


async def read_events(response: httpx.Response, into: list[dict[str, Any]]) -> None:
    decoder = EventDecoder()
    async for chunk in response.aiter_bytes():
        for event in decoder.feed(chunk):
            into.append(orjson.loads(event.data))


async def until(messages: list[dict[str, Any]], count: int) -> None:
    await eventually(lambda: len(messages) >= count, f"{count} messages (have {messages})")


async def test_listen_streams_changes_and_shutdown_answers_it(wire: WireChecker) -> None:
    app = build()
    http_app = StreamableHTTP(app)
    body = listen_body()
    wire.request(body)
    async with uvicorn_server(http_app) as running, httpx.AsyncClient(timeout=10) as http:
        headers = mirrored_headers("subscriptions/listen", body["params"])
        async with http.stream("POST", running.url, json=body, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            messages: list[dict[str, Any]] = []
            reader = asyncio.ensure_future(read_events(response, messages))
            await until(messages, 1)
            assert messages[0]["method"] == "notifications/subscriptions/acknowledged"
            assert messages[0]["params"] == {"_meta": {SUB: 7}, "notifications": {"toolsListChanged": True}}

            @app.tool()
            def second() -> str:
                """Added while a client listens."""
                return "second"

            await until(messages, 2)
            assert messages[1] == {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUB: 7}},
            }
            http_app.begin_shutdown()
            await asyncio.wait_for(reader, 5)  # the stream ends with the answer
        final = messages[-1]
        assert final["id"] == 7 and final["result"]["resultType"] == "complete"
        assert final["result"]["_meta"][SUB] == 7
        for message in messages[:-1]:
            wire.notification(message)
        wire.response("subscriptions/listen", final)


async def test_a_listener_that_goes_is_forgotten(wire: WireChecker) -> None:
    app = build()
    body = listen_body()
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        headers = mirrored_headers("subscriptions/listen", body["params"])
        async with http.stream("POST", running.url, json=body, headers=headers) as response:
            messages: list[dict[str, Any]] = []
            reader = asyncio.ensure_future(read_events(response, messages))
            await until(messages, 1)
            assert len(app.subscriptions) == 1
            reader.cancel()
        # the disconnect is noticed and the listen request cancelled
        await eventually(lambda: len(app.subscriptions) == 0, "the listener to be forgotten")
        assert app.notify_list_changed("tools") == 0


async def test_a_client_that_takes_only_json_cannot_listen(wire: WireChecker) -> None:
    app = build()
    body = listen_body()
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        headers = {**mirrored_headers("subscriptions/listen", body["params"]), "Accept": "application/json"}
        refused = await http.post(running.url, json=body, headers=headers)
    assert refused.status_code == 406
    error = refused.json()
    wire.response("subscriptions/listen", error)
    assert error["id"] == 7 and "text/event-stream" in error["error"]["message"]
    assert len(app.subscriptions) == 0


async def second_listen_while_the_first_runs(app: Server) -> httpx.Response:
    """The answer to a second listen sent while a first one's stream is open."""
    first, second = listen_body(1), listen_body(2)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        headers = mirrored_headers("subscriptions/listen", first["params"])
        async with http.stream("POST", running.url, json=first, headers=headers) as response:
            messages: list[dict[str, Any]] = []
            reader = asyncio.ensure_future(read_events(response, messages))
            await until(messages, 1)
            refused = await http.post(running.url, json=second, headers=headers)
            reader.cancel()
    return refused


async def test_a_listen_past_the_callers_share_is_refused_as_its_own_doing(wire: WireChecker) -> None:
    """Past ``max_listeners_per_owner`` a listen is refused with -32600 (HTTP 429) naming
    the limit, not -32603: nothing failed on the server, the caller holds its share."""
    app = build()
    app.subscriptions.max_listeners_per_owner = 1
    refused = await second_listen_while_the_first_runs(app)
    assert refused.status_code == 429
    error = refused.json()
    wire.response("subscriptions/listen", error)
    assert error["id"] == 2 and error["error"]["code"] == -32600
    assert error["error"]["message"].startswith(
        "Too many subscriptions: unauthenticated callers hold 1, the limit for one principal "
        "(max_listeners_per_owner); "
    )
    assert error["error"]["data"] == {"limit": "max_listeners_per_owner", "most": 1}


async def test_a_listen_past_the_servers_capacity_is_try_again_later(wire: WireChecker) -> None:
    """Past ``max_listeners`` (the whole server's, not the caller's share) a listen is
    refused with -32603 and HTTP 503: the server is full, try again later."""
    app = build()
    app.subscriptions.max_listeners = 1
    refused = await second_listen_while_the_first_runs(app)
    assert refused.status_code == 503
    error = refused.json()
    wire.response("subscriptions/listen", error)
    assert error["id"] == 2 and error["error"]["code"] == -32603
    assert "limit of 1 subscriptions" in error["error"]["message"]
    assert error["error"]["message"].endswith("try again later")


async def test_a_subscription_the_server_tears_down_is_cancelled_then_answered(wire: WireChecker) -> None:
    """The server ending a subscription on its own (it stops) first says so with
    ``notifications/cancelled`` naming the listen request (the Cancellation pattern's
    MUST, stamped with the subscription id as everything on that stream), then answers
    the request (graceful closure). Before: the answer came alone."""
    app = build()
    http_app = StreamableHTTP(app)
    body = listen_body(rid=11)
    async with uvicorn_server(http_app) as running, httpx.AsyncClient(timeout=10) as http:
        headers = mirrored_headers("subscriptions/listen", body["params"])
        async with http.stream("POST", running.url, json=body, headers=headers) as response:
            messages: list[dict[str, Any]] = []
            reader = asyncio.ensure_future(read_events(response, messages))
            await until(messages, 1)
            http_app.begin_shutdown()
            await asyncio.wait_for(reader, 5)
    assert [m.get("method") for m in messages] == [
        "notifications/subscriptions/acknowledged",
        "notifications/cancelled",
        None,
    ]
    cancelled = messages[1]["params"]
    assert cancelled["requestId"] == 11 and cancelled["_meta"] == {SUB: 11}
    assert isinstance(cancelled["reason"], str) and cancelled["reason"]
    for message in messages[:-1]:
        wire.notification(message)
    wire.response("subscriptions/listen", messages[-1])
