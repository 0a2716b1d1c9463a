"""The test server the client tests talk to (in memory and over HTTP), and a user that
answers its questions like a person would."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field as PydanticField

from mcp_elicit import Boolean, Choice, Context, Form, Integer, Server, String
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest

TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()
CONNECTED: set[str] = set()

app = Server("memory-test", "3.0", title="Memory test server")

BOOKING = Form(
    guests=Integer(title="Guests", minimum=1, maximum=20),
    date=String(format="date"),
    seating=Choice(["inside", "terrace"], default="inside"),
)


@app.tool()
async def book(ctx: Context, restaurant: str) -> str:
    """Books a table, asking the details and a confirmation."""
    details = await ctx.elicit(f"Booking {restaurant}: how many, when?", BOOKING, key="details")
    if details.action != "accept" or details.content is None:
        return f"not booked ({details.action})"
    confirm = await ctx.elicit("Sure?", Form(ok=Boolean(default=True)), key="confirm")
    if confirm.action != "accept":
        return f"not booked ({confirm.action})"
    c = details.content
    return f"booked {restaurant} for {c['guests']} on {c['date']}, {c['seating']}"


@app.tool()
async def plan(ctx: Context) -> str:
    """Asks three things in one round."""
    mood, idea, roots = await ctx.gather(
        ctx.elicit("Mood?", Form(mood=Choice(["calm", "loud"])), key="mood"),
        ctx.sample("Suggest a place", max_tokens=20, key="idea"),
        ctx.list_roots(key="roots"),
    )
    text = idea.content.text if hasattr(idea.content, "text") else "?"
    return f"{mood.content['mood']} / {text} / {[str(r.uri) for r in roots]}"


@app.tool()
async def connect(ctx: Context, service: str) -> str:
    """Needs a URL step before it can go on."""
    if service in CONNECTED:
        return f"{service}: connected"
    answer = await ctx.require_url(f"Sign in to {service}", f"https://example.com/{service}", key="signin")
    return f"{service}: {answer.action}"


@app.tool()
def regional(
    region: Annotated[str, PydanticField(json_schema_extra={"x-mcp-header": "Region"})], query: str
) -> str:
    """Has an argument mirrored into a header."""
    return f"{region}:{query}"


@app.tool()
async def slow(ctx: Context) -> str:
    """Reports progress as it goes."""
    for step in range(3):
        await ctx.report_progress(step, 3)
    return "done"


@app.prompt(description="Asks the mood first")
async def evening(ctx: Context, city: str) -> str:
    answer = await ctx.elicit("Mood?", Form(mood=Choice(["calm", "loud"], default="calm")), key="mood")
    mood = answer.content["mood"] if answer.content else "any"
    return f"A {mood} evening in {city}"


@app.resource("menu://{place}", description="Asks which course")
async def menu(ctx: Context, place: str) -> str:
    answer = await ctx.elicit("Course?", Form(course=Choice(["starters", "mains"])), key="course")
    return f"{place}: {answer.content['course'] if answer.content else 'all'}"


class User:
    """Answers like a person would, and marks URL steps done."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self.asked: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        if request.mode == "url":
            return ElicitAnswer.accept()
        if "guests" in request.fields:
            return ElicitAnswer.accept(guests=2, date=TOMORROW)
        if "mood" in request.fields:
            return ElicitAnswer.accept(mood="loud")
        if "course" in request.fields:
            return ElicitAnswer.accept(course="mains")
        return ElicitAnswer.accept()

    async def url_done(self, request: ElicitationRequest) -> None:
        assert request.url is not None
        CONNECTED.add(request.url.rsplit("/", 1)[1])


async def sample(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "the harbour"}, "model": "stub"}


async def roots() -> list[dict[str, Any]]:
    return [{"uri": "file:///home/me/plans"}]
