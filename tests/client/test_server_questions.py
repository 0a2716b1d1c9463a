"""2025-11-25: how the client answers the server's own requests, against a real server
process (``asking_server.py`` over stdio) that sends them raw, as a test writes them: what
is refused (with which JSON-RPC code, naming what), what reaches the person, what a
cancellation withdraws. Everything the client sent must fit the revision's schema."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.stdio_client import StdioTransport

from support.wire import WireChecker

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("asking_server.py")
REVISION = "2025-11-25"


class Person:
    """An answerer that writes down what it is asked, takes ``delay`` seconds, and then
    accepts (a URL) or declines (a form); ``withdrawn`` counts questions taken away."""

    def __init__(self, modes: Sequence[str] = ("form", "url"), delay: float = 0.0) -> None:
        self.modes = frozenset(modes)
        self.delay = delay
        self.asked: list[ElicitationRequest] = []
        self.withdrawn = 0

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.withdrawn += 1
            raise
        return ElicitAnswer.accept() if request.mode == "url" else ElicitAnswer.decline()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


def ask(rid: object, params: object, method: str = "elicitation/create") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def form(properties: dict[str, Any], message: object = "Your details?") -> dict[str, Any]:
    return {
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties},
    }


async def answers(
    tmp_path: Path, plan: list[dict[str, Any]], person: Person, reports: list[str] | None = None, **more: Any
) -> list[dict[str, Any]]:
    """Run ``tools/call`` against the asking server playing ``plan``; the client's responses
    to the server's requests, as the server received them."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"ask": plan, **more}), encoding="utf-8")
    recorder = Recorder()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    transport = StdioTransport([sys.executable, str(SERVER), str(path)], env=env, trace=recorder)
    report = reports.append if reports is not None else (lambda _: None)
    async with Client(transport, answerer=person, versions=[REVISION], timeout=20, report=report) as client:
        result = await client.call_tool("t")
    assert recorder.check(WireChecker.load(REVISION)) > 0
    got: list[dict[str, Any]] = json.loads(result["content"][0]["text"])
    return got


@pytest.mark.parametrize(
    ("properties", "named"),
    [
        ({"a": {"type": "object", "properties": {"b": {"type": "string"}}}}, "field 'a': nested objects"),
        ({"a": {"type": "array", "items": {"type": "object"}}}, "field 'a': an array must be a multi-select"),
        ({"a": {"type": "blob"}}, "field 'a': type 'blob' is not allowed"),
        ({"a": {"$ref": "#/$defs/b"}}, "field 'a': references ($ref) are not allowed"),
    ],
    ids=["nested-object", "array-of-objects", "unknown-type", "ref"],
)
async def test_a_form_outside_the_flat_subset_is_invalid_params_naming_the_field(
    tmp_path: Path, properties: dict[str, Any], named: str
) -> None:
    """Both revisions limit a form to flat fields of primitive types; one outside that does
    not fit ``ElicitRequestFormParams``. Nobody is asked, and the server hears why: -32602
    naming the field (it was answered ``cancel``, as if the person had dismissed it). The
    client's user is still told."""
    person, reports = Person(), list[str]()
    got = await answers(tmp_path, [ask(1, form(properties))], person, reports)
    assert [m["id"] for m in got] == [1]
    assert "result" not in got[0]
    assert got[0]["error"]["code"] == -32602
    assert named in got[0]["error"]["message"]
    assert "requestedSchema" in got[0]["error"]["message"]
    assert person.asked == []
    assert len(reports) == 1 and named in reports[0]


@pytest.mark.parametrize(
    "schema", [None, "a form", {"type": "string"}], ids=["missing", "text", "not-object"]
)
async def test_a_form_without_a_readable_requested_schema_is_invalid_params(
    tmp_path: Path, schema: object
) -> None:
    params: dict[str, Any] = {"mode": "form", "message": "Your details?"}
    if schema is not None:
        params["requestedSchema"] = schema
    person = Person()
    got = await answers(tmp_path, [ask(1, params)], person, [])
    assert got[0]["error"]["code"] == -32602
    assert "requestedSchema" in got[0]["error"]["message"]
    assert person.asked == []


@pytest.mark.parametrize("message", [None, 7, ["Your", "details?"]], ids=["missing", "number", "list"])
@pytest.mark.parametrize("mode", ["form", "url"])
async def test_an_elicitation_without_its_message_is_invalid_params(
    tmp_path: Path, message: object, mode: str
) -> None:
    """Every elicitation carries a text ``message`` saying what is asked and why; one
    without it left the person a question with nothing to say what it was for."""
    if mode == "form":
        params = form({"name": {"type": "string"}}, message)
    else:
        params = {"mode": "url", "message": message, "url": "https://example.com/", "elicitationId": "e1"}
    if message is None:
        del params["message"]
    person = Person()
    got = await answers(tmp_path, [ask(1, params)], person)
    assert got[0]["error"]["code"] == -32602
    assert "message" in got[0]["error"]["message"]
    assert person.asked == []


