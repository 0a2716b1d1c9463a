"""A small restaurant-booking server that asks the user what it needs, when it needs it.

    mcp-elicit serve examples/demo_server.py                        # stdio
    mcp-elicit serve examples/demo_server.py --http 127.0.0.1:8000  # Streamable HTTP at /mcp

Forms for ordinary questions (`book_table`, `cancel_booking`); URL mode for what must never
go through a form: `check_availability` needs a TableBook API key, typed into the server's
own page (`ctx.secret`), and `share_to_calendar` needs a sign-in at a calendar provider
(`ctx.connect`). For the latter, run the demo provider first
(`python examples/demo_provider.py`, or set MCP_ELICIT_DEMO_CALENDAR to where it runs);
`make demo` starts both.

Side effects (creating or cancelling a booking) happen only after the last question: on
MCP 2026-07-28 a handler runs again from the top on every round of a multi round-trip
request, so anything it did before a question would be done again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import os
from dataclasses import dataclass, field
from typing import Annotated, Literal

import httpx

from mcp_elicit import Boolean, Choice, Context, Field, Form, Server, ToolError
from mcp_elicit.errors import ConfigError

app = Server(
    "bookings",
    "1.0.0",
    title="Table bookings",
    instructions=(
        "Book, list and cancel restaurant tables, check live availability, add a booking to the "
        "user's calendar. Tools ask the user for details they need; API keys and sign-ins happen on "
        "web pages, never in the chat."
    ),
)

RESTAURANTS = {
    "noma": "Noma, Copenhagen",
    "septime": "Septime, Paris",
    "lyle's": "Lyle's, London",
}


@dataclass
class Booking:
    """What a booking needs from the user (the form the client shows)."""

    party_size: Annotated[
        int, Field(title="Party size", description="How many people, you included", minimum=1, maximum=20)
    ]
    date: Annotated[dt.date, Field(title="Date", description="The day of the booking")]
    seating: Annotated[
        Literal["inside", "terrace", "bar"],
        Field(title="Seating", titles={"inside": "Inside", "terrace": "On the terrace", "bar": "At the bar"}),
    ] = "inside"
    dietary: Annotated[
        list[Literal["vegetarian", "vegan", "gluten-free", "nut allergy"]],
        Field(title="Dietary needs", description="Pick any that apply"),
    ] = field(default_factory=list)


@dataclass
class Stored:
    id: int
    restaurant: str
    booking: Booking


BOOKINGS: dict[int, Stored] = {}
_IDS = itertools.count(1)

CONFIRM = Form(confirm=Boolean(title="Confirm", description="Make this booking?", default=True))


@app.tool(annotations={"title": "Book a table", "openWorldHint": False})
async def book_table(ctx: Context, restaurant: str) -> str:
    """Book a table at a restaurant; asks the user for party size, date, seating and dietary needs."""
    name = RESTAURANTS.get(restaurant.lower())
    if name is None:
        raise ToolError(f"Unknown restaurant {restaurant!r}; choose one of: {', '.join(RESTAURANTS)}")
    if not ctx.can_elicit():
        return (
            f"To book {name} I need the party size, the date and the seating, which I ask for in a form. "
            "Your client cannot show forms, so nothing was booked: book from a client that can."
        )
    answer = await ctx.elicit(f"Booking a table at {name}: how many, and when?", Booking, key="details")
    if answer.action == "decline":
        return f"No booking made at {name}. Would another restaurant or another day suit you?"
    if answer.action == "cancel" or answer.data is None:
        return "Booking not finished; ask me again when you are ready."
    booking = answer.data
    if booking.date < dt.date.today():
        return f"{booking.date.isoformat()} is in the past; no booking made."
    summary = _describe(name, booking)
    confirm = await ctx.elicit(f"Please confirm: {summary}", CONFIRM, key="confirm")
    if confirm.action != "accept" or not (confirm.content or {}).get("confirm"):
        return f"Nothing booked. ({summary} was not confirmed.)"
    stored = Stored(next(_IDS), name, booking)  # the side effect, after the last question
    BOOKINGS[stored.id] = stored
    return f"Booked #{stored.id}: {summary}."


@app.tool(annotations={"readOnlyHint": True})
def list_bookings() -> str:
    """List the bookings made so far."""
    if not BOOKINGS:
        return "No bookings yet."
    return "\n".join(f"#{s.id}: {_describe(s.restaurant, s.booking)}" for s in BOOKINGS.values())


@app.tool(annotations={"destructiveHint": True})
async def cancel_booking(ctx: Context, booking_id: int) -> str:
    """Cancel a booking; asks the user to confirm first."""
    stored = BOOKINGS.get(booking_id)
    if stored is None:
        raise ToolError(f"There is no booking #{booking_id}.")
    summary = _describe(stored.restaurant, stored.booking)
    if ctx.can_elicit():
        answer = await ctx.elicit(
            f"Cancel booking #{booking_id} ({summary})? This cannot be undone.",
            Form(sure=Boolean(title="Yes, cancel it", default=False)),
            key="confirm-cancel",
        )
        if answer.action != "accept" or not (answer.content or {}).get("sure"):
            return f"Booking #{booking_id} kept."
    else:
        return f"Cancelling needs the user's confirmation, and this client cannot ask. Booking #{booking_id} kept."
    del BOOKINGS[booking_id]
    return f"Booking #{booking_id} cancelled."


@app.tool(annotations={"readOnlyHint": True, "openWorldHint": True})
async def check_availability(ctx: Context, restaurant: str) -> str:
    """Check live availability; needs your TableBook API key (asked for on the server's own
    secure page, never in the chat)."""
    name = RESTAURANTS.get(restaurant.lower())
    if name is None:
        raise ToolError(f"Unknown restaurant {restaurant!r}; choose one of: {', '.join(RESTAURANTS)}")
    if not ctx.can_elicit("url"):
        return (
            "Live availability needs your TableBook API key, entered on a web page, "
            "and this client cannot open one."
        )
    answer = await ctx.secret(
        "tablebook_api_key", message=f"Check live availability at {name}: enter your TableBook API key"
    )
    if answer.secret is None:
        return f"Availability not checked ({_PAST[answer.action]}); no API key given."
    key = await answer.secret.reveal()  # server-side only: it never goes into a result
    return _tablebook_availability(name, key)


_PAST = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}


def _tablebook_availability(name: str, key: str) -> str:
    """Stands in for a call to TableBook's API with ``key``."""
    seed = hashlib.sha256(name.encode()).digest()
    times = [f"{17 + seed[i] % 5}:{'00' if seed[i + 4] % 2 else '30'}" for i in range(3)]
    tomorrow = dt.date.today() + dt.timedelta(days=1)
    return (
        f"{name} has tables tomorrow ({tomorrow.isoformat()}) at {', '.join(sorted(set(times)))} "
        "(live from TableBook, with your API key, which stays on the server)."
    )


