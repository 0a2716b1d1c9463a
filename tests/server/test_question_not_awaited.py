"""A question a handler forgets to ``await`` says so: reading an answer's attribute off it
fails naming the fix, and one otherwise dropped without being awaited (never asked) warns,
as a coroutine never awaited does. A question awaited, gathered or made into a URL step does
not warn. Driven in memory on both revisions (every message checked against the schema)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import warnings
from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String

from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

NAME = Form(name=String())
CAPS = {"elicitation": {"form": {}, "url": {}}}
NOT_AWAITED = (
    "ctx.elicit() returns the question, not its answer: 'action' is an attribute of the answer. "
    "Await the question: answer = await ctx.elicit(...)"
)
NEVER_ASKED = (
    "ctx.elicit() made question 'elicit-1' in tool {tool!r}, but it was never awaited, so it "
    "was never asked: await it (answer = await ctx.elicit(...)) or pass it to ctx.gather(...)"
)


def build() -> Server:
    app = Server("forgets")

    @app.tool()
    async def reads(ctx: Context) -> str:
        answer: Any = ctx.elicit("Your name?", NAME)
        return str(answer.action)

    @app.tool()
    async def drops(ctx: Context) -> str:
        ctx.elicit("Your name?", NAME)
        return "returned without asking"

    @app.tool()
    async def minds(ctx: Context) -> str:
        first, second = await ctx.gather(ctx.elicit("Your name?", NAME), ctx.elicit("Again?", NAME, key="b"))
        third = await ctx.elicit("Once more?", NAME, key="c")
        return " ".join([first.action, second.action, third.action])

    @app.tool()
    async def gathers_a_log(ctx: Context) -> str:
        await ctx.gather(ctx.info("hello"), ctx.elicit("Your name?", NAME))  # type: ignore[call-overload]
        return "gathered"

    return app


def never_asked(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "never awaited" in str(w.message)]


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def call(revision: str, tool: str, checker: WireChecker) -> dict[str, Any]:
    if revision == "2026-07-28":  # every round answered, to the handler's end
        response, _ = await MemoryClient(build(), capabilities=CAPS, checker=checker).rounds(
            "tools/call", {"name": tool}, lambda _key, _request: {"action": "decline"}
        )
        return response["result"]  # type: ignore[no-any-return]
    client = SessionClient(build(), capabilities=CAPS, checker=checker)
    client.answer = lambda _key, _request: {"action": "decline"}
    await client.open()
    result = await client.result("tools/call", {"name": tool, "arguments": {}})
    assert tool == "minds" or client.asked == []
    return result


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def checker(revision: str, wire: WireChecker, wire_2025: WireChecker) -> WireChecker:
    return wire if revision == "2026-07-28" else wire_2025


async def test_an_answer_read_off_a_question_not_awaited_says_to_await_it(
    revision: str, checker: WireChecker
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await call(revision, "reads", checker)
        gc.collect()
    assert result["isError"] is True
    assert text(result) == f"Error executing tool reads: {NOT_AWAITED}"
    assert never_asked(caught) == []  # the error says it; no warning besides


async def test_a_question_dropped_without_being_awaited_warns_that_it_was_never_asked(
    revision: str, checker: WireChecker
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await call(revision, "drops", checker)
        gc.collect()
    assert text(result) == "returned without asking"
    assert never_asked(caught) == [NEVER_ASKED.format(tool="drops")]
    assert [w.category for w in caught if "never awaited" in str(w.message)] == [RuntimeWarning]


async def test_questions_awaited_or_gathered_do_not_warn(revision: str, checker: WireChecker) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await call(revision, "minds", checker)
        gc.collect()
    assert text(result) == "decline decline decline"
    assert never_asked(caught) == []


async def test_gather_given_something_other_than_a_question_says_what_it_takes(
    revision: str, checker: WireChecker
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await call(revision, "gathers_a_log", checker)
        gc.collect()
    assert result["isError"] is True
    assert text(result) == (
        "Error executing tool gathers_a_log: ctx.gather() takes questions (ctx.elicit(...), "
        "ctx.elicit_url(...), ctx.sample(...), ctx.list_roots()); its argument 1 is a coroutine "
        "(Context.info): await that on its own"
    )
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []


@pytest.mark.parametrize("tool", ["awaits", "gathers"])
async def test_questions_made_before_the_one_that_ends_a_round_do_not_warn(
    wire: WireChecker, tool: str
) -> None:
    """At 2026-07-28 awaiting an unanswered question (alone or gathered) ends the round; the
    questions the handler made before it, to await next, are asked in a later round, not
    forgotten (each round warned that one was never awaited)."""
    app = Server("in-order")

    @app.tool()
    async def awaits(ctx: Context) -> str:
        first = ctx.elicit("Your name?", NAME, key="a")
        second = ctx.elicit("Again?", NAME, key="b")
        return f"{(await first).action} {(await second).action}"

    @app.tool()
    async def gathers(ctx: Context) -> str:
        later = ctx.elicit("Your name?", NAME, key="a")
        (now,) = await ctx.gather(ctx.elicit("Again?", NAME, key="b"))
        return f"{now.action} {(await later).action}"

    client = MemoryClient(app, capabilities=CAPS, checker=wire)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response, rounds = await client.rounds(
            "tools/call", {"name": tool}, lambda _k, _r: {"action": "decline"}
        )
        gc.collect()
    assert text(response["result"]) == "decline decline"
    assert len(rounds) == 3
    assert never_asked(caught) == []


async def test_a_question_returned_unawaited_is_the_tools_error_alone(
    revision: str, checker: WireChecker
) -> None:
    """``return ctx.elicit(...)`` is the tool's error (closing the question, as a coroutine
    returned is closed), not that and a warning besides, as closing a coroutine unstarted
    spares its warning."""
    app = Server("returns")

    @app.tool()
    async def returns(ctx: Context) -> Any:
        return ctx.elicit("Your name?", NAME)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if revision == "2026-07-28":
            result = await MemoryClient(app, capabilities=CAPS, checker=checker).result(
                "tools/call", {"name": "returns"}
            )
        else:
            client = SessionClient(app, capabilities=CAPS, checker=checker)
            await client.open()
            result = await client.result("tools/call", {"name": "returns", "arguments": {}})
        gc.collect()
    assert result["isError"] is True
    assert "never awaited" in text(result)
    assert "write 'return await ctx.elicit(...)'" in text(result)  # not the class's name
    assert never_asked(caught) == []


async def test_a_question_run_as_a_task_does_not_warn(revision: str, checker: WireChecker) -> None:
    """A question is a coroutine, so it may run as a task: one awaited through its task, and
    one whose task is cancelled before it starts (given up, not forgotten), do not warn."""
    app = Server("tasks")

    @app.tool()
    async def as_task(ctx: Context) -> str:
        given_up = asyncio.create_task(ctx.elicit("Never mind?", NAME, key="b"))
        given_up.cancel()
        answer = await asyncio.create_task(ctx.elicit("Your name?", NAME, key="a"))
        with contextlib.suppress(asyncio.CancelledError):
            await given_up
        return str(answer.action)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if revision == "2026-07-28":
            response, _ = await MemoryClient(app, capabilities=CAPS, checker=checker).rounds(
                "tools/call", {"name": "as_task"}, lambda _key, _request: {"action": "decline"}
            )
            result = response["result"]
        else:
            client = SessionClient(app, capabilities=CAPS, checker=checker)
            client.answer = lambda _key, _request: {"action": "decline"}
            await client.open()
            result = await client.result("tools/call", {"name": "as_task", "arguments": {}})
        gc.collect()
    assert text(result) == "decline"
    assert never_asked(caught) == []


async def test_a_question_made_before_a_required_url_step_does_not_warn(wire_2025: WireChecker) -> None:
    """On 2025-11-25 ``ctx.require_url`` ends the request with -32042; a question made to
    await after it is asked when the client sends the request again, not forgotten."""
    app = Server("url-first")

    @app.tool()
    async def signs_in(ctx: Context) -> str:
        later = ctx.elicit("Your name?", NAME, key="a")
        await ctx.require_url("Sign in first", "https://example.com/sign-in", elicitation_id="e1")
        return str((await later).action)

    client = SessionClient(app, capabilities=CAPS, checker=wire_2025)
    await client.open()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = await client.request("tools/call", {"name": "signs_in", "arguments": {}})
        await client.close_stream()
        del client, app  # the ended handler's frame, and its question, live on with them
        gc.collect()
    assert response["error"]["code"] == -32042
    assert never_asked(caught) == []


async def test_a_question_the_client_cannot_be_asked_dropped_says_so_in_the_handlers_words(
    revision: str, checker: WireChecker
) -> None:
    """Made for a client without the capability and dropped, a question warned under its
    method name ("question 'elicitation/create'"), which no handler writes, and as if it
    could have been asked. It warns as any dropped question does (the handler drops it
    whatever the client), naming the call, the key the handler gave, and why it could not
    be asked."""
    app = Server("drops-unaskable")

    @app.tool()
    async def drops(ctx: Context) -> str:
        ctx.elicit("Your name?", NAME)
        ctx.sample("Say hi", key="greeting")
        return "returned without asking"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if revision == "2026-07-28":
            result = await MemoryClient(app, capabilities={}, checker=checker).result(
                "tools/call", {"name": "drops"}
            )
        else:
            client = SessionClient(app, capabilities={}, checker=checker)
            await client.open()
            result = await client.result("tools/call", {"name": "drops", "arguments": {}})
        gc.collect()
    assert text(result) == "returned without asking"
    assert sorted(never_asked(caught)) == [
        "ctx.elicit() made a question in tool 'drops' that this client cannot be asked (This request "
        "needs the client capability elicitation.form, which the client did not declare), and it was "
        "never awaited: await it (answer = await ctx.elicit(...), raising MissingClientCapability, "
        "which the handler may catch to fall back) or do not make it",
        "ctx.sample() made question 'greeting' in tool 'drops' that this client cannot be asked (This "
        "request needs the client capability sampling, which the client did not declare), and it was "
        "never awaited: await it (answer = await ctx.sample(...), raising MissingClientCapability, "
        "which the handler may catch to fall back) or do not make it",
    ]
