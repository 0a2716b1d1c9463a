"""What the browser answerer's page says once it has the answer is true of each revision,
as the terminal's line is: at 2025-11-25 the answer is the response to the server's
request and goes at once ("Sent", "went to", "was told"); at 2026-07-28 it goes with the
retried tools/call (or, in a task, the task's next update) once the round is answered,
after the page says so, and that may still fail, so the page says it goes with that. The
page said "Sent · Your answers went to ..." at both. A real server in memory, a real
Chromium; the ended page run through axe, its heading focused as before (how a screen
reader hears the ending), the polite status line left empty."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Literal

import pytest

from mcp_elicit import Context, Form, Server
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.ui.web import WebAnswerer
from mcp_elicit.ui.web_after import ended
from ui.web_rounds import open_round, url_request

from support.axe import audit, blocking, describe, missing
from support.browser import NewPage
from support.web_page import OSLO, expect, show

pytestmark = [pytest.mark.anyio]

CLOSE = "You can close this tab."
RETRY = "with the retry of tools/call book_table."
ENDINGS = {
    ("response", "send"): ("Sent", f"Your answers went to Table bookings. {CLOSE}"),
    ("response", "decline"): ("Declined", f"Table bookings was told that you declined. {CLOSE}"),
    ("retry", "send"): ("Answered", f"Your answers go to Table bookings {RETRY} {CLOSE}"),
    ("retry", "decline"): ("Declined", f"That you declined goes to Table bookings {RETRY} {CLOSE}"),
    ("task", "send"): (
        "Answered",
        f"Your answers go to Table bookings with the task's next update. {CLOSE}",
    ),
    ("task", "decline"): (
        "Declined",
        f"That you declined goes to Table bookings with the task's next update. {CLOSE}",
    ),
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


@pytest.mark.parametrize("action", ["send", "decline"])
@pytest.mark.parametrize("carried", list(CARRIED))
async def test_the_ending_says_how_the_answer_travels(new_page: NewPage, carried: str, action: str) -> None:
    revision, tasks = CARRIED[carried]
    title, text = ENDINGS[(carried, action)]
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
        if action == "send":
            await page.check("#q0-f0-input")
            await page.click("#review")
            await page.click("#send")
        else:
            await page.click("#decline")
        await expect(page.locator("#finished-title")).to_have_text(title)
        await expect(page.locator("#finished-text")).to_have_text(text)
        await expect(page.locator("#finished-title")).to_be_focused()  # what a screen reader hears
        await expect(page.locator("#status")).to_have_text("")
        assert await page.locator("#finished").aria_snapshot() == (
            f'- region "{title}":\n  - heading "{title}" [level=2]\n  - paragraph: {text}'
        )
        await expect(page).to_have_title(f"{title} · Table bookings asks: Sure? · mcp-elicit")
        if missing() is None:  # without axe-core the wording is still checked, not skipped mid-call
            found = await audit(page)
            assert not blocking(found), describe(found)
        result = await asyncio.wait_for(call, 10)
    said = "accept {'sure': True}" if action == "send" else "decline None"
    assert result["content"][0]["text"] == said


@pytest.mark.parametrize(
    ("sent_with", "text"),
    [
        ("", f"Table bookings was told that you are done. {CLOSE}"),
        ("retry", f"That you are done goes to Table bookings {RETRY} {CLOSE}"),
    ],
)
async def test_a_web_page_step_done_says_how_that_travels(
    new_page: NewPage, sent_with: Literal["", "retry"], text: str
) -> None:
    """A round of a URL question only ends "Done": at 2026-07-28 its accept goes with the
    retry too, so the server is not yet told."""
    request = dataclasses.replace(url_request("https://pay.example.com/deposit"), sent_with=sent_with)
    async with open_round([request]) as opened:
        page = await show(new_page, opened)
        async with page.expect_popup():
            await page.click("#q0-open")
        await page.bring_to_front()
        await page.click("#q0-done")
        await expect(page.locator("#finished-title")).to_have_text("Done")
        await expect(page.locator("#finished-text")).to_have_text(text)
        assert await opened.answers() == [ElicitAnswer.accept()]


def test_a_page_loaded_after_the_end_says_how_the_answers_travel() -> None:
    """A page reloaded once the round ended hears it from the answer server."""
    assert ended("answered") == "The answers were sent."
    assert ended("answered", "the retry of tools/call book_table") == (
        "The answers were given, and go to the server with the retry of tools/call book_table."
    )
    assert ended("decline", "the retry of tools/call book_table") == (
        "It was declined, and that goes to the server with the retry of tools/call book_table."
    )
