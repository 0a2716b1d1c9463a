"""Arguments that are not a mapping are refused before anything is sent, saying what is
expected: ``dict(arguments)`` raised a ``ValueError`` about "dictionary update sequence
elements", which names neither the call nor the argument."""

from __future__ import annotations

from typing import Any

import pytest

from client.app import app
from mcp_elicit.client import Client
from mcp_elicit.transports.memory import connect_memory

pytestmark = pytest.mark.anyio


async def _tool(client: Client, arguments: Any) -> object:
    return await client.call_tool("regional", arguments)


async def _prompt(client: Client, arguments: Any) -> object:
    return await client.get_prompt("evening", arguments)


async def _complete(client: Client, arguments: Any) -> object:
    return await client.complete({"type": "ref/prompt", "name": "evening"}, arguments)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (_tool, "tools/call 'regional'"),
        (_prompt, "prompts/get 'evening'"),
        (_complete, "completion/complete"),
    ],
)
@pytest.mark.parametrize("arguments", [["region", "eu"], "region=eu", 3])
async def test_arguments_that_are_not_a_mapping_are_refused_saying_so(
    call: Any, name: str, arguments: object
) -> None:
    async with connect_memory(app) as client:
        with pytest.raises(TypeError) as caught:
            await call(client, arguments)
    assert str(caught.value).startswith(f"{name}: the argument")
    assert "must be a mapping of name to value (a dict)" in str(caught.value)
    assert f"not {type(arguments).__name__}" in str(caught.value)
