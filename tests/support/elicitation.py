"""What the tests of elicitation in handlers over multi round-trip requests share: the booking
server they ask through, its booking form, and a clock the tests move."""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Literal

from mcp_elicit import Context, Field, Form, Server, String
from mcp_elicit.sealing import KeyRing


@dataclass
class Booking:
    guests: Annotated[int, Field(minimum=1, maximum=20, title="Party size")]
    date: dt.date
    seating: Literal["inside", "patio"] = "inside"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def build(clock: Clock | None = None) -> Server:
    app = Server("elicit", clock=clock or Clock(), state_keys=KeyRing([b"k" * 16 + b"e" * 16]))

    @app.tool()
    async def book(ctx: Context, restaurant: str) -> str:
        answer = await ctx.elicit(f"Booking at {restaurant}: how many, and when?", Booking)
        if answer.action == "decline":
            return "declined: offer another way"
        if answer.action == "cancel":
            return "cancelled: ask again later"
        assert answer.data is not None
        booking = answer.data
        assert isinstance(booking.date, dt.date)
        return f"{restaurant}: {booking.guests} on {booking.date.isoformat()} {booking.seating}"

    @app.tool()
    async def wizard(ctx: Context) -> str:
        first = await ctx.elicit("Name?", Form(name=String()), key="name")
        second = await ctx.elicit("Color?", Form(color=String()), key="color")
        third = await ctx.elicit("Pet?", Form(pet=String()), key="pet")
        parts = [a.content[k] for a, k in ((first, "name"), (second, "color"), (third, "pet")) if a.content]
        return " ".join(parts)

    @app.tool()
    async def everything(ctx: Context) -> str:
        name, reply, roots = await ctx.gather(
            ctx.elicit("Name?", Form(name=String())),
            ctx.sample("Say hi", max_tokens=5),
            ctx.list_roots(),
        )
        text = getattr(reply.content, "text", "")
        return f"{name.content['name'] if name.content else '-'}|{text}|{len(roots)}"

    @app.tool()
    async def concurrent(ctx: Context) -> str:
        async with asyncio.TaskGroup() as tg:
            a = tg.create_task(ctx.elicit("A?", Form(a=String()), key="a"))
            b = tg.create_task(ctx.elicit("B?", Form(b=String()), key="b"))
        return f"{a.result().action}/{b.result().action}"

    @app.tool()
    async def url_step(ctx: Context) -> str:
        if not ctx.can_elicit("url"):
            return "fallback: no URL mode"
        answer = await ctx.elicit_url("Sign in to continue", "https://example.com/connect")
        return f"url answer {answer.action}"

    @app.tool()
    async def needs_url(ctx: Context) -> str:
        answer = await ctx.elicit_url("Enter your API key on our page", "https://example.com/key")
        return answer.action

    @app.tool()
    async def greedy(ctx: Context) -> str:
        answer = await ctx.elicit("Password please", Form(password=String()))
        return answer.action

    @app.prompt(description="asks first")
    async def guided(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()), key="topic")
        return f"Write about {answer.content['topic'] if answer.content else 'anything'}"

    @app.resource("test://report/{year}")
    async def report(ctx: Context, year: str) -> str:
        answer = await ctx.elicit("Which format?", Form(fmt=String()), key="fmt")
        return f"report {year} as {answer.content['fmt'] if answer.content else '?'}"

    return app


BOOKING = {"guests": 4, "date": "2026-12-31", "seating": "patio"}
