"""A handler that asks twice under one ``key=`` fails the same way on every revision.

On 2026-07-28 the answers of earlier rounds are found again by key, so a second question
asked under the key of an earlier one in the same run (a loop with a fixed ``key=``) was
handed the first question's answer without asking anybody: a basket of five apples from
one answer. On 2025-11-25 the same handler asked every time. A key names one question in
a run of the handler; reusing it is refused at once, naming the key, on both revisions.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Boolean, Context, Form, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.errors import ProtocolError
from mcp_elicit.sealing import KeyRing
from mcp_elicit.transports.memory import connect_memory

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]


def build() -> Server:
    app = Server("basket", state_keys=KeyRing([bytes(range(40, 72))]))

    @app.tool()
    async def basket(ctx: Context) -> str:
        items = []
        while len(items) < 5:
            more = await ctx.elicit("Add an item?", Form(item=String(), more=Boolean()), key="next-item")
            if more.action != "accept":
                break
            items.append(more.data["item"])
            if not more.data["more"]:
                break
        return f"basket: {items}"

    @app.tool()
    async def together(ctx: Context) -> str:
        first, second = await ctx.gather(
            ctx.elicit("First?", Form(a=String()), key="same"),
            ctx.elicit("Second?", Form(b=String()), key="same"),
        )
        return f"{first.data} {second.data}"

    @app.tool()
    async def numbered(ctx: Context) -> str:
        items = []
        for n in range(2):
            answer = await ctx.elicit("Add an item?", Form(item=String()), key=f"item-{n}")
            items.append(answer.data["item"])
        return f"items: {items}"

    @app.tool()
    async def shaped_like_an_own_key(ctx: Context) -> str:
        # key="elicit-2" is the key the second question asked without key= is given
        first = await ctx.elicit("First?", Form(a=String()), key="elicit-2")
        second = await ctx.elicit("Second?", Form(b=String()))
        third = await ctx.elicit("Third?", Form(b=String()))
        return f"{first.action} {second.action} {third.action}"

    @app.tool()
    async def numbered_key(ctx: Context) -> str:
        # a key that is not a string (a loop's counter given as it is)
        answer = await ctx.elicit("Add an item?", Form(item=String()), key=3)  # type: ignore[arg-type]
        return f"{answer.action}"

    return app


def script() -> Scripted:
    return Scripted.from_script(
        [
            {"fields": ["item", "more"], "content": {"item": "apple", "more": True}, "once": True},
            {"fields": ["item", "more"], "content": {"item": "pear", "more": False}, "once": True},
            {"fields": ["item"], "content": {"item": "fig"}, "once": True},
            {"fields": ["item"], "content": {"item": "kiwi"}, "once": True},
            {"fields": ["a"], "content": {"a": "1"}},
            {"fields": ["b"], "content": {"b": "2"}},
        ]
    )


async def _fails(version: str, tool: str) -> str:
    answers = script()
    async with connect_memory(build(), answerer=answers, versions=[version]) as client:
        try:
            result: dict[str, Any] = await client.call_tool(tool, {})
        except ProtocolError as exc:
            return str(exc)
    raise AssertionError(f"{tool} at {version} answered {result}")


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_key_reused_in_a_loop_is_refused_naming_it(version: str) -> None:
    message = await _fails(version, "basket")
    assert "'next-item'" in message
    assert "its own key" in message


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_key_shared_by_questions_asked_together_is_refused(version: str) -> None:
    message = await _fails(version, "together")
    assert "'same'" in message


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_key_of_its_own_per_question_asks_each(version: str) -> None:
    async with connect_memory(build(), answerer=script(), versions=[version]) as client:
        result = await client.call_tool("numbered", {})
    assert result["content"][0]["text"] == "items: ['fig', 'kiwi']"


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_key_shaped_like_one_given_without_key_is_refused_saying_so(version: str) -> None:
    # no question was asked twice under a key of the handler's: the clash is with the key a
    # question without key= is given, which the error says, instead of "in a loop"
    message = await _fails(version, "shaped_like_an_own_key")
    assert "'elicit-2'" in message
    assert "without key=" in message
    assert "in a loop" not in message


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_key_that_is_not_a_string_is_refused_the_same_on_each_revision(version: str) -> None:
    # On 2026-07-28 it failed as it was written into the input requests, after the handler
    # had run: -32603 "Internal error" with a traceback in the log; on 2025-11-25 it was asked.
    async with connect_memory(build(), answerer=script(), versions=[version]) as client:
        result = await client.call_tool("numbered_key", {})
    assert result.get("isError") is True
    assert result["content"][0]["text"] == (
        "Error executing tool numbered_key: a question's key must be a string, not 3 (int): "
        "give key=f'item-{n}' for a number"
    )
