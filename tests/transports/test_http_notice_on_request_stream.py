"""2025-11-25 over real HTTP (uvicorn on 127.0.0.1): the completion notice of a URL step
asked in place (``ctx.secret`` waiting for its page) goes on the stream of the request that
asked it, before that request's answer, so a client that never opens the optional ``GET``
stream hears it too. Also when the connection broke meanwhile (the resume replays it), when
the page was served by another instance sharing the store (the waiting request wakes
through the store and sends it), and when another request's tool completed the step (the
notice is about the request that asked, not the one that said it is done). A -32042's
notice, where no request waits, stays on the ``GET`` stream (``test_http_sessions``)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.stores import MemoryStore, RedisStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.http_sessions import Session
from support.pages import serving
from support.procs import uvicorn_server
from support.url_mode import SECRET, _fill_page, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
DONE = "notifications/elicitation/complete"
ACCEPTED = f"key accepted ({len(SECRET)} characters)"


class Stream:
    """The events of one SSE response, with the id of the last one read."""

    def __init__(self, response: httpx.Response) -> None:
        self.decoder = EventDecoder()
        self._chunks = response.aiter_bytes()
        self._ready: list[dict[str, Any]] = []

    async def next(self) -> dict[str, Any]:
        async with asyncio.timeout(10.0):
            while not self._ready:
                chunk = await anext(self._chunks)
                self._ready.extend(orjson.loads(e.data) for e in self.decoder.feed(chunk) if e.data)
        return self._ready.pop(0)

    async def rest(self) -> list[dict[str, Any]]:
        """Every message still to come, until the response ends."""
        async with asyncio.timeout(10.0):
            async for chunk in self._chunks:
                self._ready.extend(orjson.loads(e.data) for e in self.decoder.feed(chunk) if e.data)
        rest, self._ready = self._ready, []
        return rest


async def _asked(session: Session, stream: Stream) -> dict[str, Any]:
    """The URL step the call asks first, accepted (the client agrees to open the page)."""
    question = await stream.next()
    session.wire.request(question)
    assert question["method"] == "elicitation/create"
    assert question["params"]["mode"] == "url"
    answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept"}}
    session.wire.response("elicitation/create", answer)
    assert (await session.post(answer)).status_code == 202
    return dict(question["params"])


def _checked(wire: WireChecker, messages: list[dict[str, Any]], elicitation_id: str) -> None:
    """The notice for ``elicitation_id``, then the call's answer, and nothing else."""
    assert [m.get("method") for m in messages] == [DONE, None], messages
    notice, final = messages
    wire.notification(notice)
    wire.response("tools/call", final)
    assert notice["params"] == {"elicitationId": elicitation_id}
    assert final["result"]["content"][0]["text"] == ACCEPTED


@pytest.fixture
async def one_server() -> AsyncIterator[str]:
    store = MemoryStore()
    try:
        async with uvicorn_server(StreamableHTTP(build(store), resume_within=10.0)) as running:
            yield running.url
    finally:
        await store.close()


async def test_the_notice_comes_on_the_request_stream_of_a_client_with_no_get_stream(
    one_server: str, wire_2025: WireChecker
) -> None:
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        session = Session(http, one_server, wire_2025)
        await session.open()
        call = session.call("use_key")
        async with http.stream("POST", one_server, json=call, headers=session.headers()) as response:
            stream = Stream(response)
            step = await _asked(session, stream)
            assert (await _fill_page(browser, step["url"])).status_code == 200
            _checked(wire_2025, await stream.rest(), step["elicitationId"])


async def test_a_resumed_request_stream_replays_the_notice(one_server: str, wire_2025: WireChecker) -> None:
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        session = Session(http, one_server, wire_2025)
        await session.open()
        call = session.call("use_key")
        async with http.stream("POST", one_server, json=call, headers=session.headers()) as response:
            stream = Stream(response)
            step = await _asked(session, stream)
            last = stream.decoder.last_event_id
        assert last is not None
        # the connection is gone: the page is done meanwhile, then the client comes back
        assert (await _fill_page(browser, step["url"])).status_code == 200
        headers = session.headers() | {"last-event-id": last}
        async with http.stream("GET", one_server, headers=headers) as resumed:
            assert resumed.status_code == 200
            _checked(wire_2025, await Stream(resumed).rest(), step["elicitationId"])


async def test_a_page_done_on_another_instance_is_told_on_the_request_stream(
    redis_url: str, wire_2025: WireChecker
) -> None:
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    stores = [RedisStore(redis_url, prefix=prefix) for _ in range(2)]
    apps: list[Server] = [build(store) for store in stores]
    try:
        async with (
            serving(apps) as bases,
            httpx.AsyncClient(timeout=10) as http,
            httpx.AsyncClient(timeout=10) as browser,
        ):
            url = f"{bases[0]}/mcp"
            session = Session(http, url, wire_2025)
            await session.open()
            async with http.stream("POST", url, json=session.call("use_key"), headers=session.headers()) as r:
                stream = Stream(r)
                step = await _asked(session, stream)
                assert step["url"].startswith(bases[0])
                elsewhere = bases[1] + step["url"][len(bases[0]) :]
                assert (await _fill_page(browser, elsewhere)).status_code == 200
                _checked(wire_2025, await stream.rest(), step["elicitationId"])
    finally:
        for store in stores:
            await store.close()


def _hooked() -> Server:
    """A step one request asks and waits on in place, another request's tool completes."""
    app = Server("hooked", "1.0.0")
    done = asyncio.Event()

    @app.tool()
    async def wait_for_hook(ctx: Context) -> str:
        """Asks the step "hook", then waits until it is done."""
        answer = await ctx.elicit_url("Link it", "https://hooks.example.com/link", elicitation_id="hook")
        await asyncio.wait_for(done.wait(), 10)
        return f"hook: {answer.action}"

    @app.tool()
    def finish_hook() -> str:
        """Says the step "hook" is done (as a webhook's handler would)."""
        told = app.complete_elicitation("hook")
        done.set()
        return f"told: {told}"

    return app


async def test_a_step_completed_by_another_requests_tool_is_told_on_the_asking_requests_stream(
    wire_2025: WireChecker,
) -> None:
    async with (
        uvicorn_server(StreamableHTTP(_hooked(), resume_within=10.0)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        session = Session(http, running.url, wire_2025)
        await session.open()
        call = session.call("wait_for_hook")
        async with http.stream("POST", running.url, json=call, headers=session.headers()) as response:
            stream = Stream(response)
            step = await _asked(session, stream)
            assert step["elicitationId"] == "hook"
            finishing = await session.post(session.call("finish_hook"))
            # its own answer alone (JSON, no event stream): the notice is not about this request
            assert finishing.headers["content-type"].startswith("application/json")
            wire_2025.response("tools/call", finishing.json())
            assert finishing.json()["result"]["content"][0]["text"] == "told: True"
            messages = await stream.rest()
        assert [m.get("method") for m in messages] == [DONE, None], messages
        notice, final = messages
        wire_2025.notification(notice)
        wire_2025.response("tools/call", final)
        assert notice["params"] == {"elicitationId": "hook"}
        assert final["result"]["content"][0]["text"] == "hook: accept"
