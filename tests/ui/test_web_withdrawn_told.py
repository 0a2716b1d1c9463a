"""What the browser answerer's page says is sent when its question ends without the
person's answer is true. A page closed (its streams gone too long) cancels the question,
and that cancel is an answer: sent at once at 2025-11-25, with the retry at 2026-07-28;
the page said "The page was closed, so nothing was sent." A question withdrawn because
its call was abandoned, that came with no request of its own (2025-11-25 over stdio), is
answered cancel by the client: the page said "nothing was sent" there too. A real server
over stdio, a real Chromium."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcp_elicit.client import Client
from mcp_elicit.transports.stdio_client import StdioTransport
from mcp_elicit.ui.web import WebAnswerer
from mcp_elicit.ui.web_after import ended

from support.browser import NewPage
from support.procs import ROOT, cli
from support.web_page import OSLO, expect

pytestmark = [pytest.mark.anyio]

FORM_SERVER = ROOT / "tests" / "ui" / "form_server.py"
SCHEMA = json.dumps({"type": "object", "properties": {"n": {"type": "string", "title": "Name"}}})
RETRY = "the retry of tools/call book_table"


async def test_a_question_answered_cancel_as_its_call_is_abandoned_says_so(new_page: NewPage) -> None:
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()
    said: list[str] = []

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    answerer = WebAnswerer(open_url=opener, announce=said.append)
    sent: list[dict[str, object]] = []
    transport = StdioTransport(
        [*cli(), "serve", str(FORM_SERVER)],
        trace=lambda way, message: sent.append(dict(message)) if way == "send" else None,
    )
    async with Client(transport, answerer=answerer, versions=["2025-11-25"], timeout=30) as client:
        call = asyncio.ensure_future(client.call_tool("form", {"message": "Who?", "schema": SCHEMA}))
        page = await new_page(**OSLO)
        await page.goto(await asyncio.wait_for(links.get(), 20))
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await expect(page.locator("#finished-title")).to_have_text("Withdrawn")
        await expect(page.locator("#finished-text")).to_have_text(
            "The question was withdrawn before you answered; Form tests was told it was cancelled. "
            "You can close this tab."
        )
    assert {"action": "cancel"} in [m.get("result") for m in sent]  # it was
    assert "mcp-elicit: the question was withdrawn; the server is told it was cancelled." in said


@pytest.mark.parametrize(
    ("carried", "text"),
    [
        (
            "",
            "The page was closed, so the question was cancelled. Bookings was told that it was cancelled. You can close this tab.",
        ),
        (
            RETRY,
            f"The page was closed, so the question was cancelled. That goes to Bookings with {RETRY}. You can close this tab.",
        ),
    ],
)
async def test_a_closed_pages_ending_says_the_cancel_travels(
    new_page: NewPage, carried: str, text: str
) -> None:
    page = await new_page(**OSLO)
    await page.set_content("<p>x</p>")
    await page.add_script_tag(path=str(ROOT / "mcp_elicit" / "ui" / "web_static" / "events.js"))
    title, said = await page.evaluate(
        f"window.mcpElicitEvents.endings('Bookings', {json.dumps(carried)}, false).closed"
    )
    assert (title, said) == ("Cancelled", text)


def test_a_page_loaded_after_says_what_was_sent() -> None:
    assert ended("closed") == "The page was closed, so it was cancelled, and the server was told."
    assert ended("closed", RETRY) == (
        f"The page was closed, so it was cancelled, and that goes to the server with {RETRY}."
    )
    assert ended("withdrawn") == (
        "It was withdrawn before it was answered, and the server was told it was cancelled."
    )
    assert ended("cancelled") == "It was withdrawn before it was answered, so nothing was sent."
