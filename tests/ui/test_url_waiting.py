"""The library's own answerers say once that a request waits for a page the person agreed
to open (2026-07-28, ``Answerer.url_waiting``): the terminal answerer with one line on its
console, the browser answerer with one line through ``announce`` (its answer page is gone
once the round is answered, so it has no place left to show it). The line is the one
``mcp-elicit call`` prints. The terminal's is seen through a real server over HTTP on
127.0.0.1, the page filled as a browser would."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from client.test_url_wait import PAST_THE_COUNT, StateOnly

from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.ui.web import WebAnswerer
from ui.web_rounds import url_request

from support.procs import uvicorn_server
from support.terminal_answerer import ENTER, Browser, answerer
from support.url_mode import SECRET, _fill_page, build

pytestmark = pytest.mark.anyio


async def test_the_terminal_says_once_that_the_call_waits_for_the_page() -> None:
    """The person opens the page and says done before finishing it: the server answers
    state-only rounds, and the terminal says once, in one line, what the call waits for."""
    store = MemoryStore()
    app = build(store, flow_wait=0.02)
    trace, browser = StateOnly(PAST_THE_COUNT), Browser()
    try:
        async with (
            answerer("o" + ENTER + ENTER, browser=browser) as (person, screen, _),
            uvicorn_server(StreamableHTTP(app)) as running,
            httpx.AsyncClient(timeout=10) as page_browser,
            connect_http(running.url, answerer=person, trace=trace) as client,
        ):
            call = asyncio.ensure_future(client.call_tool("use_key"))
            try:
                async with asyncio.timeout(60):
                    await trace.reached.wait()
                (url,) = browser.opened
                page = await _fill_page(page_browser, url)
                assert page.status_code == 200, page.text
                out = await asyncio.wait_for(call, 60)
            finally:
                call.cancel()
    finally:
        await store.close()
    assert out["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"
    lines = [line for line in screen.text.splitlines() if "waiting for the page" in line]
    assert lines == [
        "… waiting for the page at 127.0.0.1 to be finished (url-mode asks, during tools/call use_key)"
    ]


async def test_the_browser_answerer_announces_the_wait_as_the_terminal_says_it() -> None:
    said: list[str] = []
    web = WebAnswerer(open_url=lambda _: True, announce=said.append)
    await web.url_waiting(url_request("https://pay.example.com/deposit"))
    assert said == [
        "mcp-elicit: … waiting for the page at pay.example.com to be finished "
        "(Table bookings asks, during tools/call book_table)"
    ]
