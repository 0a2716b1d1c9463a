"""Elicitation in handlers over multi round-trip requests (2026-07-28), in memory.

Every message is checked against the official schema of the revision.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
import pytest

from mcp_elicit import Context, Field, Form, Principal, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.core.rounds import MAX_INPUT_REQUESTS
from mcp_elicit.forms import FormSchema
from mcp_elicit.sealing import KeyRing
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.wire import jsonrpc

from support.memory import MemoryClient, SessionClient, accept
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@dataclass
class Booking:
    guests: Annotated[int, Field(minimum=1, maximum=20, title="Party size")]
    date: dt.date
    seating: Literal["inside", "patio"] = "inside"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def build(clock: Clock | None = None) -> Server:
    app = Server("elicit", clock=clock or Clock(), state_keys=KeyRing([b"k" * 16 + b"e" * 16]))

    @app.tool()
    async def book(ctx: Context, restaurant: str) -> str:
        answer = await ctx.elicit(f"Booking at {restaurant}: how many, and when?", Booking)
        if answer.action == "decline":
            return "declined: offer another way"
        if answer.action == "cancel":
            return "cancelled: ask again later"
        assert answer.data is not None
        booking = answer.data
        assert isinstance(booking.date, dt.date)
        return f"{restaurant}: {booking.guests} on {booking.date.isoformat()} {booking.seating}"

    @app.tool()
    async def wizard(ctx: Context) -> str:
        first = await ctx.elicit("Name?", Form(name=String()), key="name")
        second = await ctx.elicit("Color?", Form(color=String()), key="color")
        third = await ctx.elicit("Pet?", Form(pet=String()), key="pet")
        parts = [a.content[k] for a, k in ((first, "name"), (second, "color"), (third, "pet")) if a.content]
        return " ".join(parts)

    @app.tool()
    async def everything(ctx: Context) -> str:
        name, reply, roots = await ctx.gather(
            ctx.elicit("Name?", Form(name=String())),
            ctx.sample("Say hi", max_tokens=5),
            ctx.list_roots(),
        )
        text = getattr(reply.content, "text", "")
        return f"{name.content['name'] if name.content else '-'}|{text}|{len(roots)}"

    @app.tool()
    async def concurrent(ctx: Context) -> str:
        async with asyncio.TaskGroup() as tg:
            a = tg.create_task(ctx.elicit("A?", Form(a=String()), key="a"))
            b = tg.create_task(ctx.elicit("B?", Form(b=String()), key="b"))
        return f"{a.result().action}/{b.result().action}"

    @app.tool()
    async def url_step(ctx: Context) -> str:
        if not ctx.can_elicit("url"):
            return "fallback: no URL mode"
        answer = await ctx.elicit_url("Sign in to continue", "https://example.com/connect")
        return f"url answer {answer.action}"

    @app.tool()
    async def needs_url(ctx: Context) -> str:
        answer = await ctx.elicit_url("Enter your API key on our page", "https://example.com/key")
        return answer.action

    @app.tool()
    async def greedy(ctx: Context) -> str:
        answer = await ctx.elicit("Password please", Form(password=String()))
        return answer.action

    @app.prompt(description="asks first")
    async def guided(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()), key="topic")
        return f"Write about {answer.content['topic'] if answer.content else 'anything'}"

    @app.resource("test://report/{year}")
    async def report(ctx: Context, year: str) -> str:
        answer = await ctx.elicit("Which format?", Form(fmt=String()), key="fmt")
        return f"report {year} as {answer.content['fmt'] if answer.content else '?'}"

    return app


@pytest.fixture
def client(wire: WireChecker) -> MemoryClient:
    return MemoryClient(build(), checker=wire)


BOOKING = {"guests": 4, "date": "2026-12-31", "seating": "patio"}


async def test_accept_gives_typed_data(client: MemoryClient) -> None:
    final, rounds = await client.rounds(
        "tools/call", {"name": "book", "arguments": {"restaurant": "Noma"}}, accept(**BOOKING)
    )
    assert final["result"]["content"][0]["text"] == "Noma: 4 on 2026-12-31 patio"
    assert len(rounds) == 2
    request = rounds[0]["inputRequests"]["elicit-1"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    schema = request["params"]["requestedSchema"]
    assert schema["properties"]["guests"]["minimum"] == 1
    assert schema["properties"]["date"]["format"] == "date"
    assert "requestState" in rounds[0]
    assert "requestState" not in rounds[1]


@pytest.mark.parametrize(("action", "text"), [("decline", "declined"), ("cancel", "cancelled")])
async def test_decline_and_cancel_are_answers(client: MemoryClient, action: str, text: str) -> None:
    final, _ = await client.rounds(
        "tools/call", {"name": "book", "arguments": {"restaurant": "X"}}, lambda k, r: {"action": action}
    )
    assert final["result"]["content"][0]["text"].startswith(text)
    assert "isError" not in final["result"] or final["result"]["isError"] is False


async def test_several_rounds_state_changes_every_round(client: MemoryClient) -> None:
    answers = {"name": {"name": "Ada"}, "color": {"color": "red"}, "pet": {"pet": "cat"}}
    final, rounds = await client.rounds(
        "tools/call", {"name": "wizard"}, lambda k, r: {"action": "accept", "content": answers[k]}
    )
    assert final["result"]["content"][0]["text"] == "Ada red cat"
    assert [list(r.get("inputRequests", {})) for r in rounds] == [["name"], ["color"], ["pet"], []]
    states = [r["requestState"] for r in rounds[:-1]]
    assert len(set(states)) == 3


async def test_several_requests_in_one_round(client: MemoryClient) -> None:
    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        method = request["method"]
        if method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Bo"}}
        if method == "sampling/createMessage":
            return {
                "role": "assistant",
                "content": {"type": "text", "text": "hi"},
                "model": "m",
                "stopReason": "endTurn",
            }
        return {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]}

    client.capabilities = {"elicitation": {}, "sampling": {}, "roots": {}}
    final, rounds = await client.rounds("tools/call", {"name": "everything"}, answer)
    assert sorted(r["method"] for r in rounds[0]["inputRequests"].values()) == [
        "elicitation/create",
        "roots/list",
        "sampling/createMessage",
    ]
    assert final["result"]["content"][0]["text"] == "Bo|hi|2"


async def test_questions_from_concurrent_tasks_share_one_round(client: MemoryClient) -> None:
    final, rounds = await client.rounds(
        "tools/call", {"name": "concurrent"}, lambda k, r: {"action": "decline"}
    )
    assert set(rounds[0]["inputRequests"]) == {"a", "b"}
    assert final["result"]["content"][0]["text"] == "decline/decline"


async def test_prompt_and_resource_template_elicit(client: MemoryClient) -> None:
    final, rounds = await client.rounds("prompts/get", {"name": "guided"}, accept(topic="owls"))
    assert rounds[0]["resultType"] == "input_required"
    assert final["result"]["messages"][0]["content"]["text"] == "Write about owls"
    final, _ = await client.rounds("resources/read", {"uri": "test://report/2026"}, accept(fmt="pdf"))
    assert final["result"]["contents"][0]["text"] == "report 2026 as pdf"
    assert final["result"]["ttlMs"] == 0


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ({"action": "accept", "content": {"guests": 40, "date": "2026-12-31"}}, "guests"),
        ({"action": "accept", "content": {"guests": "four", "date": "2026-12-31"}}, "guests"),
        ({"action": "accept", "content": {"guests": 2}}, "date"),
        ({"action": "accept", "content": {"guests": 2, "date": "31/12/2026"}}, "date"),
        ({"action": "accept", "content": {"guests": 2, "date": "2026-12-31", "seating": "roof"}}, "seating"),
        ({"action": "maybe"}, "action"),
        (12345, "object"),
    ],
)
async def test_invalid_answers_are_asked_again(client: MemoryClient, bad: Any, fragment: str) -> None:
    params = {"name": "book", "arguments": {"restaurant": "Noma"}}
    first = await client.result("tools/call", params)
    retry = {**params, "inputResponses": {"elicit-1": bad}, "requestState": first["requestState"]}
    again = (await client.request("tools/call", retry, malformed=True))["result"]
    assert again["resultType"] == "input_required"
    message = again["inputRequests"]["elicit-1"]["params"]["message"]
    assert "not accepted" in message or "could not be read" in message
    assert fragment in message
    assert message.endswith("how many, and when?")
    final = await client.result(
        "tools/call",
        {
            **params,
            "inputResponses": {"elicit-1": {"action": "accept", "content": BOOKING}},
            "requestState": again["requestState"],
        },
    )
    assert final["content"][0]["text"].startswith("Noma: 4")


@pytest.mark.parametrize("responses", [None, [1, 2], "text"])
async def test_input_responses_not_an_object(client: MemoryClient, responses: Any) -> None:
    result = (
        await client.request(
            "tools/call",
            {"name": "book", "arguments": {"restaurant": "N"}, "inputResponses": responses},
            malformed=True,
        )
    )["result"]
    assert result["resultType"] == "input_required"
    if responses is not None:
        assert "could not be read" in result["inputRequests"]["elicit-1"]["params"]["message"]


async def test_extra_keys_are_ignored_and_no_state_is_needed(client: MemoryClient) -> None:
    params = {
        "name": "book",
        "arguments": {"restaurant": "N"},
        "inputResponses": {
            "elicit-1": {"action": "accept", "content": {**BOOKING, "extra": 1}},
            "stray": {"x": 1},
        },
    }
    result = (await client.request("tools/call", params, malformed=True))["result"]
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "N: 4 on 2026-12-31 patio"


async def _state(client: MemoryClient, arguments: dict[str, Any] | None = None) -> str:
    first = await client.result(
        "tools/call", {"name": "book", "arguments": arguments or {"restaurant": "Noma"}}
    )
    return str(first["requestState"])


def _retry(state: str, **changes: Any) -> dict[str, Any]:
    params = {"name": "book", "arguments": {"restaurant": "Noma"}, "requestState": state}
    params["inputResponses"] = {"elicit-1": {"action": "accept", "content": BOOKING}}
    params.update(changes)
    return params


async def _rejected(client: MemoryClient, params: dict[str, Any]) -> None:
    response = await client.request("tools/call", params, malformed=True)
    assert response["error"] == {"code": -32602, "message": "Invalid or expired requestState"}


@pytest.mark.parametrize(
    "edit", [lambda s: s + "-TAMPERED", lambda s: s[:-2], lambda s: s.replace("v2.", "v1."), lambda s: ""]
)
async def test_tampered_state_is_refused(client: MemoryClient, edit: Any) -> None:
    await _rejected(client, _retry(edit(await _state(client))))


async def test_state_is_bound_to_arguments_target_and_principal(wire: WireChecker) -> None:
    app = build()
    alice = MemoryClient(app, checker=wire, principal=Principal("alice"))
    state = await _state(alice)
    await _rejected(alice, _retry(state, arguments={"restaurant": "Other"}))
    await _rejected(alice, _retry(state, name="wizard"))
    await _rejected(MemoryClient(app, checker=wire, principal=Principal("bob")), _retry(state))
    await _rejected(MemoryClient(app, checker=wire), _retry(state))
    ok = await alice.result("tools/call", _retry(state))
    assert ok["resultType"] == "complete"


async def test_state_expires(wire: WireChecker) -> None:
    clock = Clock()
    client = MemoryClient(build(clock), checker=wire)
    state = await _state(client)
    clock.now += 599
    assert (await client.result("tools/call", _retry(state)))["resultType"] == "complete"
    clock.now += 2
    await _rejected(client, _retry(state))


async def test_state_from_another_server_key_is_refused(wire: WireChecker) -> None:
    state = await _state(MemoryClient(build(), checker=wire))
    other = build()
    other.set_state_keys(KeyRing([bytes(range(100, 132))]))
    await _rejected(MemoryClient(other, checker=wire), _retry(state))


async def test_a_changed_question_is_a_clear_error(wire: WireChecker) -> None:
    app = Server("changing", state_keys=KeyRing([bytes(range(50, 82))]))
    asked = {"n": 0}

    @app.tool()
    async def fickle(ctx: Context) -> str:
        asked["n"] += 1
        await ctx.elicit(f"Question number {asked['n']}?", Form(x=String()), key="q")
        return "done"

    client = MemoryClient(app, checker=wire)
    first = await client.result("tools/call", {"name": "fickle"})
    response = await client.request(
        "tools/call",
        {
            "name": "fickle",
            "inputResponses": {"q": {"action": "accept", "content": {"x": "1"}}},
            "requestState": first["requestState"],
        },
    )
    assert response["error"]["code"] == -32603
    assert "changed between rounds" in response["error"]["message"]


async def test_no_capability_no_elicitation(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire, capabilities={})
    response = await client.request("tools/call", {"name": "book", "arguments": {"restaurant": "N"}})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert client.statuses[-1] == 400


async def test_form_only_client_gets_no_url_mode(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire, capabilities={"elicitation": {}})
    assert (await client.result("tools/call", {"name": "url_step"}))["content"][0][
        "text"
    ] == "fallback: no URL mode"
    response = await client.request("tools/call", {"name": "needs_url"})
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    url_client = MemoryClient(build(), checker=wire, capabilities={"elicitation": {"form": {}, "url": {}}})
    first = await url_client.result("tools/call", {"name": "url_step"})
    params = first["inputRequests"]["url-1"]["params"]
    assert params == {"mode": "url", "message": "Sign in to continue", "url": "https://example.com/connect"}
    final, _ = await url_client.rounds("tools/call", {"name": "url_step"}, lambda k, r: {"action": "accept"})
    assert final["result"]["content"][0]["text"] == "url answer accept"


async def test_a_url_answer_counts_only_for_a_url_the_server_sent(wire: WireChecker) -> None:
    """Accepting a URL step is consent to open a page the client was shown: an answer that
    comes without the state of the round that asked it (or whose state did not ask it)
    answers nothing, and the step is asked. Form answers without state stay accepted."""
    app = build()

    @app.tool()
    async def name_then_url(ctx: Context) -> str:
        name = await ctx.elicit("Name?", Form(name=String()), key="name")
        step = await ctx.elicit_url("Sign in to continue", "https://example.com/connect")
        return f"{name.action}/{step.action}"

    client = MemoryClient(app, checker=wire, capabilities={"elicitation": {"form": {}, "url": {}}})
    accepted = {"url-1": {"action": "accept"}}
    params = {"name": "url_step", "inputResponses": accepted}
    first = (await client.request("tools/call", params, malformed=True))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["url-1"]["params"]["url"] == "https://example.com/connect"
    bound = {**params, "requestState": first["requestState"]}
    done = (await client.request("tools/call", bound, malformed=True))["result"]
    assert done["content"][0]["text"] == "url answer accept"
    # answered ahead of its question, with a state that asked only the form
    asked = await client.result("tools/call", {"name": "name_then_url"})
    assert set(asked["inputRequests"]) == {"name"}
    ahead = {"name": {"action": "accept", "content": {"name": "Ada"}}, **accepted}
    retry = {"name": "name_then_url", "inputResponses": ahead, "requestState": asked["requestState"]}
    second = (await client.request("tools/call", retry, malformed=True))["result"]
    assert second["resultType"] == "input_required"
    assert set(second["inputRequests"]) == {"url-1"}
    # a form answered without state is still taken, as before
    form_only = {"name": "name_then_url", "inputResponses": {"name": ahead["name"]}}
    third = (await client.request("tools/call", form_only, malformed=True))["result"]
    assert set(third["inputRequests"]) == {"url-1"}


async def test_secrets_are_never_asked_in_form_mode(client: MemoryClient) -> None:
    response = await client.request("tools/call", {"name": "greedy"})
    assert response["error"]["code"] == -32603
    assert "URL mode" in response["error"]["message"] or "url" in response["error"]["message"].lower()


async def test_a_form_read_without_the_secret_guard_is_still_never_asked(wire: WireChecker) -> None:
    """``FormSchema.parse(..., check_secrets=False)`` is how a client reads what a server
    sent; a handler that asks such a form still never sends a password field (Security,
    form mode): the request fails as for ``Form(password=String())``, naming the field."""
    app = Server("elicit", state_keys=KeyRing([b"k" * 16 + b"e" * 16]))
    read = FormSchema.parse(
        {"type": "object", "properties": {"password": {"type": "string"}}}, check_secrets=False
    )
    allowed = FormSchema.parse(
        {"type": "object", "properties": {"password": {"type": "string"}}},
        not_secret={"password"},
        check_secrets=False,
    )

    @app.tool()
    async def sign_in(ctx: Context) -> str:
        return (await ctx.elicit("Sign in", read)).action

    @app.tool()
    async def named(ctx: Context) -> str:
        return (await ctx.elicit("Which password manager entry?", allowed, key="entry")).action

    client = MemoryClient(app, checker=wire)
    response = await client.request("tools/call", {"name": "sign_in"})
    assert response["error"]["code"] == -32603
    assert "password" in response["error"]["message"] and "URL" in response["error"]["message"]
    asked = (await client.result("tools/call", {"name": "named"}))["inputRequests"]
    assert set(asked) == {"entry"}


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("javascript:alert(1)", "http(s)"),
        ("data:text/html,hi", "http(s)"),
        ("https://", "no host"),
        ("https:///path", "no host"),
        ("https:example.com/x", "http(s)"),
        ("https://user:pw@example.com/x", "user name or password"),
        ("https://example.com@evil.example/x", "user name or password"),
        ("https://exa mple.com/", "U+0020"),
        ("https://example.com/\nnext", "U+000A"),
        ("https://example.com/\x00", "U+0000"),
        ("https://exam\u202eple.com/", "U+202E"),
        ("https://bücher.example/", "U+00FC"),
        ("https://example.com\\@evil.example/", "U+005C"),
        ("https://example.com/%zz", "%-escape"),
        ("https://example.com:99999/", "port"),
        ("https://example.com/" + "a" * 2100, "2048"),
    ],
)
async def test_a_url_that_is_no_safe_web_address_is_refused(url: str, fragment: str) -> None:
    """The URL goes to a person's browser as given: only an absolute http(s) URI (RFC 3986,
    what the schema's ``format: uri`` means) with a host and no credentials, of a sane length."""
    app = Server("urls", state_keys=KeyRing([bytes(range(32))]))
    seen: list[str] = []

    @app.tool()
    async def open_page(ctx: Context, url: str) -> str:
        try:
            ctx.elicit_url("Open this page", url)
        except ValueError as exc:
            seen.append(str(exc))
            return "refused"
        return "asked"

    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}})
    result = await client.result("tools/call", {"name": "open_page", "arguments": {"url": url}})
    assert result["content"][0]["text"] == "refused"
    assert fragment in seen[0]


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/connect?state=a%20b#frag",
        "HTTPS://Example.COM:8443/x",
        "http://127.0.0.1:8000/mcp-elicit/flows/abc?t=xyz",
        "https://[::1]:8443/",
        "https://xn--bcher-kva.example/",
    ],
)
async def test_a_web_address_is_sent_as_given(url: str) -> None:
    app = Server("urls", state_keys=KeyRing([bytes(range(32))]))

    @app.tool()
    async def open_page(ctx: Context, url: str) -> str:
        return (await ctx.elicit_url("Open this page", url)).action

    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}})
    first = await client.result("tools/call", {"name": "open_page", "arguments": {"url": url}})
    assert first["inputRequests"]["url-1"]["params"]["url"] == url


