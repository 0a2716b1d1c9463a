"""Elicitation in handlers over multi round-trip requests (2026-07-28), in memory: answers
typed, declined or cancelled, several rounds and questions, answers asked again, and the
questions a round holds. Every message is checked against the official schema."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.core.input_requests import MAX_INPUT_REQUESTS
from mcp_elicit.sealing import KeyRing
from mcp_elicit.transports.memory import connect_memory

from support.elicitation import BOOKING
from support.memory import MemoryClient, SessionClient, accept
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
