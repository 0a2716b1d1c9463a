"""What the browser answerer's page says once the person cancels is true of each revision,
as its ending for sent answers and for a decline is: a cancel is an answer too. At
2025-11-25 it is the response to the server's request, sent at once (the server was told);
at 2026-07-28 it goes with the retried tools/call (or the task's next update) once the
round is answered. The page said "Cancelled · Nothing was sent." at both, and a page
loaded after the end "it was cancelled; nothing was sent". A real server in memory, a
real Chromium."""

from __future__ import annotations

import asyncio

import pytest

from mcp_elicit import Context, Form, Server
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.ui.web import WebAnswerer
from mcp_elicit.ui.web_after import ended

from support.browser import NewPage
from support.web_page import OSLO, expect

pytestmark = [pytest.mark.anyio]

CLOSE = "You can close this tab."
RETRY = "the retry of tools/call book_table"
ENDINGS = {
    "response": f"Table bookings was told that you cancelled. {CLOSE}",
    "retry": f"That you cancelled goes to Table bookings with {RETRY}. {CLOSE}",
    "task": f"That you cancelled goes to Table bookings with the task's next update. {CLOSE}",
}
CARRIED = {"response": ("2025-11-25", False), "retry": ("2026-07-28", False), "task": ("2026-07-28", True)}


def _server() -> Server:
    app = Server("bookings", "1.0.0", title="Table bookings", task_poll=0.02)

    @app.tool(task="optional")
    async def book_table(ctx: Context) -> str:
        """Asks once; a task when the client takes tasks."""
        await ctx.start_task("booking")
        answer = await ctx.elicit("Sure?", Form(sure=Boolean(title="Sure", default=False)))
        return f"{answer.action} {answer.content}"

    return app


@pytest.mark.parametrize("button", ["#cancel", "#cancel-review"])
@pytest.mark.parametrize("carried", list(CARRIED))
async def test_cancelling_says_how_the_cancel_travels(new_page: NewPage, carried: str, button: str) -> None:
    revision, tasks = CARRIED[carried]
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    async with connect_memory(_server(), answerer=answerer, versions=[revision], tasks=tasks) as client:
        call = asyncio.ensure_future(client.call_tool("book_table", {}))
        page = await new_page(**OSLO)
        await page.goto(await asyncio.wait_for(links.get(), 10))
        await expect(page.locator("#app")).to_have_attribute("data-live", "1")
        if button == "#cancel-review":
            await page.click("#review")
        await page.click(button)
        await expect(page.locator("#finished-title")).to_have_text("Cancelled")
        await expect(page.locator("#finished-text")).to_have_text(ENDINGS[carried])
        result = await asyncio.wait_for(call, 10)
    assert result["content"][0]["text"] == "cancel None"  # the server did hear it


def test_a_page_loaded_after_a_refusal_says_how_it_travels() -> None:
    assert ended("cancel") == "It was cancelled, and the server was told."
    assert ended("decline") == "It was declined, and the server was told."
    assert ended("cancel", RETRY) == f"It was cancelled, and that goes to the server with {RETRY}."
    assert ended("decline", "the task's next update") == (
        "It was declined, and that goes to the server with the task's next update."
    )