@dataclass
class Stay:
    arrive: dt.date
    leave: dt.date

    def __post_init__(self) -> None:
        if self.leave <= self.arrive:
            raise ValueError("the day you leave must come after the day you arrive")


def stay_app() -> Server:
    app = Server("stays", state_keys=KeyRing([b"k" * 16 + b"s" * 16]))

    @app.tool()
    async def book_stay(ctx: Context) -> str:
        answer = await ctx.elicit("When do you arrive and leave?", Stay)
        assert answer.data is not None
        return f"{answer.data.arrive} to {answer.data.leave}"

    return app


BACKWARDS = {"arrive": "2026-12-31", "leave": "2026-12-30"}
FORWARDS = {"arrive": "2026-12-30", "leave": "2026-12-31"}


async def test_an_answer_the_class_itself_refuses_is_asked_again_with_its_reason(wire: WireChecker) -> None:
    """A dataclass's ``__post_init__`` (or a pydantic validator) raising ``ValueError`` on
    an answer that fits the schema is the person's mistake to mend, as a field out of range
    is: the question is asked again with the class's own reason, never a failed tool."""
    client = MemoryClient(stay_app(), checker=wire)
    first = await client.result("tools/call", {"name": "book_stay"})
    retry = {
        "name": "book_stay",
        "inputResponses": {"elicit-1": {"action": "accept", "content": BACKWARDS}},
        "requestState": first["requestState"],
    }
    again = await client.result("tools/call", retry)
    assert again["resultType"] == "input_required", again
    message = again["inputRequests"]["elicit-1"]["params"]["message"]
    assert "not accepted: the day you leave must come after the day you arrive" in message
    final = await client.result(
        "tools/call",
        {
            "name": "book_stay",
            "inputResponses": {"elicit-1": {"action": "accept", "content": FORWARDS}},
            "requestState": again["requestState"],
        },
    )
    assert final["content"][0]["text"] == "2026-12-30 to 2026-12-31"


