"""Prompts, resources and resource templates on both revisions: asking inside
``prompts/get`` and ``resources/read``, URIs nothing serves, and template variables read,
matched and refused; driven in memory; every message is checked against the schema of its revision."""

from __future__ import annotations

import re

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.server.auth import Principal

from support.memory import MemoryClient, SessionClient, accept
from support.prompts_resources import build, session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def with_tool(app: Server) -> Server:
    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return answer.action

    return app


GUIDED = {"name": "guided", "arguments": {"who": "ada"}}
NOTE = {"uri": "test://notes/7"}


async def test_each_request_state_opens_only_for_its_own_request(wire: WireChecker) -> None:
    client = MemoryClient(with_tool(build()), checker=wire)
    topic = {"elicit-1": {"action": "accept", "content": {"topic": "owls"}}}
    states = {
        "tool": (await client.result("tools/call", {"name": "ask"}))["requestState"],
        "prompt": (await client.result("prompts/get", GUIDED))["requestState"],
        "note": (await client.result("resources/read", NOTE))["requestState"],
    }
    replays = [
        ("tool", "prompts/get", GUIDED),
        ("prompt", "prompts/get", {"name": "guided", "arguments": {"who": "bo"}}),
        ("prompt", "resources/read", NOTE),
        ("note", "resources/read", {"uri": "test://notes/8"}),
        ("note", "prompts/get", GUIDED),
    ]
    for source, method, params in replays:
        retry = {**params, "requestState": states[source], "inputResponses": topic}
        response = await client.request(method, retry)
        assert response["error"] == {"code": -32602, "message": "Invalid or expired requestState"}, (
            source,
            method,
        )
    prompt = await client.result(
        "prompts/get", {**GUIDED, "requestState": states["prompt"], "inputResponses": topic}
    )
    assert prompt["messages"][0]["content"]["text"] == "ada: owls"
    answer = {"elicit-1": {"action": "accept", "content": {"fmt": "pdf"}}}
    note = await client.result(
        "resources/read", {**NOTE, "requestState": states["note"], "inputResponses": answer}
    )
    assert note["contents"][0]["text"] == "note 7 as pdf"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_prompt_or_resource_hears_decline_and_cancel(
    wire: WireChecker, wire_2025: WireChecker, action: str
) -> None:
    modern = MemoryClient(build(), checker=wire)
    prompt, _ = await modern.rounds("prompts/get", GUIDED, lambda k, r: {"action": action})
    note, _ = await modern.rounds("resources/read", NOTE, lambda k, r: {"action": action})
    legacy = await session(wire_2025)
    legacy.answer = lambda k, r: {"action": action}
    for final in (prompt, await legacy.request("prompts/get", GUIDED)):
        assert final["result"]["messages"][0]["content"]["text"] == f"ada: {action}"
    for final in (note, await legacy.request("resources/read", NOTE)):
        assert final["result"]["contents"][0]["text"] == f"note 7 as {action}"
    assert [m["method"] for m in legacy.asked] == ["elicitation/create"] * 2


