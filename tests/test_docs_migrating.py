"""docs/migrating.md, run: its Python blocks are one server file, written out in order, served
with ``mcp-elicit serve`` over stdio and called at both revisions by mcp-elicit's client,
and every tool, the prompt and the resource do what the page says (the bookings they share
kept by its ``lifespan=``, its bare ``@app.tool`` registered, the prompt and the template
listed with the icons and annotations it gives them); the page is linked from the README,
and its table says what the code does about the lifespan, bare decorators and icons."""

from __future__ import annotations

import asyncio
import re
import runpy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.transports.stdio_client import connect_stdio

from support.procs import ROOT, cli
from support.readme import README, REVISIONS

PAGE = ROOT / "docs" / "migrating.md"
RUN_TIMEOUT = 30.0

pytestmark = pytest.mark.anyio


def python_blocks() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return [m[1] for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M)]


class Person:
    """Answers each form with ``actions`` in turn (accept when they run out), a page with accept."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self.actions: list[str] = []
        self.asked: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        action = self.actions.pop(0) if self.actions else "accept"
        if action == "decline":
            return ElicitAnswer.decline()
        if action == "cancel":
            return ElicitAnswer.cancel()
        if request.mode == "url":
            return ElicitAnswer.accept()
        values = {"guests": 4, "day": "2099-04-01", "email": "ada@example.com", "value": 3, "ok": True}
        if request.fields == ("value",) and "plan" in request.message:
            values["value"] = "pro"
        return ElicitAnswer.accept(**{name: values[name] for name in request.fields if name in values})


@pytest.fixture
def migrated(tmp_path: Path) -> Path:
    blocks = python_blocks()
    assert blocks[0].startswith("# migrated.py")
    path = tmp_path / "migrated.py"
    path.write_text("\n\n".join(blocks), encoding="utf-8")
    return path


def test_the_readme_links_the_page() -> None:
    assert "(docs/migrating.md)" in README.read_text(encoding="utf-8")


def texts(result: dict[str, Any]) -> list[str]:
    return [block.get("text", "") for block in result["content"]]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_page_is_a_server_that_does_what_it_says(migrated: Path, revision: str) -> None:
    person = Person()
    heard: list[tuple[str, Any]] = []  # the logs' data and the progress messages, in order

    def on_notification(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/message":
            heard.append(("log", params["data"]))
        elif method == "notifications/progress":
            heard.append(("progress", params.get("message")))

    async with asyncio.timeout(2 * RUN_TIMEOUT):
        async with connect_stdio(
            [*cli(), "serve", migrated.name],
            cwd=str(migrated.parent),
            answerer=person,
            versions=(revision,),
            timeout=RUN_TIMEOUT,
            log_level="info",
            progress=True,
            on_notification=on_notification,
        ) as client:
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            assert list(tools) == ["book_table", "how_many", "pick_plan", "cancel_booking", "link_calendar"]
            book = tools["book_table"]
            assert book["title"] == "Book a table"
            assert book["annotations"] == {"destructiveHint": False, "openWorldHint": True}
            assert book["icons"] == [{"src": "https://example.com/table.png", "mimeType": "image/png"}]
            assert set(book["outputSchema"]["properties"]) == {"restaurant", "guests", "day"}

            booked = await client.call_tool("book_table", {"restaurant": "septime"})
            assert booked["structuredContent"] == {"restaurant": "septime", "guests": 4, "day": "2099-04-01"}
            asked = person.asked[-1]
            assert asked.fields == ("guests", "day", "email", "seating")
            # after the last question: sent once, though a 2026-07-28 call ran the handler twice
            assert heard == [("log", "booking septime"), ("progress", "saving")]
            person.actions = ["decline"]
            declined = await client.call_tool("book_table", {"restaurant": "septime"})
            assert declined["isError"] and texts(declined) == ["No booking: the user said no"]
            person.actions = ["cancel"]
            cancelled = await client.call_tool("book_table", {"restaurant": "septime"})
            assert texts(cancelled) == ["No booking: ask again when the user is ready"]
            assert len(heard) == 2, "a booking not made logs nothing"

            assert texts(await client.call_tool("how_many")) == ["3 of them"]
            assert texts(await client.call_tool("pick_plan")) == ["plan pro"]
            assert texts(await client.call_tool("cancel_booking", {"restaurant": "septime"})) == [
                "septime: cancelled"
            ]
            assert person.asked[-1].message == "Cancel septime? The fee is 10 EUR."
            person.actions = ["decline"]
            assert texts(await client.call_tool("cancel_booking", {"restaurant": "noma"})) == [
                "noma: kept (decline)"
            ]
            assert texts(await client.call_tool("link_calendar")) == ["opening the sign-in page"]

            (listed_prompt,) = await client.list_prompts()
            assert listed_prompt["icons"] == [{"src": "https://example.com/evening.png"}]
            (template,) = await client.list_resource_templates()
            assert template["annotations"] == {"audience": ["assistant"], "priority": 0.8}
            prompt = await client.get_prompt("plan_evening", {"city": "Lyon"})
            assert prompt["messages"][0]["content"]["text"] == "Plan an evening out in Lyon."
            read = await client.read_resource("bookings://septime")
            assert read["contents"][0]["text"] == "septime: 1 booked"


async def test_the_page_s_lifespan_opens_the_bookings_and_closes_them(migrated: Path) -> None:
    app = runpy.run_path(str(migrated))["app"]
    assert isinstance(app, Server)
    async with connect_memory(app, answerer=Person()) as client:
        await client.call_tool("book_table", {"restaurant": "noma"})
        bookings = app.lifespan_context["bookings"]
        assert bookings == ["noma"]
    assert bookings == []  # the lifespan's exit ran
    with pytest.raises(RuntimeError, match="is not running"):
        app.lifespan_context  # noqa: B018


def test_the_table_says_what_the_code_does() -> None:
    rows = {
        line.split("|")[1].strip(): line.split("|")[4].strip()
        for line in PAGE.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and line.count("|") >= 5
    }
    assert rows["register"].startswith("`@app.tool` or `@app.tool()`")
    assert "on tools, prompts and resources" in rows["annotations, icons"]
    assert "`Server(lifespan=...)`" in rows["server-wide state"]
    assert "`ctx.lifespan_context`" in rows["server-wide state"]
    text = PAGE.read_text(encoding="utf-8")
    assert "There is no `lifespan=`" not in text and "parentheses always" not in text
