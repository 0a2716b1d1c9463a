"""The library's own answerers say once that a request waits for a page the person agreed
to open (2026-07-28, ``Answerer.url_waiting``): the terminal answerer with one line on its
console, the browser answerer with one line through ``announce`` (its answer page is gone
once the round is answered, so it has no place left to show it). The line is the one
``mcp-elicit call`` prints. The terminal's is seen through a real server over HTTP on
127.0.0.1, the page filled as a browser would; and above another request's question being
asked (on a drawn and on a dumb terminal), which is drawn again below it."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys

import httpx
import pytest
from cli.helpers import ASCII_ONLY
from client.test_url_wait import PAST_THE_COUNT, StateOnly
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.ui.terminal import TerminalAnswerer
from mcp_elicit.ui.web import WebAnswerer
from ui.web_rounds import form_request, url_request

from support.procs import uvicorn_server
from support.terminal_answerer import ENTER, Browser, answerer, elicit
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


async def drawn(screen: io.StringIO, text: str, *, after: int = 0) -> None:
    """Return once ``text`` is on ``screen`` past ``after``; fail after 5 s saying so."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while text not in screen.getvalue()[after:]:
        if loop.time() > deadline:
            raise AssertionError(f"{text!r} was not drawn past {after}: {screen.getvalue()[-400:]!r}")
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_the_terminal_says_it_above_a_question_being_asked(term: str) -> None:
    """Another request's question is being asked when the line comes (one person, two
    requests): the prompt is taken off the screen (a plain one's line ended), the line
    written, and the prompt drawn again below it, so the line does not land in the prompt
    the person types in."""
    screen = io.StringIO()  # the terminal: what the console prints and the prompts draw
    console = Console(file=screen, width=100, markup=False, emoji=False, highlight=False, color_system=None)
    output = Vt100_Output(screen, lambda: Size(rows=40, columns=120), term=term)
    prompt = "Enter: fill in the form"
    with create_pipe_input() as pipe:
        ans = TerminalAnswerer(console=console, input=pipe, output=output, open_url=Browser())
        asking = asyncio.ensure_future(elicit(ans, form_request()))
        try:
            await drawn(screen, prompt)
            await ans.url_waiting(url_request("https://pay.example.com/deposit"))
            line = screen.getvalue().index("… waiting for the page at pay.example.com")
            await drawn(screen, prompt, after=line)  # below the line, not under it
            if term == "dumb":  # no cursor to move: the line is a line of its own
                assert screen.getvalue()[line - 1] == "\n", screen.getvalue()[-300:]
            assert not asking.done()
        finally:
            asking.cancel()
            await asyncio.gather(asking, return_exceptions=True)


async def test_the_browser_answerer_announces_the_wait_as_the_terminal_says_it() -> None:
    said: list[str] = []
    web = WebAnswerer(open_url=lambda _: True, announce=said.append)
    await web.url_waiting(url_request("https://pay.example.com/deposit"))
    assert said == [
        "mcp-elicit: … waiting for the page at pay.example.com to be finished "
        "(Table bookings asks, during tools/call book_table)"
    ]


def test_the_browser_answerers_own_line_is_written_as_an_ascii_only_terminal_can_show_it() -> None:
    """Its default ``announce`` wrote "\\u2026 waiting" on a terminal that can only show
    ASCII (the C locale, without Python's UTF-8 mode), where the CLI's own lines write its
    marks in ASCII ("..."): it now writes them as the rest of the CLI does."""
    script = (
        "import asyncio\n"
        "from mcp_elicit.ui.web import WebAnswerer\n"
        "from ui.web_rounds import url_request\n"
        "web = WebAnswerer(open_url=lambda _: True)\n"
        "asyncio.run(web.url_waiting(url_request('https://pay.example.com/deposit')))\n"
    )
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join([os.path.dirname(tests), tests, os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        env={**os.environ, **ASCII_ONLY, "PYTHONPATH": path},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode("ascii") == (
        "mcp-elicit: ... waiting for the page at pay.example.com to be finished "
        "(Table bookings asks, during tools/call book_table)\n"
    )