CALENDAR = os.environ.get("MCP_ELICIT_DEMO_CALENDAR", "http://127.0.0.1:8766").rstrip("/")
try:  # the provider examples/demo_provider.py runs; a real one would be e.g. Google Calendar
    app.oauth_provider(
        "calendar",
        authorize_url=f"{CALENDAR}/authorize",
        token_url=f"{CALENDAR}/token",
        client_id="mcp-elicit-demo",
        client_secret="demo-client-secret",
        scopes=["calendar.events"],
    )
    CALENDAR_PROBLEM: str | None = None
except ConfigError as exc:  # without the mcp-elicit[oauth] extra, the other tools still work
    CALENDAR_PROBLEM = str(exc)
CALENDAR_DOWN = (
    f"The Demo Calendar at {CALENDAR} does not answer; start it with `python examples/demo_provider.py` "
    "(`make demo` starts both), or set MCP_ELICIT_DEMO_CALENDAR to where it runs."
)


async def _calendar_answers() -> bool:
    """Whether the calendar provider answers at all: the person's browser is sent there to
    sign in, and a page that cannot load would leave the call waiting for nothing."""
    try:
        async with httpx.AsyncClient(timeout=3) as http:
            await http.get(f"{CALENDAR}/")
    except httpx.HTTPError:
        return False
    return True


