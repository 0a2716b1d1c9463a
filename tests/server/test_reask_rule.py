"""One re-ask rule on both revisions: an elicitation answer that does not fit the form is
asked again once, with the reason; a second one that does not fit counts as ``cancel``.
On 2025-11-25 the handler waits in place; on 2026-07-28 each try is a round, and the
sealed ``requestState`` says which questions were already asked again. Clients here
answer badly every time, as a naive callback does. Every message is checked against the
official schema of its revision."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.core.input_requests import MAX_INPUT_REQUESTS
from mcp_elicit.sealing import KeyRing

from support.elicitation import BOOKING, build
from support.memory import MemoryClient, SessionClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

BOOK = {"name": "book", "arguments": {"restaurant": "Noma"}}
CANCELLED = "cancelled: ask again later"  # what the booking tool says for cancel
#: Answers that fit the revision's schema but not the booking form.
UNFIT = [
    {"guests": 40, "date": "2026-12-31"},
    {"guests": 2},
    {"guests": 2, "date": "31/12/2026"},
    {"guests": 2, "date": "2026-12-31", "seating": "roof"},
]


def always(content: dict[str, Any]) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    return lambda _key, _request: {"action": "accept", "content": content}


async def asked_2025(wire_2025: WireChecker, answers: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """The booking tool's text on a 2025-11-25 session answered with ``answers`` in turn
    (the last one again and again), and the message of every question asked."""
    client = SessionClient(build(), capabilities={"elicitation": {}}, checker=wire_2025)
    await client.open()
    given = iter(answers)
    client.answer = lambda _k, _r: {"action": "accept", "content": next(given, answers[-1])}
    result = await client.result("tools/call", BOOK)
    messages = [m["params"]["message"] for m in client.asked if m["method"] == "elicitation/create"]
    return result["content"][0]["text"], messages


async def asked_2026(wire: WireChecker, answers: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """The same on 2026-07-28: each try is a round, retried with the state it carries."""
    client = MemoryClient(build(), checker=wire)
    given = iter(answers)
    final, rounds = await client.rounds(
        "tools/call", BOOK, lambda k, r: {"action": "accept", "content": next(given, answers[-1])}
    )
    messages = [r["inputRequests"]["elicit-1"]["params"]["message"] for r in rounds if r.get("inputRequests")]
    return final["result"]["content"][0]["text"], messages


ASKED = {"2025-11-25": asked_2025, "2026-07-28": asked_2026}


@pytest.fixture(params=sorted(ASKED))
def asked(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """How the booking tool is asked on one revision, with that revision's schema check."""
    checker = WireChecker.load(request.param)
    return lambda answers: ASKED[request.param](checker, answers)


@pytest.mark.parametrize("unfit", UNFIT)
async def test_an_answer_that_never_fits_is_asked_again_once_then_counts_as_cancel(
    asked: Callable[..., Any], unfit: dict[str, Any]
) -> None:
    text, messages = await asked([unfit])
    assert text == CANCELLED, "a second answer that does not fit is cancel, not a third try"
    assert len(messages) == 2, messages
    assert messages[0].endswith("how many, and when?") and "not accepted" not in messages[0]
    assert messages[1].startswith("Your previous answer was not accepted: ")
    assert messages[1].endswith("how many, and when?")


async def test_a_good_second_answer_is_taken(asked: Callable[..., Any]) -> None:
    text, messages = await asked([UNFIT[0], BOOKING])
    assert text == "Noma: 4 on 2026-12-31 patio"
    assert len(messages) == 2


