"""Prompts, resources, resource templates, completion and list pages on both revisions,
driven in memory; every message is checked against the schema of its revision."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

import pytest
from mcp_types import CallToolResult, GetPromptResult, PromptMessage, TextContent

from mcp_elicit import Context, Form, Server, String, ToolError
from mcp_elicit.sealing import KeyRing
from mcp_elicit.server.auth import Principal

from support.memory import MemoryClient, SessionClient, accept
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def build() -> Server:
    app = Server("catalog", state_keys=KeyRing([bytes(range(3, 35))]), page_size=1)

    @app.prompt()
    async def guided(ctx: Context, who: str) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return f"{who}: {answer.content['topic'] if answer.content else answer.action}"

    @app.resource("test://notes/{note_id}")
    async def note(ctx: Context, note_id: str) -> str:
        answer = await ctx.elicit("Format?", Form(fmt=String()))
        return f"note {note_id} as {answer.content['fmt'] if answer.content else answer.action}"

    @app.resource("test://fixed")
    def fixed() -> str:
        return "fixed"

    return app


async def session(wire_2025: WireChecker, app: Server | None = None) -> SessionClient:
    client = SessionClient(app or build(), checker=wire_2025)
    await client.open()
    return client


# --- asking inside prompts/get and resources/read --------------------------------------


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


# --- resources/read of a URI nothing serves ----------------------------------------------


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


# --- resource templates whose variables do not fit ----------------------------------------


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


# --- list pages: only a cursor the server gave for this list is taken --------------------


def many() -> Server:
    app = Server("many", page_size=2)
    for n in range(5):
        app.prompt(name=f"p{n}")(lambda: "hi")
        app.resource(f"test://r{n}")(lambda: "hi")
    return app


def forged(cursor: str, offset: str) -> str:
    """``cursor`` (one the server gave) with its offset replaced by ``offset``."""
    text = base64.urlsafe_b64decode(cursor).decode()
    return base64.urlsafe_b64encode(re.sub(r"\d+", offset, text).encode()).decode("ascii")


async def test_list_pages_follow_the_cursors_given(wire: WireChecker, wire_2025: WireChecker) -> None:
    for client in (MemoryClient(many(), checker=wire), await session(wire_2025, many())):
        names, params = [], {}
        for _ in range(4):
            page = await client.result("prompts/list", params)
            names += [p["name"] for p in page["prompts"]]
            if "nextCursor" not in page:
                break
            params = {"cursor": page["nextCursor"]}
        assert names == ["p0", "p1", "p2", "p3", "p4"]


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda c: forged(c, "-2"), id="negative offset"),
        pytest.param(lambda c: forged(c, " 2"), id="offset with a space"),
        pytest.param(lambda c: forged(c, "+2"), id="offset with a sign"),
        pytest.param(lambda c: forged(c, "02"), id="offset with a leading zero"),
        pytest.param(lambda c: forged(c, "0"), id="offset zero (never given)"),
        pytest.param(lambda c: forged(c, "5"), id="at the end of the list"),
        pytest.param(lambda c: forged(c, "99"), id="past the end of the list"),
        pytest.param(lambda c: "!" + c, id="noise before a real cursor"),
        pytest.param(lambda c: c.rstrip("=") + "==", id="padding changed"),
    ],
)
async def test_a_forged_or_stale_cursor_is_invalid_params(
    wire: WireChecker, wire_2025: WireChecker, forge: Callable[[str], str]
) -> None:
    for client in (MemoryClient(many(), checker=wire), await session(wire_2025, many())):
        given = (await client.result("prompts/list"))["nextCursor"]
        response = await client.request("prompts/list", {"cursor": forge(given)})
        assert response["error"]["code"] == -32602, response
        assert "cursor" in response["error"]["message"]
        assert "prompts/list" in response["error"]["message"]


async def test_a_cursor_of_another_list_is_invalid_params(wire: WireChecker) -> None:
    client = MemoryClient(many(), checker=wire)
    resources = await client.result("resources/list")
    response = await client.request("prompts/list", {"cursor": resources["nextCursor"]})
    assert response["error"]["code"] == -32602
    assert "not one prompts/list gave" in response["error"]["message"]


# --- completion/complete: the reference must name something offered ----------------------


def completing(*, with_function: bool) -> Server:
    app = build()
    if with_function:

        @app.completion()
        def suggest(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> list[str]:
            return [f"{ref.get('name', ref.get('uri'))}/{argument['name']}={argument['value']}"]

    return app


@pytest.mark.parametrize("with_function", [True, False], ids=["completer", "no completer"])
@pytest.mark.parametrize(
    ("ref", "argument", "fragment"),
    [
        (
            {"type": "ref/prompt", "name": "nope"},
            "who",
            'the prompt "nope", which this server does not offer',
        ),
        (
            {"type": "ref/prompt", "name": "guided"},
            "nope",
            'the prompt "guided" has no argument "nope" (its arguments: who)',
        ),
        (
            {"type": "ref/resource", "uri": "test://else/{x}"},
            "x",
            'the resource template "test://else/{x}", which this server does not offer',
        ),
        (
            {"type": "ref/resource", "uri": "test://notes/{note_id}"},
            "nope",
            'the resource template "test://notes/{note_id}" has no variable "nope" (its variables: note_id)',
        ),
        (
            {"type": "ref/resource", "uri": "test://fixed"},
            "any",
            'the resource "test://fixed" has no variable "any" (it has none)',
        ),
    ],
)
async def test_completion_of_something_not_offered_is_invalid_params(
    wire: WireChecker,
    wire_2025: WireChecker,
    with_function: bool,
    ref: dict[str, Any],
    argument: str,
    fragment: str,
) -> None:
    app = completing(with_function=with_function)
    for client in (MemoryClient(app, checker=wire), await session(wire_2025, app)):
        params = {"ref": ref, "argument": {"name": argument, "value": "a"}}
        response = await client.request("completion/complete", params)
        assert response["error"]["code"] == -32602, response
        assert fragment in response["error"]["message"]


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt"},
        {"type": "ref/prompt", "name": 5},
        {"type": "ref/resource"},
        {"type": "ref/resource", "name": "x"},
    ],
)
async def test_a_reference_without_its_name_or_uri_is_invalid_params(
    wire: WireChecker, ref: dict[str, Any]
) -> None:
    client = MemoryClient(completing(with_function=True), checker=wire)
    params = {"ref": ref, "argument": {"name": "who", "value": "a"}}
    response = await client.request("completion/complete", params, malformed=True)
    assert response["error"]["code"] == -32602, response
    assert '"ref"' in response["error"]["message"]


async def test_completion_of_what_is_offered(wire: WireChecker, wire_2025: WireChecker) -> None:
    app = completing(with_function=True)
    for client in (MemoryClient(app, checker=wire), await session(wire_2025, app)):
        prompt = {"ref": {"type": "ref/prompt", "name": "guided"}, "argument": {"name": "who", "value": "a"}}
        assert (await client.result("completion/complete", prompt))["completion"]["values"] == [
            "guided/who=a"
        ]
        template = {
            "ref": {"type": "ref/resource", "uri": "test://notes/{note_id}"},
            "argument": {"name": "note_id", "value": "4"},
        }
        values = (await client.result("completion/complete", template))["completion"]["values"]
        assert values == ["test://notes/{note_id}/note_id=4"]


# --- what a prompt returns, on the wire of each revision ---------------------------------


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


def suggesting(values: Any) -> Server:
    app = build()
    app.completion()(lambda ref, argument, context: values)
    return app


@pytest.mark.parametrize(("offered", "has_more"), [(100, False), (101, True), (250, True)])
async def test_completion_beyond_100_values_says_there_are_more(
    wire: WireChecker, wire_2025: WireChecker, offered: int, has_more: bool
) -> None:
    app = suggesting([f"v{n}" for n in range(offered)])
    params = {"ref": {"type": "ref/prompt", "name": "guided"}, "argument": {"name": "who", "value": ""}}
    for client in (MemoryClient(app, checker=wire), await session(wire_2025, app)):
        completion = (await client.result("completion/complete", params))["completion"]
        assert completion["values"] == [f"v{n}" for n in range(100)]
        assert completion["hasMore"] is has_more
        assert completion.get("total") == (offered if has_more else None)


@pytest.mark.parametrize(
    "context",
    ["who=ada", {"arguments": ["ada"]}, {"arguments": {"who": 5}}],
    ids=["a string", "a list", "a number"],
)
async def test_a_completion_context_of_the_wrong_shape_is_invalid_params(
    wire: WireChecker, context: Any
) -> None:
    seen: list[Any] = []
    app = build()
    app.completion()(lambda ref, argument, ctx: seen.append(ctx) or [])
    params = {
        "ref": {"type": "ref/prompt", "name": "guided"},
        "argument": {"name": "who", "value": ""},
        "context": context,
    }
    response = await MemoryClient(app, checker=wire).request("completion/complete", params, malformed=True)
    assert response["error"]["code"] == -32602, response
    assert '"context"' in response["error"]["message"]
    assert seen == []


async def test_a_completion_context_reaches_the_function(wire: WireChecker) -> None:
    seen: list[Any] = []
    app = build()
    app.completion()(lambda ref, argument, ctx: seen.append(ctx) or [])
    params = {
        "ref": {"type": "ref/resource", "uri": "test://notes/{note_id}"},
        "argument": {"name": "note_id", "value": ""},
        "context": {"arguments": {"who": "ada"}},
    }
    await MemoryClient(app, checker=wire).result("completion/complete", params)
    assert seen == [{"arguments": {"who": "ada"}}]


@pytest.mark.parametrize("returned", ["alpha", {"alpha": 1}, 7], ids=["a string", "a dict", "a number"])
async def test_a_completion_function_that_returns_no_list_fails_clearly(
    wire: WireChecker, returned: Any, caplog: pytest.LogCaptureFixture
) -> None:
    params = {"ref": {"type": "ref/prompt", "name": "guided"}, "argument": {"name": "who", "value": "a"}}
    response = await MemoryClient(suggesting(returned), checker=wire).request("completion/complete", params)
    assert response["error"] == {"code": -32603, "message": "Internal error"}
    assert (
        f"the completion function returned {type(returned).__name__}; return a list of strings" in caplog.text
    )


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


# --- methods of capabilities the server did not declare ---------------------------------


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