@app.tool(annotations={"openWorldHint": True})
async def share_to_calendar(ctx: Context, booking_id: int) -> str:
    """Add a booking to your calendar; needs you to connect your Demo Calendar account
    (a sign-in on the calendar's own site)."""
    stored = BOOKINGS.get(booking_id)
    if stored is None:
        raise ToolError(f"There is no booking #{booking_id}.")
    if CALENDAR_PROBLEM is not None:
        raise ToolError(f"The calendar is not set up on this server: {CALENDAR_PROBLEM}")
    if not ctx.can_elicit("url"):
        return "Sharing needs you to sign in to your calendar on a web page, and this client cannot open one."
    if not await _calendar_answers():
        raise ToolError(CALENDAR_DOWN)
    answer = await ctx.connect(
        "calendar", message=f"Add booking #{booking_id} to your calendar: connect your Demo Calendar account"
    )
    if answer.connection is None:
        return f"Booking #{booking_id} not shared ({_PAST[answer.action]})."
    event = {"title": f"Dinner at {stored.restaurant}", "date": stored.booking.date.isoformat()}
    try:  # the side effect, after the last question
        async with answer.connection.client(timeout=10) as http:
            response = await http.post(f"{CALENDAR}/api/events", json=event)
    except httpx.HTTPError:
        raise ToolError(CALENDAR_DOWN) from None
    if response.status_code != 201:
        raise ToolError(f"The calendar refused the event (HTTP {response.status_code}).")
    added = response.json()
    return f"Added to {added['owner']}'s calendar: {added['title']} on {added['date']}."


@app.prompt(description="Plan an evening out; asks the user what kind of evening first")
async def plan_evening(ctx: Context, city: str) -> str:
    mood = "relaxed"
    if ctx.can_elicit():
        answer = await ctx.elicit(
            "What kind of evening?",
            Form(
                mood=Choice(
                    {"relaxed": "Relaxed", "lively": "Lively", "romantic": "Romantic"}, default="relaxed"
                )
            ),
            key="mood",
        )
        if answer.accepted and answer.content:
            mood = str(answer.content["mood"])
    places = ", ".join(RESTAURANTS.values())
    return f"Plan a {mood} evening in {city}: a restaurant from {places}, and what to do after."


@app.resource("bookings://menu/{restaurant}", description="Tonight's menu; asks which courses to show")
async def menu(ctx: Context, restaurant: str) -> str:
    name = RESTAURANTS.get(restaurant.lower(), restaurant)
    course = "all"
    if ctx.can_elicit():
        answer = await ctx.elicit(
            f"Which part of the menu at {name}?",
            Form(course=Choice(["starters", "mains", "desserts", "all"], default="all")),
            key="course",
        )
        if answer.accepted and answer.content:
            course = str(answer.content["course"])
    return f"{name} — {course}: seasonal vegetables, fish of the day, sourdough, sorbet."


@app.resource(
    "bookings://restaurants", mime_type="application/json", description="The restaurants you can book"
)
def restaurants() -> dict[str, str]:
    return RESTAURANTS


@app.completion()
def complete(ref: object, argument: dict[str, str], context: object) -> list[str]:
    if argument.get("name") in ("restaurant", "city"):
        prefix = argument.get("value", "").lower()
        return [r for r in RESTAURANTS if r.startswith(prefix)]
    return []


def _describe(name: str, booking: Booking) -> str:
    diet = f", {', '.join(booking.dietary)}" if booking.dietary else ""
    people = "person" if booking.party_size == 1 else "people"
    return f"{name}, {booking.party_size} {people} on {booking.date.isoformat()}, {booking.seating}{diet}"
