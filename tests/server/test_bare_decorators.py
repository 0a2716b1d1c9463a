"""``@app.tool`` and ``@app.prompt`` without their call register the function as
``@app.tool()`` and ``@app.prompt()`` do (as FastMCP's do); a function given together with
options is a ``TypeError`` saying where they go (a bare ``@app.resource`` or
``@app.completion``: test_registration). Called through mcp-elicit's client in memory, at both
revisions."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Form, Integer, Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.memory import connect_memory

from support.readme import REVISIONS

pytestmark = pytest.mark.anyio


class Three:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(value=3)


def bare_app() -> Server:
    app = Server("bare")

    @app.tool
    async def how_many(ctx: Context, thing: str) -> str:
        """Ask how many of a thing."""
        answer = await ctx.elicit(f"How many {thing}?", Form(value=Integer()))
        return f"{answer.data['value']} {thing}" if answer.data is not None else answer.action

    @app.tool
    def double(n: int) -> int:
        """Double a number, in a worker thread."""
        return 2 * n

    @app.prompt
    def plan(city: str) -> str:
        """Plan an evening."""
        return f"Plan an evening in {city}."

    return app


def called_app() -> Server:
    app = Server("bare")

    @app.tool()
    async def how_many(ctx: Context, thing: str) -> str:
        """Ask how many of a thing."""
        raise AssertionError("listed only")

    @app.tool()
    def double(n: int) -> int:
        """Double a number, in a worker thread."""
        raise AssertionError("listed only")

    @app.prompt()
    def plan(city: str) -> str:
        """Plan an evening."""
        raise AssertionError("listed only")

    return app


async def listings(app: Server, revision: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async with connect_memory(app, versions=(revision,)) as client:
        return await client.list_tools(), await client.list_prompts()


@pytest.mark.parametrize("revision", REVISIONS)
async def test_bare_registers_as_called_does(revision: str) -> None:
    assert await listings(bare_app(), revision) == await listings(called_app(), revision)
    tools, prompts = await listings(bare_app(), revision)
    assert [t["name"] for t in tools] == ["how_many", "double"]
    assert tools[0]["description"] == "Ask how many of a thing."
    assert [p["name"] for p in prompts] == ["plan"]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_bare_handlers_are_called(revision: str) -> None:
    async with connect_memory(bare_app(), answerer=Three(), versions=(revision,)) as client:
        asked = await client.call_tool("how_many", {"thing": "chairs"})
        assert asked["content"][0]["text"] == "3 chairs"
        doubled = await client.call_tool("double", {"n": 21})
        assert doubled["content"][0]["text"] == "42"
        prompt = await client.get_prompt("plan", {"city": "Lyon"})
        assert prompt["messages"][0]["content"]["text"] == "Plan an evening in Lyon."


def test_the_decorated_function_is_returned_as_it_was() -> None:
    app = Server("bare")

    async def greet(who: str) -> str:
        return f"hello {who}"

    assert app.tool(greet) is greet
    assert app.prompt(greet) is greet
    assert app.names("tools") == app.names("prompts") == ["greet"]


def test_a_name_taken_says_so_bare_too() -> None:
    app = Server("bare")

    def greet(who: str) -> str:
        return who

    app.tool(greet)
    with pytest.raises(ValueError, match=r"a tool named 'greet' is already registered"):
        app.tool(greet)


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("tool", {"title": "Greet"}),
        ("tool", {"single_use_state": True}),
        ("tool", {"scopes": ["greet"]}),
        ("prompt", {"description": "Greets"}),
    ],
)
def test_a_function_with_options_is_refused_saying_where_they_go(kind: str, options: dict[str, Any]) -> None:
    app = Server("bare")

    def greet(who: str) -> str:
        return who

    with pytest.raises(
        TypeError,
        match=rf"app\.{kind}\(\) takes a function alone or options alone, not both: give the options "
        rf"in the call above the function, @app\.{kind}\(title=\.\.\.\)",
    ):
        getattr(app, kind)(greet, **options)
    assert app.names("tools") == app.names("prompts") == []
