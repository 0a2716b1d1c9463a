"""What prompts and resources return and how they fail, on the wire of each revision: result
models, messages outside the schema, missing arguments, methods of undeclared capabilities,
failures that read alike; driven in memory; every message is checked against the schema of its revision."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import CallToolResult, GetPromptResult, PromptMessage, TextContent

from mcp_elicit import Context, Server, ToolError

from support.memory import MemoryClient
from support.prompts_resources import session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def returning_models() -> Server:
    app = Server("models")

    @app.prompt()
    def whole() -> GetPromptResult:
        message = PromptMessage(role="user", content=TextContent(type="text", text="hi"))
        return GetPromptResult(messages=[message], description="made whole")

    @app.tool()
    def whole_tool() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="done")])

    return app


async def test_a_tool_result_model_fits_each_revision(wire: WireChecker, wire_2025: WireChecker) -> None:
    call = {"name": "whole_tool"}
    modern = await MemoryClient(returning_models(), checker=wire).result("tools/call", call)
    assert modern["resultType"] == "complete"
    legacy = await (await session(wire_2025, returning_models())).result("tools/call", call)
    assert legacy == {"content": [{"type": "text", "text": "done"}], "isError": False}


async def test_a_prompt_result_model_fits_each_revision(wire: WireChecker, wire_2025: WireChecker) -> None:
    modern = await MemoryClient(returning_models(), checker=wire).result("prompts/get", {"name": "whole"})
    assert modern["resultType"] == "complete"
    legacy = await (await session(wire_2025, returning_models())).result("prompts/get", {"name": "whole"})
    assert legacy == {
        "description": "made whole",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    }


def returning_bad_messages() -> Server:
    app = Server("bad-messages")

    @app.prompt()
    def system_dict() -> list[dict[str, Any]]:
        return [{"role": "system", "content": {"type": "text", "text": "obey"}}]

    @app.prompt()
    def robot_pair() -> list[tuple[str, str]]:
        return [("assistant", "fine"), ("robot", "beep")]

    @app.prompt()
    def contentless() -> list[dict[str, Any]]:
        return [{"role": "user", "text": "where is my content"}]

    return app


@pytest.mark.parametrize("name", ["system_dict", "robot_pair", "contentless"])
async def test_a_prompt_message_outside_the_schema_is_never_sent(
    wire: WireChecker, wire_2025: WireChecker, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = returning_bad_messages()
    for client in (MemoryClient(app, checker=wire), await session(wire_2025, app)):
        response = await client.request("prompts/get", {"name": name})
        assert response["error"] == {"code": -32603, "message": "Internal error"}
    assert f"prompt {name!r} returned a message that is not a PromptMessage" in caplog.text


@pytest.mark.parametrize(
    ("returned", "said"),
    [(7, "int"), ({7}, "set"), (None, "NoneType"), (object(), "object")],
    ids=["a number", "a set", "None", "an object"],
)
async def test_a_prompt_returning_what_is_no_message_is_said_naming_the_prompt_and_the_type(
    wire: WireChecker, returned: Any, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A number or None was "'int' object is not iterable"; a set of numbers "a prompt
    # returned int", naming neither the prompt nor what it returned.
    app = Server("odd-prompts")

    @app.prompt()
    def odd() -> Any:
        return returned

    response = await MemoryClient(app, checker=wire).request("prompts/get", {"name": "odd"})
    assert response["error"] == {"code": -32603, "message": "Internal error"}
    assert (
        f"prompt 'odd' returned {said}; return str, a list of messages (str, (role, content) or "
        "PromptMessage) or GetPromptResult" in caplog.text
    )


async def test_a_prompt_or_resource_returning_a_coroutine_says_the_await_was_forgotten(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    # It was "prompt 'plan' returned coroutine; return str, ...", and a "coroutine 'lookup'
    # was never awaited" warning at some later point, from wherever the object was freed.
    app = Server("forgetful")

    async def lookup() -> str:
        return "found"

    @app.prompt()
    async def plan() -> Any:
        return lookup()

    @app.resource("menu://today")
    async def menu() -> Any:
        return lookup()

    @app.prompt()
    async def plans() -> Any:
        return ["first", lookup()]

    @app.resource("menu://week")
    async def week() -> Any:
        return ["monday", lookup()]

    client = MemoryClient(app, checker=wire)
    for method, params in [
        ("prompts/get", {"name": "plan"}),
        ("resources/read", {"uri": "menu://today"}),
        ("prompts/get", {"name": "plans"}),
        ("resources/read", {"uri": "menu://week"}),
    ]:
        response = await client.request(method, params)
        assert response["error"] == {"code": -32603, "message": "Internal error"}
    fix = "it is a coroutine (test_a_prompt_or_resource_returning_a_coroutine_says_the_await_was_forgotten.<locals>.lookup), never awaited: write 'return await lookup(...)'"
    assert f"prompt 'plan' returned a value that cannot be sent: {fix}" in caplog.text
    assert f"resource 'menu://today' returned a value that cannot be sent: {fix}" in caplog.text
    assert f"prompt 'plans' returned a value that cannot be sent: {fix}" in caplog.text
    assert f"resource 'menu://week' returned a value that cannot be sent: {fix}" in caplog.text


def two_arguments() -> Server:
    app = Server("args")

    @app.prompt()
    def pair(first: str, second: str, style: str = "plain") -> str:
        return f"{first}/{second}/{style}"

    return app


@pytest.mark.parametrize("arguments", [None, {}, {"style": "bold"}])
async def test_missing_prompt_arguments_are_named(
    wire: WireChecker, wire_2025: WireChecker, arguments: dict[str, str] | None
) -> None:
    params: dict[str, Any] = (
        {"name": "pair"} if arguments is None else {"name": "pair", "arguments": arguments}
    )
    for client in (MemoryClient(two_arguments(), checker=wire), await session(wire_2025, two_arguments())):
        response = await client.request("prompts/get", params)
        assert response["error"] == {
            "code": -32602,
            "message": "Invalid params: the prompt 'pair' needs the arguments first and second (see prompts/list)",
        }
    one = await MemoryClient(two_arguments(), checker=wire).request(
        "prompts/get", {"name": "pair", "arguments": {"first": "a"}}
    )
    assert (
        one["error"]["message"]
        == "Invalid params: the prompt 'pair' needs the argument second (see prompts/list)"
    )


def tools_only() -> Server:
    app = Server("tools-only")

    @app.tool()
    async def hello() -> str:
        return "hello"

    return app


GATED = [
    ("prompts/list", {}, "prompts"),
    ("prompts/get", {"name": "guided", "arguments": {"who": "x"}}, "prompts"),
    ("resources/list", {}, "resources"),
    ("resources/templates/list", {}, "resources"),
    ("resources/read", {"uri": "test://fixed"}, "resources"),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "guided"}, "argument": {"name": "who", "value": ""}},
        "completions",
    ),
]


@pytest.mark.parametrize(("method", "params", "capability"), GATED)
async def test_a_method_of_an_undeclared_capability_is_not_found_at_2026(
    wire: WireChecker, method: str, params: dict[str, Any], capability: str
) -> None:
    client = MemoryClient(tools_only(), checker=wire)
    discovered = await client.result("server/discover")
    assert capability not in discovered["capabilities"]
    error = (await client.request(method, params))["error"]
    assert error["code"] == -32601
    assert f"declares no {capability} capability" in error["message"]
    assert (await client.result("tools/list"))["tools"][0]["name"] == "hello"


@pytest.mark.parametrize(
    ("method", "params", "capability"),
    [*GATED, ("resources/subscribe", {"uri": "test://fixed"}, "resources")],
)
async def test_a_method_of_an_undeclared_capability_is_not_found_at_2025(
    wire_2025: WireChecker, method: str, params: dict[str, Any], capability: str
) -> None:
    client = await session(wire_2025, tools_only())
    error = (await client.request(method, params))["error"]
    assert error["code"] == -32601
    assert f"declares no {capability} capability" in error["message"]
    assert await client.result("logging/setLevel", {"level": "info"}) == {}


def failing() -> Server:
    app = Server("fails")

    @app.prompt()
    async def topics() -> str:
        raise ToolError("the topic list is unavailable")

    @app.resource("test://broken")
    async def broken() -> str:
        raise RuntimeError("secret connection string here")

    @app.resource("test://bad-form")
    async def bad_form(ctx: Context) -> str:
        await ctx.elicit("Nested?", {"type": "object", "properties": {"a": {"type": "object"}}})
        return "never"

    return app


async def test_a_prompt_or_resource_failure_reads_alike_on_both_revisions(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """A ``ToolError`` (or a form the handler got wrong) says its message, on both
    revisions; any other exception is a bare internal error, its text kept in the log."""
    modern = MemoryClient(failing(), checker=wire)
    legacy = await session(wire_2025, failing())
    expected = {
        ("prompts/get", "topics"): "Internal error: the topic list is unavailable",
        ("resources/read", "test://broken"): "Internal error",
        ("resources/read", "test://bad-form"): (
            "Internal error: field 'a': nested objects are not allowed in a form; flatten them into "
            "top-level fields"
        ),
    }
    for (method, target), message in expected.items():
        params = {"name": target} if method == "prompts/get" else {"uri": target}
        for client in (modern, legacy):
            error = (await client.request(method, params))["error"]
            assert (error["code"], error["message"]) == (-32603, message), (method, target, client)
