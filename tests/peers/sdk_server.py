"""A server built with the official Python SDK (``mcp`` 2.3.0), for the client's interop tests.

It runs in its own virtualenv (tests/.peers/mcp), never the project's:

    tests/.peers/mcp/bin/python tests/peers/sdk_server.py             # stdio
    tests/.peers/mcp/bin/python tests/peers/sdk_server.py --http PORT  # Streamable HTTP at /mcp

Tools:

* ``book_table(restaurant)``: asks a form through a resolver (``Elicit``), which the SDK
  sends as ``input_required`` on 2026-07-28 and as ``elicitation/create`` on 2025-11-25.
* ``preferences()``: a form whose every field has a default (SEP-1034); returns what came back.
* ``confirm_name(name)``: asks through ``ctx.elicit`` and returns the outcome.
* ``sign_up()``: a form of pydantic constraints beyond the flat subset (an empty default
  its own min_length refuses, a pattern, exclusive bounds); returns what came back.
* ``link_account(provider)``: a URL-mode elicitation (``ctx.elicit_url``); 2025-11-25 only.
* ``profile()``: a form of every field kind pydantic renders (email and uri and date and
  date-time strings, a number, an integer, a boolean, a titled and an untitled choice, a
  multiple choice) with defaults; returns what came back.
* ``consent(scope)``: a URL step the 2026-07-28 way, an ``InputRequiredResult`` built by
  hand (the SDK's resolvers ask forms only); returns the action of the retry's answer.
* prompt ``briefing(topic)``: asks the audience before it answers, by hand (the SDK's
  resolvers do not serve prompts): ``input_required`` at 2026-07-28, ``ctx.elicit`` at
  2025-11-25;
* resource template ``memo://{name}``: asks a passphrase with an ``InputRequiredResult``
  built by hand (the SDK's resolvers do not serve resources); 2026-07-28 only.
"""

from __future__ import annotations

import argparse
import datetime
from typing import Annotated, Literal

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult, render_elicitation_schema
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import AnyUrl, BaseModel, Field


class Booking(BaseModel):
    party_size: int = Field(description="How many people", ge=1, le=20)
    date: str = Field(description="The day, YYYY-MM-DD")


class Preferences(BaseModel):
    name: str = Field(default="John Doe")
    age: int = Field(default=30)
    verified: bool = Field(default=True)


class SignUp(BaseModel):
    nickname: str = Field("", min_length=1)
    code: str = Field(description="Three capital letters", pattern=r"^[A-Z]{3}$")
    seats: int = Field(gt=0, lt=10)


class Profile(BaseModel):
    email: str = Field(json_schema_extra={"format": "email"})
    site: AnyUrl
    born: datetime.date
    meeting: datetime.datetime
    budget: float = Field(ge=0)
    guests: int = Field(default=2, ge=1, le=9)
    newsletter: bool = False
    size: Literal["S", "M", "L"] = "M"
    seat: str = Field(
        json_schema_extra={
            "oneOf": [{"const": "in", "title": "Inside"}, {"const": "out", "title": "Terrace"}]
        }
    )
    diet: list[Literal["veg", "gf", "halal"]] = Field(default=["veg"])


class Audience(BaseModel):
    audience: Literal["team", "board"]


class Confirmation(BaseModel):
    ok: bool


mcp = MCPServer("sdk-peer", log_level="WARNING")


async def ask_booking(restaurant: str) -> Elicit[Booking]:
    return Elicit(f"Booking {restaurant}: how many, and when?", Booking)


async def ask_preferences() -> Elicit[Preferences]:
    return Elicit("Your preferences (defaults are fine)", Preferences)


@mcp.tool()
async def book_table(restaurant: str, booking: Annotated[Booking, Resolve(ask_booking)]) -> str:
    """Book a table; asks the party size and the date."""
    return f"Booked {restaurant} for {booking.party_size} on {booking.date}"


@mcp.tool()
async def preferences(
    answer: Annotated[ElicitationResult[Preferences], Resolve(ask_preferences)],
) -> str:
    """Asks for preferences whose fields all have defaults."""
    if isinstance(answer, AcceptedElicitation):
        return answer.data.model_dump_json()
    return answer.action


