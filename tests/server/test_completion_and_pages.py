"""List pages and ``completion/complete`` on both revisions: only a cursor the server gave for
this list is taken, and a completion reference must name something offered; driven in memory; every message is checked against the schema of its revision."""

from __future__ import annotations

import base64
import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

from mcp_elicit import Principal, Server

from support.memory import MemoryClient
from support.prompts_resources import build, session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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


@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
async def test_a_completion_function_can_suggest_only_what_the_caller_may_see(
    wire: WireChecker, is_async: bool
) -> None:
    """A completion function that takes ``principal`` gets the caller (None when
    unauthenticated), so the notes of a template guarded by ``readable=`` are suggested
    only to who may read them (the spec's MUST on completion-based disclosure). Before:
    the function could not know who asked, and one naming ``principal`` failed with -32603."""
    owners = {"1": "ada", "2": "bob", "3": "ada"}
    app = build()

    def mine(ref: Any, argument: Any, context: Any, principal: Principal | None) -> list[str]:
        who = principal.subject if principal else None
        return [n for n, owner in owners.items() if owner == who and n.startswith(argument["value"])]

    async def mine_async(ref: Any, argument: Any, context: Any, principal: Principal | None) -> list[str]:
        return mine(ref, argument, context, principal)

    app.completion()(mine_async if is_async else mine)
    params = {
        "ref": {"type": "ref/resource", "uri": "test://notes/{note_id}"},
        "argument": {"name": "note_id", "value": ""},
    }
    seen = {}
    for who in ("ada", "bob", None):
        client = MemoryClient(app, checker=wire, principal=Principal(who) if who else None)
        seen[who] = (await client.result("completion/complete", params))["completion"]["values"]
    assert seen == {"ada": ["1", "3"], "bob": ["2"], None: []}


def _in_a_context_place(ref: Any, argument: Any, principal: Any) -> list[str]:
    return []


def _positional_only(ref: Any, argument: Any, context: Any, principal: Any, /) -> list[str]:
    return []


def _star(ref: Any, argument: Any, context: Any, *principal: Any) -> list[str]:
    return []


@pytest.mark.parametrize(
    ("fn", "fault"),
    [
        pytest.param(_in_a_context_place, "in the place of ref, argument or context", id="third parameter"),
        pytest.param(_positional_only, "positional-only", id="positional-only"),
        pytest.param(_star, "*principal", id="star"),
    ],
)
def test_a_principal_parameter_the_caller_cannot_be_given_to_is_refused_at_registration(
    fn: Callable[..., Any], fault: str
) -> None:
    """The caller is given as ``principal=``: a parameter of that name the three arguments
    fill by position, or that takes no keyword, would fail at every completion (-32603)
    with the reason in the server's log only. Registering it says what is wrong instead."""
    app = Server("misnamed")
    with pytest.raises(TypeError, match=re.escape(fault)):
        app.completion()(fn)


async def test_a_completion_function_taking_keywords_only_by_name_gets_principal(wire: WireChecker) -> None:
    """``principal`` after ``*`` (keyword-only) is given the caller too; a function taking
    only ``**kwargs`` is not (it names no ``principal``), and gets the three arguments."""
    got: list[Any] = []
    app = build()

    def keyword_only(ref: Any, argument: Any, context: Any, *, principal: Principal | None) -> list[str]:
        got.append(principal)
        return []

    def open_ended(ref: Any, argument: Any, context: Any, **extra: Any) -> list[str]:
        got.append(extra)
        return []

    params = {
        "ref": {"type": "ref/resource", "uri": "test://notes/{note_id}"},
        "argument": {"name": "note_id", "value": ""},
    }
    for fn in (keyword_only, open_ended):
        app.completion()(fn)
        await MemoryClient(app, checker=wire, principal=Principal("ada")).result(
            "completion/complete", params
        )
    assert got == [Principal("ada"), {}]


NOTE_IDS = {
    "ref": {"type": "ref/resource", "uri": "test://notes/{note_id}"},
    "argument": {"name": "note_id", "value": ""},
}


async def test_a_principal_bound_by_a_partial_is_kept(wire: WireChecker) -> None:
    """``functools.partial(fn, principal=X)`` fixed the principal: the caller was passed as
    ``principal=`` all the same, replacing X without a word. X is what the function gets."""
    got: list[Any] = []

    def suggest(ref: Any, argument: Any, context: Any, principal: Principal | None) -> list[str]:
        got.append(principal)
        return []

    app = build()
    app.completion()(functools.partial(suggest, principal=Principal("fixed")))
    await MemoryClient(app, checker=wire, principal=Principal("ada")).result("completion/complete", NOTE_IDS)
    assert got == [Principal("fixed")]


async def test_a_completion_functions_signature_is_read_once_when_it_is_registered(
    wire: WireChecker,
) -> None:
    """Whether to give the caller was read off the function's signature at every
    ``completion/complete``; it is settled when the function is registered."""
    reads: list[str] = []

    class Suggests:
        def __call__(self, ref: Any, argument: Any, context: Any, principal: Any = None) -> list[str]:
            return [str(principal)]

        @property
        def __signature__(self) -> inspect.Signature:
            reads.append("read")
            return inspect.signature(type(self).__call__).replace(
                parameters=list(inspect.signature(type(self).__call__).parameters.values())[1:]
            )

    app = build()
    app.completion()(Suggests())
    registered = len(reads)
    client = MemoryClient(app, checker=wire, principal=Principal("ada"))
    for _ in range(3):
        result = await client.result("completion/complete", NOTE_IDS)
        assert result["completion"]["values"] == [str(Principal("ada"))]
    assert len(reads) == registered
