"""The Context of a handler written as a plain function: read in its thread, and what must
be awaited (asking, returning a coroutine) fails saying so."""

from __future__ import annotations

import inspect
import logging
from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.server.questions import Question
from mcp_elicit.server.threads import AWAITED, ThreadContext, awaited_methods

from support.memory import MemoryClient
from support.sync_handlers import text
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def build_with_context() -> Server:
    app = Server("ctx")

    @app.tool()
    def reads(ctx: Context) -> str:
        first = ctx.remember("first", lambda: "kept")
        return f"{ctx.revision} form={ctx.can_elicit()} url={ctx.can_elicit('url')} {first}"

    @app.tool()
    def logs(ctx: Context) -> str:
        ctx.info("starting")  # a coroutine function: nothing is sent unless awaited
        return "logged?"

    @app.tool()
    def asks(ctx: Context) -> str:
        answer = ctx.elicit("Your name?", Form(name=String()))
        return f"asked: {answer}"

    @app.prompt()
    def asks_too(ctx: Context) -> str:
        answer = ctx.elicit("Your name?", Form(name=String()))
        return f"asked: {answer}"

    async def hidden(ctx: Context) -> str:
        await ctx.info("hidden")
        return "hidden"

    @app.tool(name="wrapped")
    def wrapped(ctx: Context) -> Any:  # a decorator that hid an async function
        return hidden(ctx)

    return app


async def test_a_plain_function_reads_its_context_in_its_thread(wire: WireChecker) -> None:
    client = MemoryClient(build_with_context(), checker=wire)
    result = await client.result("tools/call", {"name": "reads"})
    assert text(result) == "2026-07-28 form=True url=False kept"


@pytest.mark.parametrize(("tool", "method"), [("logs", "info"), ("asks", "elicit")])
async def test_a_plain_function_that_calls_what_must_be_awaited_fails_saying_so(
    wire: WireChecker, tool: str, method: str
) -> None:
    client = MemoryClient(build_with_context(), checker=wire)
    result = await client.result("tools/call", {"name": tool})
    assert result["isError"] is True
    assert text(result) == (
        f"Error executing tool {tool}: tool {tool!r} is a plain function (def), so it runs in a worker "
        f"thread and cannot use ctx.{method}(), which must be awaited; declare it 'async def' and "
        f"'await ctx.{method}(...)'"
    )
    assert client.notifications == []


async def test_a_plain_prompt_that_asks_is_an_internal_error_whose_log_says_why(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    client = MemoryClient(build_with_context(), checker=wire)
    with caplog.at_level(logging.ERROR, "mcp_elicit.server"):
        response = await client.request("prompts/get", {"name": "asks_too"})
    assert response["error"]["code"] == -32603
    assert "prompt 'asks_too' is a plain function (def)" in caplog.text
    assert "cannot use ctx.elicit()" in caplog.text


async def test_a_plain_function_returning_a_coroutine_fails_saying_so(wire: WireChecker) -> None:
    """The coroutine is closed, not left to warn 'never awaited' (warnings are errors here)."""
    client = MemoryClient(build_with_context(), checker=wire)
    result = await client.result("tools/call", {"name": "wrapped"})
    assert result["isError"] is True
    assert text(result) == (
        "Error executing tool wrapped: tool 'wrapped' is a plain function (def) that returned a "
        "coroutine; declare it 'async def' (a decorator must keep it one: "
        "inspect.markcoroutinefunction, or an async wrapper)"
    )


def test_every_context_method_that_must_be_awaited_is_refused_in_a_thread() -> None:
    """Found by inspecting ``Context``, so a method added later is refused too."""
    assert set(AWAITED) >= {
        "elicit", "elicit_url", "require_url", "sample", "list_roots", "gather", "secret", "connect",
        "start_task", "pause", "close_stream", "report_progress", "log", "debug", "info", "warning", "error",
    }  # fmt: skip
    public_coroutines = {
        name
        for cls in Context.__mro__[:-1]  # every base but object: the mixins too
        for name, member in vars(cls).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    }
    assert public_coroutines <= set(AWAITED)
    for name in AWAITED:
        assert getattr(ThreadContext, name).__qualname__ == name  # the refusal, not the method
    assert not {"remember", "slot", "can_elicit", "can_sample", "can_list_roots"} & set(AWAITED)


class _Mixin:
    async def fetch(self) -> str:
        return "fetched"

    def ask_later(self) -> Question[str]:
        raise NotImplementedError

    def read(self) -> str:
        return "read"

    async def _private(self) -> None:
        return None


class _Overrides(_Mixin):
    def fetch(self) -> str:  # type: ignore[override]  # no longer awaited here
        return "fetched at once"


class _Built(_Mixin):
    async def ask(self) -> str:
        return "asked"


def test_a_method_that_must_be_awaited_is_found_on_a_base_too() -> None:
    """A mixin of ``Context`` adding an ``async def`` gets it refused in a thread as well,
    and what the class itself redefines is judged as it redefines it."""
    assert set(awaited_methods(_Built)) == {"ask", "fetch", "ask_later"}
    assert set(awaited_methods(_Overrides)) == {"ask_later"}
