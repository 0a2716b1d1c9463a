"""Questions for the browser answerer's tests, and a round started with the link caught
instead of a browser being opened."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo, parse_elicitation
from mcp_elicit.forms import Boolean, Choice, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.ui import web, web_round
from mcp_elicit.ui.web import WebAnswerer

if TYPE_CHECKING:
    import pytest

SERVER = ServerInfo(
    name="bookings", version="1.0.0", title="Table bookings", where="stdio: mcp-elicit serve demo_server.py"
)
ORIGIN = Origin("tools/call", "book_table")

#: Every kind of field the flat subset has, each variant once.
EVERY_KIND = Form(
    name=String(title="Your name", description="As on the booking", min_length=2, max_length=40),
    email=String(title="Email", format="email"),
    site=String(title="Web site", format="uri", required=False),
    day=String(title="Day", format="date"),
    arrival=String(title="Arrival", format="date-time"),
    guests=Integer(title="Guests", minimum=1, maximum=20),
    budget=Number(title="Budget", minimum=0.5, maximum=500, required=False),
    terrace=Boolean(title="Terrace if possible"),
    course=Choice(["starters", "mains", "desserts"], title="Course"),
    seating=Choice({"in": "Inside", "out": "On the terrace"}, title="Seating"),
    table=Choice(
        {
            "t1": "Table one",
            "t2": "Table two",
            "t3": "Table three",
            "t4": "Table four",
            "t5": "Table five",
            "t6": "Six",
        },
        title="Table",
    ),
    diet=MultiChoice(["vegan", "gluten-free", "nut allergy"], title="Dietary needs", required=False),
    extras=MultiChoice(
        {"wine": "Wine pairing", "cake": "Birthday cake", "flowers": "Flowers"},
        title="Extras",
        min_items=1,
        max_items=2,
    ),
)
#: A legacy titled single-select (``enum`` + ``enumNames``), as older servers send it.
LEGACY = {
    "type": "object",
    "properties": {
        "size": {
            "type": "string",
            "title": "Size",
            "enum": ["s", "m", "l"],
            "enumNames": ["Small", "Medium", "Large"],
        }
    },
    "required": ["size"],
}
#: Defaults everywhere.
DEFAULTS = Form(
    guests=Integer(title="Guests", description="You included", minimum=1, maximum=20, default=2),
    note=String(title="Note", default="window seat", required=False),
    arrival=String(title="Arrival", format="date-time", default="2026-12-24T18:30:00Z"),
    seating=Choice({"in": "Inside", "out": "On the terrace"}, title="Seating", default="out"),
    course=Choice(["a", "b", "c", "d", "e", "f"], title="Course", default="c", required=False),
    diet=MultiChoice(["vegan", "gluten-free"], title="Dietary needs", default=["vegan"], required=False),
    ok=Boolean(title="Confirm", default=True),
)


def form_request(
    schema: FormSchema | dict[str, Any] = EVERY_KIND,
    message: str = "Booking a table at Noma: a few details, please.",
    key: str = "details",
) -> ElicitationRequest:
    wire = schema.to_json() if isinstance(schema, FormSchema) else schema
    return parse_elicitation(
        {"mode": "form", "message": message, "requestedSchema": wire}, server=SERVER, key=key, origin=ORIGIN
    )


def url_request(
    url: str, key: str = "signin", message: str = "Sign in to pay the deposit"
) -> ElicitationRequest:
    return parse_elicitation(
        {"mode": "url", "message": message, "url": url, "elicitationId": key},
        server=SERVER,
        key=key,
        origin=ORIGIN,
    )


@dataclass
class Opened:
    """A round in progress: its link, the task that ends with its answers, what it said."""

    url: str
    task: asyncio.Task[list[ElicitAnswer]]
    said: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    async def answers(self, timeout: float = 5.0) -> list[ElicitAnswer]:
        return await asyncio.wait_for(asyncio.shield(self.task), timeout)


def rounds_seen(monkeypatch: pytest.MonkeyPatch) -> list[web_round.Round]:
    """Every round the browser answerer starts from now on, as it starts it (its grace, its
    deadline), for a test to read or move."""
    rounds: list[web_round.Round] = []

    class Seen(web_round.Round):
        def __init__(self, *args: Any, **options: Any) -> None:
            super().__init__(*args, **options)
            rounds.append(self)

    monkeypatch.setattr(web, "Round", Seen)
    return rounds


async def until_streams(round_: web_round.Round, count: int) -> None:
    """Once the answer server of ``round_`` counts ``count`` event streams (a stream a page
    dropped is seen gone a moment later), bounded."""
    for _ in range(200):
        if round_.streams == count:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"the answer server counts {round_.streams} event streams, not {count}")


@contextlib.asynccontextmanager
async def open_round(requests: Sequence[ElicitationRequest], **options: Any) -> AsyncIterator[Opened]:
    """``WebAnswerer.elicit_many(requests)`` running, its link caught by the opener."""
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    said: list[str] = []
    answerer = WebAnswerer(open_url=opener, announce=said.append, **options)
    task = asyncio.ensure_future(answerer.elicit_many(list(requests)))
    try:
        url = await asyncio.wait_for(links.get(), 10)
        yield Opened(url, task, said)
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


#: A form as the official SDKs write one for pydantic's ``gt``/``lt``/``multiple_of``.
SDK_BOUNDS = {
    "type": "object",
    "properties": {
        "share": {"type": "number", "title": "Share", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "pair": {"type": "integer", "title": "Pair", "minimum": 0, "multipleOf": 2},
    },
    "required": ["share", "pair"],
}

#: Options with descriptions, as the official SDKs write them (``oneOf``/``anyOf`` items
#: with ``const``, ``title`` and ``description``); six of them, more than radio buttons take.
SDK_DESCRIBED = {
    "type": "object",
    "properties": {
        "room": {
            "type": "string",
            "title": "Room",
            "oneOf": [
                {"const": "s", "title": "Single", "description": "One bed,\nno\u202e view"},
                {"const": "d", "title": "Double", "description": "w" * 500},
                *({"const": f"r{n}", "title": f"Room {n}"} for n in range(4)),
            ],
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [
                    {"const": "b", "title": "Breakfast", "description": "Served 7 to 10"},
                    {"const": "p", "title": "Parking"},
                ]
            },
        },
    },
    "required": ["room"],
}