async def test_nothing_is_asked_of_a_client_that_cannot_answer(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    modern = MemoryClient(build(), checker=wire, capabilities={})
    legacy = SessionClient(build(), checker=wire_2025, capabilities={})
    await legacy.open()
    for client in (modern, legacy):
        for method, params in (("prompts/get", GUIDED), ("resources/read", NOTE)):
            response = await client.request(method, params)
            assert response["error"]["code"] == -32021
            assert "elicitation.form" in response["error"]["message"]
            assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert legacy.asked == []


async def test_unknown_resource_is_32602_at_2026(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    missing = await client.request("resources/read", {"uri": "test://nothing"})
    assert missing["error"] == {
        "code": -32602,
        "message": "Resource not found: test://nothing",
        "data": {"uri": "test://nothing"},
    }


async def test_unknown_resource_is_32002_at_2025(wire_2025: WireChecker) -> None:
    client = await session(wire_2025)
    for uri in ("test://nothing", "test://notes/a/b"):  # a template that does not match is not found
        missing = await client.request("resources/read", {"uri": uri})
        assert missing["error"] == {
            "code": -32002,
            "message": f"Resource not found: {uri}",
            "data": {"uri": uri},
        }


def only_ann() -> Server:
    app = Server("notes", cache_scope="public", cache_ttl_ms=60_000)

    @app.resource("notes://{user}", readable=lambda p, user: p is not None and p.subject == user)
    def notes(user: str) -> str:
        return f"the notes of {user}"

    @app.resource("test://mine", readable=lambda p: p is not None and p.subject == "ann")
    def mine() -> str:
        return "ann's"

    return app


async def test_a_resource_with_a_readable_rule_has_no_cache_hints_at_2025(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """Caching hints are 2026-07-28's: a resource only some callers may read is private
    there, and a 2025-11-25 session's resources/read and resources/list carry no
    cacheScope (a field its schema does not define)."""
    ann = Principal(subject="ann")
    legacy = SessionClient(only_ann(), checker=wire_2025, principal=ann)
    await legacy.open()
    for uri in ("notes://ann", "test://mine"):
        read = await legacy.result("resources/read", {"uri": uri})
        assert "cacheScope" not in read and "ttlMs" not in read, uri
    listed = await legacy.result("resources/list")
    assert listed == {"resources": [{"uri": "test://mine", "name": "mine"}]}
    modern = MemoryClient(only_ann(), checker=wire, principal=ann)
    read = await modern.result("resources/read", {"uri": "test://mine"})
    assert (read["cacheScope"], read["ttlMs"]) == ("private", 60_000)
    assert (await modern.result("resources/list"))["cacheScope"] == "private"


def typed_templates(*, fallback: bool = False) -> Server:
    app = Server("typed")

    @app.resource("test://pages/{number}")
    def page(number: int) -> str:
        return f"page {number}"

    if fallback:

        @app.resource("test://pages/{title}")
        def titled(title: str) -> str:
            return f"titled {title}"

    return app


async def test_a_template_variable_that_does_not_fit_is_not_found(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    modern = MemoryClient(typed_templates(), checker=wire)
    assert (await modern.result("resources/read", {"uri": "test://pages/7"}))["contents"][0][
        "text"
    ] == "page 7"
    bad = await modern.request("resources/read", {"uri": "test://pages/seven"})
    assert bad["error"]["code"] == -32602
    assert bad["error"]["data"] == {"uri": "test://pages/seven"}
    assert bad["error"]["message"].startswith(
        "Resource not found: test://pages/seven (the template test://pages/{number} does not take it: "
    )
    assert "number: Input should be a valid integer" in bad["error"]["message"]
    legacy = await session(wire_2025, typed_templates())
    bad = await legacy.request("resources/read", {"uri": "test://pages/seven"})
    assert bad["error"]["code"] == -32002
    assert "number: Input should be a valid integer" in bad["error"]["message"]


async def test_a_later_template_serves_what_an_earlier_one_does_not_take(wire: WireChecker) -> None:
    client = MemoryClient(typed_templates(fallback=True), checker=wire)
    assert (await client.result("resources/read", {"uri": "test://pages/7"}))["contents"][0][
        "text"
    ] == "page 7"
    got = await client.result("resources/read", {"uri": "test://pages/seven"})
    assert got["contents"][0]["text"] == "titled seven"


def test_a_resource_template_is_registered_once() -> None:
    app = Server("twice")
    app.resource("test://items/{item_id}")(lambda item_id: item_id)
    with pytest.raises(
        ValueError, match=r"a resource template at 'test://items/\{item_id\}' is already registered"
    ):
        app.resource("test://items/{item_id}")(lambda item_id: item_id.upper())
    assert app.names("resources") == ["test://items/{item_id}"]


def cities() -> Server:
    app = Server("cities")

    @app.resource("test://cities/{name}")
    def city(name: str) -> str:
        return f"city {name}"

    @app.resource("test://files/{+path}")
    def file(path: str) -> str:
        return f"file {path}"

    return app


@pytest.mark.parametrize(
    ("uri", "text"),
    [
        ("test://cities/S%C3%A3o%20Paulo", "city São Paulo"),  # RFC 6570 expands {name} so
        ("test://cities/a%2Fb", "city a/b"),
        ("test://cities/plain", "city plain"),
        ("test://files/docs/a%20b.txt", "file docs/a%20b.txt"),  # {+path} is kept as written
    ],
)
async def test_a_template_variable_is_read_as_rfc_6570_expanded_it(
    wire: WireChecker, wire_2025: WireChecker, uri: str, text: str
) -> None:
    for client in (MemoryClient(cities(), checker=wire), await session(wire_2025, cities())):
        got = await client.result("resources/read", {"uri": uri})
        assert got["contents"] == [{"uri": uri, "mimeType": "text/plain", "text": text}]


@pytest.mark.parametrize("uri", ["test://cities/100%", "test://cities/%zz", "test://cities/%FF"])
async def test_a_template_variable_that_is_no_expansion_is_not_found(wire: WireChecker, uri: str) -> None:
    response = await MemoryClient(cities(), checker=wire).request(
        "resources/read", {"uri": uri}, malformed=True
    )
    assert response["error"]["code"] == -32602
    assert response["error"]["data"] == {"uri": uri}


@pytest.mark.parametrize(
    ("uri", "expression"),
    [
        ("test://search{?q}", "{?q}"),
        ("test://items/{item}{?q}", "{?q}"),
        ("test://pair/{a,b}", "{a,b}"),
        ("test://page{#part}", "{#part}"),
        ("test://odd/{ x }", "{ x }"),
        ("test://open/{x", "{"),
        ("test://close/x}", "}"),
    ],
)
def test_a_uri_expression_that_is_not_matched_is_refused_at_registration(uri: str, expression: str) -> None:
    app = Server("expressions")
    supported = re.escape("only {name} (one path segment) and {+name} (anything)")
    for fn in (lambda: "x", lambda q: q, lambda item, q: q, lambda a, b: a, lambda part: part, lambda x: x):
        with pytest.raises(ValueError, match=supported):
            app.resource(uri)(fn)
    with pytest.raises(ValueError, match=re.escape(f"{expression!r}")):
        app.resource(uri)(lambda: "x")
    assert app.names("resources") == []


async def test_contents_made_from_answers_are_never_cached_for_others(wire: WireChecker) -> None:
    app = Server("cached", cache_ttl_ms=60_000, cache_scope="public")

    @app.resource("test://menu")
    def menu() -> str:
        return "soup"

    @app.resource("test://order")
    async def order(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Form(name=String()))
        return f"order of {answer.content['name'] if answer.content else answer.action}"

    client = MemoryClient(app, checker=wire)
    plain = await client.result("resources/read", {"uri": "test://menu"})
    assert (plain["ttlMs"], plain["cacheScope"]) == (60_000, "public")
    final, rounds = await client.rounds("resources/read", {"uri": "test://order"}, accept(name="Ada"))
    assert rounds[0]["resultType"] == "input_required"
    answered = final["result"]
    assert answered["contents"][0]["text"] == "order of Ada"
    assert (answered["ttlMs"], answered["cacheScope"]) == (0, "private")
    # answers given with the first call count the same
    first = {
        "uri": "test://order",
        "inputResponses": {"elicit-1": {"action": "accept", "content": {"name": "Bo"}}},
    }
    direct = await client.result("resources/read", first)
    assert direct["contents"][0]["text"] == "order of Bo"
    assert (direct["ttlMs"], direct["cacheScope"]) == (0, "private")