async def test_a_url_elicitation_without_its_id_is_invalid_params(tmp_path: Path) -> None:
    """At 2025-11-25 a URL-mode elicitation names its step (``elicitationId``), the name
    its completion notice gives; one without it was put to the person."""
    params = {"mode": "url", "message": "Sign in", "url": "https://example.com/"}
    person = Person()
    got = await answers(tmp_path, [ask(1, params), ask(2, {**params, "elicitationId": 5})], person)
    assert [m["error"]["code"] for m in got] == [-32602, -32602]
    assert all("elicitationId" in m["error"]["message"] for m in got)
    assert person.asked == []


class OnThePage(Person):
    """A person who opens every URL and stays on the page until the server says the step is
    finished (``request.finished``)."""

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        assert request.finished is not None
        await asyncio.wait_for(request.finished(), 10)
        return ElicitAnswer.accept()


async def test_a_url_elicitation_reusing_the_id_of_a_step_still_open_is_invalid_params(
    tmp_path: Path,
) -> None:
    """An ``elicitationId`` names one step: a second question under the id of a step still
    open is refused (-32602 naming the id) before the person sees it. Both were asked, and
    the first step's completion notice finished the second too (or, the first over, the
    second never heard of its own)."""
    url = {"mode": "url", "message": "Sign in", "elicitationId": "e1"}
    done = {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e1"},
    }
    plan = [
        ask(1, {**url, "url": "https://example.com/a"}),
        ask(2, {**url, "url": "https://example.com/b"}),
        {"sleep": 0.5},
        done,
    ]
    person = OnThePage()
    got = await answers(tmp_path, plan, person)
    by_id = {m["id"]: m for m in got}
    assert by_id[1]["result"] == {"action": "accept"}
    assert by_id[2]["error"]["code"] == -32602
    assert "'e1'" in by_id[2]["error"]["message"]
    assert [r.url for r in person.asked] == ["https://example.com/a"]


async def test_an_error_about_a_huge_question_quotes_it_cut_short(tmp_path: Path) -> None:
    """An error about a question names it, its message and its URL, each cut short: a
    megabyte of message, URL or id went back to the server whole in the error's message
    (and into the client's log)."""
    big = "x" * 1_000_000
    params = {"mode": "url", "message": big, "url": f"https://example.com/{big}", "elicitationId": "e1"}
    person, reports = Person(modes=["form"]), list[str]()
    got = await answers(
        tmp_path, [ask(big, params), ask(2, form({"a": {"type": "object"}}, big))], person, reports
    )
    assert [m["error"]["code"] for m in got] == [-32602, -32602]
    assert "url mode" in got[0]["error"]["message"]
    assert all(len(m["error"]["message"]) < 2000 for m in got)
    assert len(reports) == 1 and len(reports[0]) < 2000
    assert person.asked == []


@pytest.mark.parametrize(
    ("properties", "named"),
    [
        (
            {f"f{i}": {"type": "string"} for i in range(257)},
            "the form has 257 fields; this client reads at most 256",
        ),
        (
            {"a": {"type": "string", "enum": [str(i) for i in range(100_001)]}},
            "field 'a': it offers 100,001 options; this client reads at most 100,000 in a choice",
        ),
    ],
    ids=["fields", "options"],
)
async def test_a_form_too_big_to_answer_is_invalid_params_naming_the_limit(
    tmp_path: Path, properties: dict[str, Any], named: str
) -> None:
    """A form larger than any a person answers is refused before it is read whole (a form
    of 100,000 fields held the client's event loop for seconds): the server is told which
    limit it passed."""
    person = Person()
    got = await answers(tmp_path, [ask(1, form(properties))], person, [])
    assert got[0]["error"]["code"] == -32602
    assert named in got[0]["error"]["message"]
    assert person.asked == []


async def test_a_long_choice_a_server_of_this_toolkit_may_build_is_asked(tmp_path: Path) -> None:
    values = [f"o{n}" for n in range(40_000)]  # as the web answerer's own test offers
    person = Person()
    got = await answers(tmp_path, [ask(1, form({"many": {"type": "string", "enum": values}}))], person)
    assert got == [{"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}]
    assert len(person.asked) == 1