async def test_on_a_session_the_class_s_refusal_is_asked_again_too(wire_2025: WireChecker) -> None:
    answers = iter([BACKWARDS, FORWARDS])
    client = SessionClient(stay_app(), capabilities={"elicitation": {}}, checker=wire_2025)
    await client.open()
    client.answer = lambda _k, _request: {"action": "accept", "content": next(answers)}
    result = await client.result("tools/call", {"name": "book_stay"})
    assert result["content"][0]["text"] == "2026-12-30 to 2026-12-31"
    second = [m for m in client.asked if m.get("method") == "elicitation/create"][1]
    assert "the day you leave must come after the day you arrive" in second["params"]["message"]


def _nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


async def _send_text(client: MemoryClient, method: str, params: dict[str, Any], swap: dict[str, str]) -> Any:
    """Send a request whose JSON is written out here (``swap`` puts raw JSON in place of
    string placeholders): values nested deeper than an encoder goes can still arrive."""
    body = {**params, "_meta": client.meta()}
    text = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": body}).decode()
    for placeholder, raw in swap.items():
        text = text.replace(f'"{placeholder}"', raw)
    decoded = jsonrpc.decode(text)
    assert isinstance(decoded, jsonrpc.Request)
    payload, _ = await client.server.respond(decoded, channel=client)
    response = orjson.loads(payload)
    assert client.checker is not None
    client.checker.response(method, response)
    return response