async def ask_sign_up() -> Elicit[SignUp]:
    return Elicit("Sign up", SignUp)


@mcp.tool()
async def sign_up(answer: Annotated[ElicitationResult[SignUp], Resolve(ask_sign_up)]) -> str:
    """Asks a form whose fields carry pydantic constraints beyond the flat subset."""
    if isinstance(answer, AcceptedElicitation):
        return answer.data.model_dump_json()
    return answer.action


@mcp.tool()
async def confirm_name(name: str, ctx: Context) -> str:
    """Asks the user to confirm a name."""
    answer = await ctx.elicit(f"Is {name} right?", Confirmation)
    if isinstance(answer, AcceptedElicitation):
        return f"{name}: {'confirmed' if answer.data.ok else 'rejected'}"
    return f"{name}: {answer.action}"


@mcp.tool()
async def link_account(provider: str, ctx: Context) -> str:
    """Sends the user to a sign-in page (URL mode)."""
    answer = await ctx.elicit_url(
        f"Sign in to {provider}",
        url=f"https://example.com/oauth/{provider}",
        elicitation_id=f"link-{provider}",
    )
    return f"link {answer.action}"


async def ask_profile() -> Elicit[Profile]:
    return Elicit("Your profile", Profile)


@mcp.tool()
async def profile(answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)]) -> str:
    """Asks a form of every field kind."""
    if isinstance(answer, AcceptedElicitation):
        return answer.data.model_dump_json()
    return f"profile: {answer.action}"


@mcp.tool()
async def consent(scope: str, ctx: Context) -> str | InputRequiredResult:
    """Sends the user to a consent page, the 2026-07-28 way."""
    answer = (ctx.input_responses or {}).get("consent")
    if not isinstance(answer, ElicitResult):
        page = ElicitRequestURLParams(
            message=f"Grant {scope}",
            url=f"https://example.com/consent/{scope}",
            elicitation_id=f"consent-{scope}",
        )
        return InputRequiredResult(input_requests={"consent": ElicitRequest(params=page)})
    return f"consent {scope}: {answer.action}"


@mcp.prompt()
async def briefing(topic: str, ctx: Context) -> str | InputRequiredResult:
    """A briefing written for an audience asked first (by hand: the SDK's resolvers do not
    serve prompts): ``input_required`` at 2026-07-28, ``ctx.elicit`` at 2025-11-25."""
    message = f"Who reads the {topic} briefing?"
    if ctx.protocol_version != "2026-07-28":
        pushed = await ctx.elicit(message, Audience)
        reader = (
            pushed.data.audience if isinstance(pushed, AcceptedElicitation) else f"nobody ({pushed.action})"
        )
        return f"Brief {reader} on {topic}."
    answer = (ctx.input_responses or {}).get("audience")
    if not isinstance(answer, ElicitResult):
        form = ElicitRequestFormParams(message=message, requested_schema=render_elicitation_schema(Audience))
        return InputRequiredResult(input_requests={"audience": ElicitRequest(params=form)})
    accepted = answer.action == "accept" and answer.content is not None
    reader = answer.content["audience"] if accepted and answer.content else f"nobody ({answer.action})"
    return f"Brief {reader} on {topic}."


ASK_PASSPHRASE = ElicitRequest(
    params=ElicitRequestFormParams(
        message="The vault passphrase",
        requested_schema={
            "type": "object",
            "properties": {"passphrase": {"type": "string"}},
            "required": ["passphrase"],
        },
    )
)


@mcp.resource("memo://{name}")
async def memo(name: str, ctx: Context) -> str | InputRequiredResult:
    """A memo read only with the passphrase, asked the 2026-07-28 way (the SDK's resolvers
    do not serve resources)."""
    key = (ctx.input_responses or {}).get("passphrase")
    if not isinstance(key, ElicitResult):
        return InputRequiredResult(input_requests={"passphrase": ASK_PASSPHRASE})
    if key.action == "accept" and (key.content or {}).get("passphrase") == "open sesame":
        return f"the {name} memo: buy milk"
    return f"{name}: shut ({key.action})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is None:
        mcp.run()
        return
    import uvicorn

    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