async def test_both_revisions_log_the_cancel_naming_the_fields_not_the_answer(
    asked: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    secret = {"guests": 2, "date": "hunter2-not-a-date"}
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        text, _ = await asked([secret])
    assert text == CANCELLED
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert any("did not fit the form twice (in date); treating it as cancel" in m for m in said), said
    assert not any("hunter2" in m for m in said), said


async def retry(client: MemoryClient, state: str, responses: Any) -> dict[str, Any]:
    """A retry of the booking with ``responses`` (sent as they are, even malformed)."""
    params: dict[str, Any] = {**BOOK, "requestState": state}
    if responses is not None:
        params["inputResponses"] = responses
    response = await client.request("tools/call", params, malformed=True)
    assert "result" in response, response
    return response["result"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "responses",
    [{"elicit-1": {"action": "maybe"}}, [1, 2], "text"],
    ids=["bad-action", "responses-a-list", "responses-a-string"],
)
async def test_unreadable_answers_count_too(wire: WireChecker, responses: Any) -> None:
    """Answers the schema itself refuses (a bad action, an inputResponses that is not an
    object) are asked again once as well, then cancel: a client sending the same again
    does not go round forever. (An answer that is not an object is -32602:
    test_retry_hostile.py.)"""
    client = MemoryClient(build(), checker=wire)
    first = await client.result("tools/call", BOOK)
    again = await retry(client, first["requestState"], responses)
    assert again["resultType"] == "input_required"
    assert "Your previous answer " in again["inputRequests"]["elicit-1"]["params"]["message"]
    final = await retry(client, again["requestState"], responses)
    assert final.get("resultType") == "complete", final
    assert final["content"][0]["text"] == CANCELLED


async def test_a_retry_without_the_answer_does_not_start_the_count_over(wire: WireChecker) -> None:
    """Asked again, then retried with the state alone: the question is asked once more (a
    client may answer later), still on its second try; the next answer that does not fit
    is cancel."""
    client = MemoryClient(build(), checker=wire)
    unfit = {"elicit-1": {"action": "accept", "content": UNFIT[0]}}
    first = await client.result("tools/call", BOOK)
    again = await retry(client, first["requestState"], unfit)
    waiting = await retry(client, again["requestState"], None)
    assert waiting["resultType"] == "input_required"
    assert "elicit-1" in waiting["inputRequests"]
    final = await retry(client, waiting["requestState"], unfit)
    assert final["content"][0]["text"] == CANCELLED


async def test_the_state_records_no_bad_answer_only_which_questions_were_asked_again(
    wire: WireChecker,
) -> None:
    """What a round asked again is recorded by key alone: an answer that does not fit is
    never kept, so a large one does not grow the state that passes through the client."""
    client = MemoryClient(build(), checker=wire)
    first = await client.result("tools/call", BOOK)
    huge = {"elicit-1": {"action": "accept", "content": {"guests": 2, "date": "x" * 20_000}}}
    again = await retry(client, first["requestState"], huge)
    assert again["resultType"] == "input_required"
    assert len(again["requestState"]) < len(first["requestState"]) + 64


def survey_app() -> Server:
    app = Server("survey", state_keys=KeyRing([bytes(range(3, 35))]))

    @app.tool()
    async def survey(ctx: Context) -> str:
        questions = [
            ctx.elicit(f"Question {i}?", Form(a=String(max_length=3)), key=f"q{i}")
            for i in range(MAX_INPUT_REQUESTS)
        ]
        answers = await ctx.gather(*questions)
        return " ".join(a.action for a in answers)

    return app


async def test_a_full_round_of_questions_answered_badly_cancels_each_once(wire: WireChecker) -> None:
    """Every question of a full round (``MAX_INPUT_REQUESTS``) asked again at once: each
    is asked twice, then each counts as cancel; the state holds them all."""
    client = MemoryClient(survey_app(), checker=wire)
    final, rounds = await client.rounds("tools/call", {"name": "survey"}, always({"a": "far too long"}))
    assert final["result"]["content"][0]["text"] == " ".join(["cancel"] * MAX_INPUT_REQUESTS)
    assert [len(r.get("inputRequests", {})) for r in rounds] == [MAX_INPUT_REQUESTS, MAX_INPUT_REQUESTS, 0]


def pair_app() -> Server:
    app = Server("pair", state_keys=KeyRing([bytes(range(5, 37))]))

    @app.tool()
    async def pair(ctx: Context) -> str:
        a, b = await ctx.gather(
            ctx.elicit("A?", Form(a=String(max_length=3)), key="a"),
            ctx.elicit("B?", Form(b=String(max_length=3)), key="b"),
        )
        return f"{a.action} {a.content} {b.action} {b.content}"

    return app


def bad_once_and_bad_always() -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    """``a`` answered badly once, then well; ``b`` answered badly every time."""
    tries: dict[str, int] = {}

    def answer(key: str, _request: dict[str, Any]) -> dict[str, Any]:
        tries[key] = tries.get(key, 0) + 1
        value = "ok" if key == "a" and tries[key] > 1 else "far too long"
        return {"action": "accept", "content": {key: value}}

    return answer


async def test_two_questions_together_each_keep_their_own_count(wire: WireChecker) -> None:
    """One answered well on its second try, the other badly twice: the first is taken,
    the second is cancel, in one request."""
    client = MemoryClient(pair_app(), checker=wire)
    final, rounds = await client.rounds("tools/call", {"name": "pair"}, bad_once_and_bad_always())
    assert final["result"]["content"][0]["text"] == "accept {'a': 'ok'} cancel None"
    assert [sorted(r.get("inputRequests", {})) for r in rounds] == [["a", "b"], ["a", "b"], []]


async def test_two_questions_together_on_2025_11_25(wire_2025: WireChecker) -> None:
    client = SessionClient(pair_app(), capabilities={"elicitation": {}}, checker=wire_2025)
    await client.open()
    answer = bad_once_and_bad_always()
    client.answer = lambda _k, r: answer(r["params"]["message"][-2].lower(), r)
    result = await client.result("tools/call", {"name": "pair"})
    assert result["content"][0]["text"] == "accept {'a': 'ok'} cancel None"