@pytest.mark.parametrize(
    ("name", "answers"),
    [
        ("book", {"elicit-1": {"action": "accept", "content": BOOKING, "x": "DEEP"}}),
        (
            "sample_then_ask",
            {
                "sample-1": {
                    "role": "assistant",
                    "model": "m",
                    "content": {"type": "text", "text": "hi"},
                    "_meta": {"x": "DEEP"},
                }
            },
        ),
    ],
)
@pytest.mark.parametrize("levels", [250, 300])
async def test_deeply_nested_input_responses_are_refused(
    wire: WireChecker, name: str, answers: dict[str, Any], levels: int
) -> None:
    app = build()

    @app.tool()
    async def sample_then_ask(ctx: Context) -> str:
        await ctx.sample("Say hi", max_tokens=5)
        answer = await ctx.elicit("Name?", Form(name=String()))
        return answer.action

    client = MemoryClient(app, checker=wire, capabilities={"elicitation": {}, "sampling": {}})
    params = {"name": name, "arguments": {"restaurant": "N"}, "inputResponses": answers}
    response = await _send_text(client, "tools/call", params, {"DEEP": _nested(levels)})
    assert response["error"]["code"] == -32602
    assert "inputResponses" in response["error"]["message"]
    assert "nested" in response["error"]["message"]


