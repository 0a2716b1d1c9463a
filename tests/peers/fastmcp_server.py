"""A server built with FastMCP (4.1.6), for the client's interop tests.

It runs in its own virtualenv (tests/.peers/fastmcp), never the project's:

    tests/.peers/fastmcp/bin/python tests/peers/fastmcp_server.py             # stdio
    tests/.peers/fastmcp/bin/python tests/peers/fastmcp_server.py --http PORT  # HTTP at /mcp

FastMCP's ``ctx.elicit`` is a server-to-client request: 2025-11-25 only (on 2026-07-28 it
refuses). Each push-style tool asks one of the shapes FastMCP builds from a Python type and
returns what came back, as JSON with the action:

* ``pick_color``: a list of strings, one to choose (FastMCP wraps it as ``{"value": ...}``);
* ``pick_toppings``: a list in a list, several to choose;
* ``pick_plan``: a dict of titled options;
* ``how_many``: ``int`` (wrapped as ``{"value": ...}``);
* ``register``: a dataclass of a string, an integer and a boolean with a default;
* ``confirm``: ``bool`` (wrapped as ``{"value": ...}``).

``guarded(name)`` is FastMCP's way on 2026-07-28 (the "guard pattern"): it returns an
``InputRequiredResult`` and reads ``ctx.input_responses`` on the retry.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from typing import Any

from fastmcp import Context, FastMCP
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

mcp = FastMCP("fastmcp-peer")


@dataclass
class Registration:
    name: str
    age: int
    subscribe: bool = False


def _report(answer: Any) -> str:
    data = getattr(answer, "data", None)
    return json.dumps(
        {"action": answer.action, "data": asdict(data) if isinstance(data, Registration) else data}
    )


@mcp.tool
async def pick_color(ctx: Context) -> str:
    """Choose one color."""
    return _report(await ctx.elicit("Which color?", ["red", "green", "blue"]))


@mcp.tool
async def pick_toppings(ctx: Context) -> str:
    """Choose toppings."""
    return _report(await ctx.elicit("Which toppings?", [["cheese", "ham", "olives"]]))


@mcp.tool
async def pick_plan(ctx: Context) -> str:
    """Choose a plan among titled options."""
    return _report(
        await ctx.elicit("Which plan?", {"free": {"title": "Free"}, "pro": {"title": "Pro, 9 EUR"}})
    )


@mcp.tool
async def how_many(ctx: Context) -> str:
    """Ask for a number."""
    return _report(await ctx.elicit("How many guests?", int))


@mcp.tool
async def register(ctx: Context) -> str:
    """Ask for a name, an age and a subscription."""
    return _report(await ctx.elicit("Register", Registration))


@mcp.tool
async def confirm(ctx: Context) -> str:
    """Ask for a yes or a no."""
    return _report(await ctx.elicit("Go ahead?", bool))


ASK_CITY = ElicitRequest(
    params=ElicitRequestFormParams(
        message="Which city?",
        requested_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
)


@mcp.tool
async def guarded(name: str, ctx: Context) -> str | InputRequiredResult:
    """Ask for a city the 2026-07-28 way: input_required, then the retry."""
    answer = (ctx.input_responses or {}).get("city")
    if not isinstance(answer, ElicitResult):
        return InputRequiredResult(input_requests={"city": ASK_CITY}, request_state="guarded-v1")
    if answer.action != "accept" or answer.content is None:
        return f"{name}: {answer.action}"
    return f"{name} lives in {answer.content['city']}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is None:
        mcp.run(show_banner=False)
        return
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=args.http,
        path="/mcp",
        show_banner=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
