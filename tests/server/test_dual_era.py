"""The same handlers, unchanged, on both revisions: 2026-07-28 (multi round-trip
requests) and 2025-11-25 (a session, server-to-client requests). Each test runs on both
eras and asserts the same outcome; every message is checked against the schema of its
revision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.sealing import KeyRing

from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
Answer = Callable[[str, dict[str, Any]], dict[str, Any]]


def build() -> Server:
    app = Server("dual", state_keys=KeyRing([bytes(range(7, 39))]))

    @app.tool()
    async def greet(ctx: Context, greeting: str = "Hello") -> str:
        answer = await ctx.elicit("What is your name?", Form(name=String(min_length=2)))
        if answer.action == "decline":
            return "declined"
        if answer.action == "cancel":
            return "cancelled"
        return f"{greeting}, {answer.content['name'] if answer.content else '?'}!"

    @app.tool()
    async def survey(ctx: Context) -> str:
        name, reply, roots = await ctx.gather(
            ctx.elicit("Name?", Form(name=String())), ctx.sample("Hi?", max_tokens=5), ctx.list_roots()
        )
        return f"{name.action}:{getattr(reply.content, 'text', '')}:{[str(r.uri) for r in roots]}"

    @app.tool()
    async def maybe_url(ctx: Context) -> str:
        if not ctx.can_elicit("url"):
            return "no url mode"
        answer = await ctx.elicit_url("Connect your account", "https://example.com/connect")
        return f"url:{answer.action}"

    @app.prompt(description="asks first")
    async def topic(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return f"About {answer.content['topic'] if answer.content else '-'}"

    return app


class Driver:
    """One era's client, with a common ``call``: run to completion, answering questions."""

    def __init__(self, era: str, caps: dict[str, Any], wire: WireChecker, wire_2025: WireChecker) -> None:
        self.era = era
        self.server = build()
        if era == "2026-07-28":
            self.modern: MemoryClient | None = MemoryClient(self.server, capabilities=caps, checker=wire)
            self.legacy: SessionClient | None = None
        else:
            self.modern = None
            self.legacy = SessionClient(self.server, capabilities=caps, checker=wire_2025)

    async def call(
        self, method: str, params: dict[str, Any], answer: Answer
    ) -> tuple[dict[str, Any], list[str]]:
        """The final response, and the methods of the questions the client was asked."""
        if self.modern is not None:
            final, rounds = await self.modern.rounds(method, params, answer)
            asked = [r["method"] for rd in rounds for r in rd.get("inputRequests", {}).values()]
            return final, asked
        assert self.legacy is not None
        if self.legacy.session is None:
            await self.legacy.open()
        self.legacy.answer = answer
        self.legacy.asked.clear()
        final = await self.legacy.request(method, params)
        return final, [m["method"] for m in self.legacy.asked]


ERAS = ["2026-07-28", "2025-11-25"]
ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def driver(era: str, wire: WireChecker, wire_2025: WireChecker, caps: dict[str, Any] | None = None) -> Driver:
    return Driver(era, ALL_CAPS if caps is None else caps, wire, wire_2025)


def text(final: dict[str, Any]) -> str:
    return str(final["result"]["content"][0]["text"])


async def test_accept(era: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    final, asked = await driver(era, wire, wire_2025).call(
        "tools/call",
        {"name": "greet", "arguments": {"greeting": "Hi"}},
        lambda k, r: {"action": "accept", "content": {"name": "Ada"}},
    )
    assert text(final) == "Hi, Ada!"
    assert asked == ["elicitation/create"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel(era: str, action: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    final, _ = await driver(era, wire, wire_2025).call(
        "tools/call", {"name": "greet"}, lambda k, r: {"action": action}
    )
    assert text(final) == {"decline": "declined", "cancel": "cancelled"}[action]


async def test_a_bad_answer_is_asked_again(era: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    names = iter(["A", "Bo"])
    messages: list[str] = []

    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        messages.append(request["params"]["message"])
        return {"action": "accept", "content": {"name": next(names)}}

    final, asked = await driver(era, wire, wire_2025).call("tools/call", {"name": "greet"}, answer)
    assert text(final) == "Hello, Bo!"
    assert asked == ["elicitation/create", "elicitation/create"]
    assert "at least 2" in messages[1]
    assert messages[1].endswith("What is your name?")


async def test_several_questions_at_once(era: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        if request["method"] == "elicitation/create":
            return {"action": "accept", "content": {"name": "x"}}
        if request["method"] == "sampling/createMessage":
            return {"role": "assistant", "content": {"type": "text", "text": "hey"}, "model": "m"}
        return {"roots": [{"uri": "file:///r"}]}

    final, asked = await driver(era, wire, wire_2025).call("tools/call", {"name": "survey"}, answer)
    assert text(final) == "accept:hey:['file:///r']"
    assert sorted(asked) == ["elicitation/create", "roots/list", "sampling/createMessage"]


async def test_prompts_ask_too(era: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    final, _ = await driver(era, wire, wire_2025).call(
        "prompts/get", {"name": "topic"}, lambda k, r: {"action": "accept", "content": {"topic": "owls"}}
    )
    assert final["result"]["messages"][0]["content"]["text"] == "About owls"


async def test_no_capability_no_question(era: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    final, asked = await driver(era, wire, wire_2025, caps={}).call(
        "tools/call", {"name": "greet"}, lambda k, r: {}
    )
    assert final["error"]["code"] == -32021
    assert final["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert asked == []


async def test_empty_elicitation_means_form_only(era: str, wire: WireChecker, wire_2025: WireChecker) -> None:
    form_only = driver(era, wire, wire_2025, caps={"elicitation": {}})
    final, asked = await form_only.call(
        "tools/call", {"name": "maybe_url"}, lambda k, r: {"action": "accept"}
    )
    assert text(final) == "no url mode"
    assert asked == []
    both = driver(era, wire, wire_2025)
    seen: list[dict[str, Any]] = []

    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request["params"])
        return {"action": "accept"}

    final, _ = await both.call("tools/call", {"name": "maybe_url"}, answer)
    assert text(final) == "url:accept"
    assert seen[0]["mode"] == "url"
    assert seen[0]["url"] == "https://example.com/connect"
    assert ("elicitationId" in seen[0]) is (era == "2025-11-25")
