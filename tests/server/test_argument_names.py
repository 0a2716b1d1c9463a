"""A tool's arguments may be called what pydantic's ``BaseModel`` has as an attribute
(``schema``, ``json``, ``copy``, ``dict``, ``validate``): the tool registers without a
warning, publishes them, and gets them. Driven in memory, every message checked against
the schema."""

from __future__ import annotations

import threading
import warnings
from typing import Annotated, Any

import pydantic
import pytest
from pydantic_core import core_schema

from mcp_elicit import Server

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

#: How long a thread may wait for another here (seconds); a test that needs it has failed.
BOUND = 10.0


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


async def test_an_argument_named_as_pydantics_own_model_members_is_published_and_arrives(
    wire: WireChecker,
) -> None:
    # "model_config" vanished from the schema (pydantic took it for the model's settings),
    # so the function was called without it; "model_dump" and "model_validate" stopped the
    # registration with pydantic's ValueError about its protected namespace, "Config" with
    # its error about a model's two kinds of settings.
    app = Server("names")

    @app.tool()
    async def ask(
        model_config: str, model_dump: int = 0, model_validate: bool = False, Config: str = ""
    ) -> str:
        return repr((model_config, model_dump, model_validate, Config))

    client = MemoryClient(app, checker=wire)
    (tool,) = (await client.result("tools/list"))["tools"]
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {
            "model_config": {"type": "string"},
            "model_dump": {"type": "integer", "default": 0},
            "model_validate": {"type": "boolean", "default": False},
            "Config": {"type": "string", "default": ""},
        },
        "required": ["model_config"],
    }
    arguments = {"model_config": "c", "model_dump": 3, "model_validate": True}
    result = await client.result("tools/call", {"name": "ask", "arguments": arguments})
    assert result["content"][0]["text"] == repr(("c", 3, True, ""))
    refused = await client.result("tools/call", {"name": "ask", "arguments": {"model_dump": "3"}})
    assert refused["isError"] is True
    said = refused["content"][0]["text"]
    assert "model_config: Field required" in said and "model_dump: Input should be a valid integer" in said


async def test_a_prompt_argument_named_as_a_model_attribute_is_listed_and_arrives(wire: WireChecker) -> None:
    app = Server("names")

    @app.prompt()
    async def draft(schema: str, model_config: str = "plain") -> str:
        return f"{schema} / {model_config}"

    client = MemoryClient(app, checker=wire)
    (prompt,) = (await client.result("prompts/list"))["prompts"]
    assert prompt["arguments"] == [
        {"name": "schema", "required": True},
        {"name": "model_config", "required": False},
    ]
    got = await client.result(
        "prompts/get", {"name": "draft", "arguments": {"schema": "s", "model_config": "c"}}
    )
    assert got["messages"][0]["content"]["text"] == "s / c"


class _Held(str):
    """A text argument whose check pydantic builds while the tool is registered: it holds
    the registering thread there until told to go on."""

    inside = threading.Event()
    go = threading.Event()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        cls.inside.set()
        assert cls.go.wait(BOUND)
        return core_schema.str_schema()


def test_registering_leaves_the_warning_filters_to_the_other_threads() -> None:
    # Registering from a plain handler's worker thread while another thread set a warning
    # filter: warnings.catch_warnings around the model put back the filters it found, the
    # other thread's one lost (and one of its own left behind when another catch_warnings
    # ended after it): the filters are the whole process's, not a thread's.
    app = Server("names")

    def register() -> None:
        @app.tool()
        async def ask(schema: str, held: _Held) -> str:
            return schema

    worker = threading.Thread(target=register)
    with warnings.catch_warnings():
        worker.start()
        try:
            assert _Held.inside.wait(BOUND)
            warnings.filterwarnings("ignore", message="set while a tool was registered")
            mine = warnings.filters[0]
        finally:
            _Held.go.set()
            worker.join(BOUND)
        assert not worker.is_alive()
        assert warnings.filters[0] is mine, warnings.filters[:3]


async def test_a_developers_alias_names_the_argument_without_a_made_up_title(wire: WireChecker) -> None:
    # An aliased field's generated title ("Y") stayed in the schema, where the others' are
    # left out; an alias given to an argument called "schema" wins over its name.
    app = Server("names")

    @app.tool()
    async def ask(
        x: Annotated[str, pydantic.Field(alias="y")],
        schema: Annotated[int, pydantic.Field(alias="the_schema")],
    ) -> str:
        return repr((x, schema))

    client = MemoryClient(app, checker=wire)
    (tool,) = (await client.result("tools/list"))["tools"]
    assert tool["inputSchema"]["properties"] == {"y": {"type": "string"}, "the_schema": {"type": "integer"}}
    result = await client.result("tools/call", {"name": "ask", "arguments": {"y": "a", "the_schema": 2}})
    assert result["content"][0]["text"] == repr(("a", 2))
