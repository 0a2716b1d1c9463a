"""A tool's arguments may be called what pydantic's ``BaseModel`` has as an attribute
(``schema``, ``json``, ``copy``, ``dict``, ``validate``): the tool registers without a
warning, publishes them, and gets them. Driven in memory, every message checked against
the schema."""

from __future__ import annotations

import pytest

from mcp_elicit import Server

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_an_argument_named_as_a_model_attribute_registers_quietly_and_arrives(
    wire: WireChecker,
) -> None:
    # pydantic warned 'Field name "schema" in "ask_arguments" shadows an attribute in parent
    # "BaseModel"' as the tool was registered: on a stdio server's stderr at every start,
    # and an error under -W error (this suite's filterwarnings).
    app = Server("names")

    @app.tool()
    async def ask(
        schema: str, json: str = "{}", copy: int = 1, dict: bool = False, validate: str = ""
    ) -> str:
        return repr((schema, json, copy, dict, validate))

    client = MemoryClient(app, checker=wire)
    listed = await client.result("tools/list")
    (tool,) = listed["tools"]
    assert set(tool["inputSchema"]["properties"]) == {"schema", "json", "copy", "dict", "validate"}
    assert tool["inputSchema"]["required"] == ["schema"]
    arguments = {"schema": '{"type": "object"}', "json": "[]", "copy": 2, "dict": True, "validate": "v"}
    result = await client.result("tools/call", {"name": "ask", "arguments": arguments})
    assert result["content"][0]["text"] == repr(('{"type": "object"}', "[]", 2, True, "v"))
