"""2026-07-28: a URL step the client accepted keeps its request going while the page is open.
The server answers a state-only round every ``flow_wait`` until the page is finished; the
client goes on past ``RoundLimits.max_state_only`` for as long as ``RoundLimits.url_wait``
allows, and tells the answerer once (``url_waiting``) that it waits for the page.
State-only rounds with no URL step pending (one declined, or none asked) are still
stopped by the count: a server cannot keep a client for ever. Several pages accepted in
one round are each said; a prompt or a resource waits as a tool does."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

import httpx
import pytest

from client.hostile import hostile
from mcp_elicit import Context
from mcp_elicit.client import ElicitAnswer, RoundLimits
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import RoundsExceeded
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.url_mode import SECRET, _fill_page, build

pytestmark = pytest.mark.anyio

#: More state-only rounds in a row than the client takes with no page pending.
PAST_THE_COUNT = RoundLimits().max_state_only + 2


class StateOnly:
    """A transport trace: counts the state-only results the client receives, and is set
    once there were ``enough``."""

    def __init__(self, enough: int) -> None:
        self.seen = 0
        self.enough = enough
        self.reached = asyncio.Event()

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        result = message.get("result")
        if direction != "receive" or not isinstance(result, Mapping):
            return
        if result.get("resultType") == "input_required" and "inputRequests" not in result:
            self.seen += 1
            if self.seen >= self.enough:
                self.reached.set()


class Person:
    """Agrees to open each page (accept), and notes what the client says it waits for."""

    modes = frozenset({"url"})

    def __init__(self, action: Literal["accept", "decline"] = "accept") -> None:
        self.action = action
        self.heard = asyncio.Event()  # set once the client says it waits for a page
        self.urls: list[str] = []
        self.waiting: list[str | None] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.url is not None
        self.urls.append(request.url)
        return ElicitAnswer(self.action)

    async def url_waiting(self, request: ElicitationRequest) -> None:
        self.waiting.append(request.url)
        self.heard.set()


async def test_an_accepted_page_is_waited_for_past_the_count_of_state_only_rounds() -> None:
    """The person said yes but is slow on the page: the server answers more state-only
    rounds than ``max_state_only`` while it waits, then the page is finished and the call
    completes; the answerer heard once that the client waits for that page."""
    store = MemoryStore()
    app = build(store, flow_wait=0.02)
    trace, person = StateOnly(PAST_THE_COUNT), Person()
    try:
        async with (
            uvicorn_server(StreamableHTTP(app)) as running,
            httpx.AsyncClient(timeout=10) as browser,
            connect_http(running.url, answerer=person, trace=trace) as client,
        ):
            call = asyncio.ensure_future(client.call_tool("use_key"))
            reached = asyncio.ensure_future(trace.reached.wait())
            try:
                done, _ = await asyncio.wait([call, reached], timeout=60, return_when=asyncio.FIRST_COMPLETED)
                assert call not in done, call.result()  # the call gave up: its error is the failure
                assert reached in done, f"only {trace.seen} state-only rounds"
                (url,) = person.urls
                page = await _fill_page(browser, url)
                assert page.status_code == 200, page.text
                out = await asyncio.wait_for(call, 60)
            finally:
                reached.cancel()
                call.cancel()
    finally:
        await store.close()
    assert out["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"
    assert trace.seen >= PAST_THE_COUNT
    assert person.waiting == [url]


async def test_an_accepted_page_is_waited_for_no_longer_than_url_wait() -> None:
    """A page never finished: the rounds go on until ``url_wait`` has passed since the
    step was asked, then the call fails saying so (and which limit)."""
    store = MemoryStore()
    app = build(store, flow_wait=0.02)
    limits = RoundLimits(url_wait=0.5)
    try:
        async with (
            uvicorn_server(StreamableHTTP(app)) as running,
            connect_http(running.url, answerer=Person(), limits=limits) as client,
        ):
            with pytest.raises(RoundsExceeded, match=r"RoundLimits\.url_wait") as caught:
                await asyncio.wait_for(client.call_tool("use_key"), 60)
    finally:
        await store.close()
    assert "waited more than 0.5 s for the page at 127.0.0.1" in str(caught.value)


async def test_a_server_with_no_page_pending_is_still_stopped_by_the_count() -> None:
    """The person declined the URL step, yet the server answers only state-only rounds:
    nothing is pending, so the count stops it, as for a server that asked nothing."""
    person = Person("decline")
    async with hostile(["url-then-state"], "2026-07-28", person) as (client, recorder):
        with pytest.raises(
            RoundsExceeded, match=r"6 times in a row with only a requestState.*the limit is 5"
        ):
            await asyncio.wait_for(client.call_tool("t"), 60)
    assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) == 7
    assert person.waiting == []


async def test_a_hostile_server_keeps_an_accepted_page_no_longer_than_url_wait() -> None:
    """A server that asked a URL step, then answers state-only rounds for ever whatever
    happens to the page, is stopped once ``url_wait`` has passed."""
    person = Person()
    limits = RoundLimits(url_wait=1.0, backoff=(0.05,))
    async with hostile(["url-then-state"], "2026-07-28", person, limits) as (client, recorder):
        with pytest.raises(RoundsExceeded, match=r"example\.com.*RoundLimits\.url_wait"):
            await asyncio.wait_for(client.call_tool("t"), 60)
    assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) > PAST_THE_COUNT
    assert person.waiting == ["https://example.com/sign-in"]


async def test_every_page_accepted_in_one_round_is_said_once() -> None:
    """A round asked two pages and the person accepted both: the server may wait for
    either, so the answerer hears of each, once, in the order asked; the bound names both."""
    person = Person()
    limits = RoundLimits(url_wait=1.0, backoff=(0.05,))
    async with hostile(["pages-then-state"], "2026-07-28", person, limits) as (client, _):
        with pytest.raises(
            RoundsExceeded, match=r"example\.com and pay\.example\.net.*RoundLimits\.url_wait"
        ):
            await asyncio.wait_for(client.call_tool("t"), 60)
    assert person.urls == ["https://example.com/sign-in", "https://pay.example.net/p"]
    assert person.waiting == person.urls


@pytest.mark.parametrize("method", ["prompts/get", "resources/read"])
async def test_a_prompt_or_a_resource_waits_for_its_page_as_a_tool_does(method: str) -> None:
    """The wait is the request's, whatever its method: a prompt or a resource whose server
    asked a page, then answers only a requestState, is waited for past the count, said
    once, and stopped by ``url_wait``."""
    person = Person()
    limits = RoundLimits(url_wait=1.0, backoff=(0.05,))
    async with hostile(["url-then-state"], "2026-07-28", person, limits) as (client, recorder):
        call = client.get_prompt("p") if method == "prompts/get" else client.read_resource("r://x")
        with pytest.raises(RoundsExceeded, match=rf"{method} waited more than 1 s .*RoundLimits\.url_wait"):
            await asyncio.wait_for(call, 60)
    assert len([m for m in recorder.sent if m.get("method") == method]) > PAST_THE_COUNT
    assert person.waiting == ["https://example.com/sign-in"]


async def test_a_task_waiting_for_an_accepted_page_is_said_once() -> None:
    """A tool gone on as a task (the tasks extension) asks for a secret's page: the task
    waits for it in place, polled as working. The answerer heard nothing while it did, as
    the rounds' state-only wait says it; it now hears once, however many polls it takes."""
    store = MemoryStore()
    app = build(store, flow_wait=0.02)

    @app.tool(task="optional")
    async def key_in_a_task(ctx: Context) -> str:
        """Asks for the key from a task."""
        await ctx.start_task("needs a key")
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        return f"key {'stored' if answer.secret is not None else answer.action}"

    person = Person()
    try:
        async with (
            uvicorn_server(StreamableHTTP(app)) as running,
            httpx.AsyncClient(timeout=10) as browser,
            connect_http(running.url, answerer=person, tasks=True) as client,
        ):
            call = asyncio.ensure_future(client.call_tool("key_in_a_task"))
            try:
                heard = asyncio.ensure_future(person.heard.wait())
                try:  # the page is not finished: only the line (or the call's failure) ends this
                    await asyncio.wait([call, heard], timeout=30, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    heard.cancel()
                assert not call.done(), call.result()
                assert person.waiting, "the client said nothing while the task waited for the page"
                (url,) = person.urls
                page = await _fill_page(browser, url)
                assert page.status_code == 200, page.text
                out = await asyncio.wait_for(call, 60)
            finally:
                call.cancel()
    finally:
        await store.close()
    assert out["content"][0]["text"] == "key stored"
    assert person.waiting == [url]