async def test_answers_too_large_for_the_state_are_refused_with_a_reason(client: MemoryClient) -> None:
    """An answer within the inputResponses limit but too large to carry in the next
    round's requestState fails the request with -32602 saying so (it was an internal
    error); a smaller answer then goes through. A handler remembering too much is the
    server's own fault: -32603 saying what."""
    long_name = {"name": {"action": "accept", "content": {"name": "x" * 100_000}}}
    response = await client.request(
        "tools/call", {"name": "wizard", "inputResponses": long_name}, malformed=True
    )
    assert response["error"]["code"] == -32602
    message = response["error"]["message"]
    assert "requestState" in message and "answer" in message and "bytes" in message
    short_name = {"name": {"action": "accept", "content": {"name": "x" * 1000}}}
    again = await client.request(
        "tools/call", {"name": "wizard", "inputResponses": short_name}, malformed=True
    )
    assert list(again["result"]["inputRequests"]) == ["color"]
    app = build()

    @app.tool()
    async def hoarder(ctx: Context) -> str:
        ctx.remember("bulk", lambda: "y" * 100_000)
        answer = await ctx.elicit("Name?", Form(name=String()))
        return answer.action

    own_fault = await MemoryClient(app, checker=client.checker).request("tools/call", {"name": "hoarder"})
    assert own_fault["error"]["code"] == -32603
    assert "the handler remembers" in own_fault["error"]["message"]


async def test_a_round_asks_no_more_questions_than_a_client_takes_the_rest_come_next() -> None:
    """A handler gathering more questions than one round may carry (MAX_INPUT_REQUESTS,
    what the client takes) has them asked over several rounds, in order; it sees every
    answer, once."""
    app = Server("survey", state_keys=KeyRing([bytes(range(7, 39))]))
    many = MAX_INPUT_REQUESTS + 8
    runs: list[int] = []

    @app.tool()
    async def survey(ctx: Context) -> str:
        runs.append(1)
        questions = [ctx.elicit(f"Question {i}?", Form(a=String()), key=f"q{i}") for i in range(many)]
        answers = await ctx.gather(*questions)
        return " ".join(str(a.content["a"]) if a.content else "-" for a in answers)

    script = Scripted.from_script({f"q{i}": {"content": {"a": f"a{i}"}} for i in range(many)})
    async with connect_memory(app, answerer=script, versions=["2026-07-28"]) as client:
        out = await client.call_tool("survey")
    assert out["content"][0]["text"] == " ".join(f"a{i}" for i in range(many))
    assert len(runs) == 3, "one round for the first batch, one for the rest, one to finish"
