"""The batch hook: a round's elicitations reach an answerer with ``elicit_many`` together
(2026-07-28), everything else is answered as before, one at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from client.fakes import FakeTransport, discover, error, result
from mcp_elicit.client import Client, ElicitAnswer, Scripted
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import InvalidAnswer

pytestmark = pytest.mark.anyio


def form(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "integer", "minimum": 1}}, "required": [name]}


def ask(message: str, schema: Any = None, **params: Any) -> dict[str, Any]:
    body = {"mode": "form", "message": message, "requestedSchema": schema, **params}
    return {"method": "elicitation/create", "params": {k: v for k, v in body.items() if v is not None}}


class Round:
    """A modern server whose tool asks ``requests`` in one round, then completes."""

    def __init__(self, requests: dict[str, Any]) -> None:
        self.requests = requests
        self.calls: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        params = message.get("params", {})
        if message["method"] == "server/discover":
            return [discover(message)]
        if message["method"] == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            return [result(message, {"resultType": "complete", "tools": tools, "ttlMs": 0})]
        if message["method"] != "tools/call":
            return [error(message, -32601, "no")]
        self.calls.append(params)
        if "inputResponses" not in params:
            return [result(message, {"resultType": "input_required", "inputRequests": self.requests})]
        return [result(message, {"resultType": "complete", "content": []})]


class Batch:
    """Answers batches with ``answers`` (by key), single questions with ``single``."""

    modes = frozenset({"form", "url"})

    def __init__(self, answers: dict[str, ElicitAnswer], single: ElicitAnswer | None = None) -> None:
        self.answers = answers
        self.single = single or ElicitAnswer.cancel()
        self.batches: list[list[str]] = []
        self.singles: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.singles.append(request)
        return self.single

    async def elicit_many(self, requests: Sequence[ElicitationRequest]) -> list[ElicitAnswer]:
        self.batches.append([r.key for r in requests])
        return [self.answers[r.key] for r in requests]

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def _sample(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


async def test_every_elicitation_of_a_round_goes_to_elicit_many_together() -> None:
    server = Round(
        {
            "a": ask("First?", form("x")),
            "llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
            "b": ask("Second?", form("y")),
            "c": {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/"},
            },
        }
    )
    batch = Batch({"a": ElicitAnswer.accept(x=2), "b": ElicitAnswer.decline(), "c": ElicitAnswer.accept()})
    async with Client(FakeTransport(server), answerer=batch, sampling=_sample) as client:
        await client.call_tool("t")
    assert batch.batches == [["a", "b", "c"]]
    assert batch.singles == []
    answers = server.calls[1]["inputResponses"]
    assert list(answers) == ["a", "llm", "b", "c"]  # the round's own order
    assert answers["a"] == {"action": "accept", "content": {"x": 2}}
    assert answers["b"] == {"action": "decline"}
    assert answers["c"] == {"action": "accept"}
    assert answers["llm"]["model"] == "m"


async def test_one_elicitation_alone_goes_to_elicit() -> None:
    server = Round({"a": ask("First?", form("x"))})
    batch = Batch({}, single=ElicitAnswer.accept(x=1))
    async with Client(FakeTransport(server), answerer=batch) as client:
        await client.call_tool("t")
    assert batch.batches == []
    assert [r.key for r in batch.singles] == ["a"]
    assert server.calls[1]["inputResponses"] == {"a": {"action": "accept", "content": {"x": 1}}}


async def test_an_answer_from_the_batch_that_does_not_fit_is_asked_again_alone() -> None:
    server = Round({"a": ask("First?", form("x")), "b": ask("Second?", form("y"))})
    batch = Batch({"a": ElicitAnswer.accept(x=0), "b": ElicitAnswer.accept(y=3)}, ElicitAnswer.accept(x=5))
    async with Client(FakeTransport(server), answerer=batch) as client:
        await client.call_tool("t")
    assert batch.batches == [["a", "b"]]
    (again,) = batch.singles
    assert again.key == "a"
    assert again.problems[0].field == "x"
    assert server.calls[1]["inputResponses"] == {
        "a": {"action": "accept", "content": {"x": 5}},
        "b": {"action": "accept", "content": {"y": 3}},
    }


async def test_a_form_the_client_cannot_show_stays_out_of_the_batch() -> None:
    nested = {"type": "object", "properties": {"where": {"type": "object"}}}
    server = Round(
        {"a": ask("First?", form("x")), "bad": ask("Where?", nested), "b": ask("Second?", form("y"))}
    )
    batch = Batch({"a": ElicitAnswer.accept(x=1), "b": ElicitAnswer.accept(y=1)})
    reports: list[str] = []
    async with Client(FakeTransport(server), answerer=batch, report=reports.append) as client:
        await client.call_tool("t")
    assert batch.batches == [["a", "b"]]
    assert server.calls[1]["inputResponses"]["bad"] == {"action": "cancel"}
    assert "cannot show" in reports[0]


async def test_answerers_without_elicit_many_are_asked_one_at_a_time_as_before() -> None:
    server = Round({"a": ask("First?", form("x")), "b": ask("Second?", form("y"))})
    script = Scripted.from_script([{"content": {"x": 1}}, {"content": {"y": 2}}])
    async with Client(FakeTransport(server), answerer=script) as client:
        await client.call_tool("t")
    assert [key for key, _ in script.used] == ["a", "b"]
    assert server.calls[1]["inputResponses"] == {
        "a": {"action": "accept", "content": {"x": 1}},
        "b": {"action": "accept", "content": {"y": 2}},
    }


class Miscounting(Batch):
    """A batch answerer whose ``elicit_many`` returns ``out``, whatever it was asked."""

    def __init__(self, out: Any) -> None:
        super().__init__({})
        self.out = out

    async def elicit_many(self, requests: Sequence[ElicitationRequest]) -> Any:
        return self.out


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ([ElicitAnswer.cancel()], r"elicit_many\(\) returned 1 answer for 2 questions"),
        ([ElicitAnswer.cancel()] * 3, r"elicit_many\(\) returned 3 answers for 2 questions"),
        (None, r"elicit_many\(\) returned NoneType"),
        ({"a": {"action": "cancel"}, "b": {"action": "cancel"}}, r"elicit_many\(\) returned dict"),
        ("ab", r"elicit_many\(\) returned str"),
        ([5, {"action": "cancel"}], r"elicit_many\(\) returned int for question 'a'"),
    ],
)
async def test_an_elicit_many_that_does_not_answer_one_per_question_is_refused_saying_so(
    out: Any, expected: str
) -> None:
    """The answerer's own fault, named as such, and nothing sent. It was Python's own
    error from deep inside the client ('zip() argument 2 is shorter than argument 1',
    "'NoneType' object is not iterable"), or a dict's keys taken for answers and blamed on
    elicit(): 'the answerer's elicit() returned str'."""
    server = Round({"a": ask("First?", form("x")), "b": ask("Second?", form("y"))})
    async with Client(FakeTransport(server), answerer=Miscounting(out)) as client:
        with pytest.raises(TypeError, match=expected):
            await client.call_tool("t")
    assert len(server.calls) == 1


async def test_an_elicit_many_answer_with_an_action_that_does_not_exist_fails_naming_elicit_many() -> None:
    # the answerer's own mistake, not the person's: it was put to elicit() twice more, then
    # blamed on the form (FormValidationError), and elicit() was never the one that erred
    server = Round({"a": ask("First?", form("x")), "b": ask("Second?", form("y"))})
    answerer = Batch({"a": ElicitAnswer.cancel(), "b": ElicitAnswer("yes")})  # type: ignore[arg-type]
    async with Client(FakeTransport(server), answerer=answerer) as client:
        with pytest.raises(
            InvalidAnswer, match=r"^the answerer's elicit_many\(\) gave an invalid answer to "
        ) as raised:
            await client.call_tool("t")
    assert "question 'b' ('Second?')" in str(raised.value)
    assert str(raised.value).endswith("action must be accept, decline or cancel, not 'yes'")
    assert answerer.singles == []
    assert len(server.calls) == 1  # nothing sent
