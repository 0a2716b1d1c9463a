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
"""

from __future__ import annotations

import argparse
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field


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
