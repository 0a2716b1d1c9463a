"""Interop: the mcp-elicit client completes elicitation flows against servers built with the
official TypeScript SDK, over stdio and Streamable HTTP.

* v2 (``@modelcontextprotocol/server`` 2.4.0, tests/peers/ts/server_v2.mjs) at 2026-07-28
  (``input_required`` results, ``requestState``) and at 2025-11-25 (``serveStdio``'s legacy
  arm; over HTTP a sessionful arm behind ``isLegacyRequest``).
* v1 (``@modelcontextprotocol/sdk`` 1.32.2, tests/peers/ts/server_v1.mjs), 2025-11-25 only:
  server-initiated ``elicitation/create``, ``notifications/elicitation/complete`` and the
  ``-32042`` URL-elicitation-required error.

Every message of every exchange, both ways, is checked against the official schema of the
revision it belongs to. Node's output (the HTTP servers' log, a stdio server's stderr) must
hold no error. The peers are installed from tests/peers/ts/package-lock.json with the Node 22
of tools/node22 (``make peers``; the ``ts_node`` fixture does it when they are missing);
without them these tests skip, saying why.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Answerer, Client, ElicitAnswer, ElicitationRequest, Scripted
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.peers import TS_PEERS, peer_http, ts_node
from support.procs import ROOT
from support.wire import WireChecker

__all__ = ["ts_node"]  # a fixture

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SERVERS = {"v1": TS_PEERS / "server_v1.mjs", "v2": TS_PEERS / "server_v2.mjs"}
TOOLS = {
    "v1": {"plan_trip", "connect_calendar", "connect_bank"},
    "v2": {"plan_trip", "pick_dish", "connect_calendar"},
}

#: The answer to plan_trip's form: meal is left out (the client fills its default in), and
#: window says false over a default of true.
TRIP = {"travellers": 2, "date": "2026-12-24", "cabin": "business", "window": False}
TRIP_SENT = {**TRIP, "meal": "standard"}
#: How long an answerer waits for the server to say a URL step is finished.
FINISH_WAIT = 3.0


@dataclass(frozen=True)
class Peer:
    sdk: Literal["v1", "v2"]
    kind: Literal["stdio", "http"]
    revision: str

    @property
    def modern(self) -> bool:
        return self.revision == MODERN


V2 = [Peer("v2", kind, revision) for kind in ("stdio", "http") for revision in (MODERN, LEGACY)]
V1 = [Peer("v1", kind, LEGACY) for kind in ("stdio", "http")]


def _id(peer: Peer) -> str:
    return f"{peer.sdk}-{peer.kind}-{peer.revision}"


class Tape(Recorder):
    """A ``Recorder`` that also keeps everything in the order it happened, both ways."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        super().__call__(direction, message)
        self.log.append((direction, dict(message)))

    def requests(self, method: str) -> list[dict[str, Any]]:
        """The client's requests of ``method``, in order."""
        return [m for m in self.sent if m.get("method") == method and "id" in m]

    def asked(self, method: str = "elicitation/create") -> list[dict[str, Any]]:
        """The server's own requests of ``method`` (2025-11-25), in order."""
        return [m for m in self.received if m.get("method") == method and "id" in m]

    def answer_to(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The response that came back for one of the client's requests."""
        (reply,) = [m for m in self.received if "method" not in m and m.get("id") == request["id"]]
        return reply

    def answers(self) -> list[dict[str, Any]]:
        """What the client answered the server's elicitation/create requests (2025-11-25)."""
        ids = {m["id"] for m in self.asked()}
        return [m["result"] for m in self.sent if "method" not in m and m.get("id") in ids]

    def notices(self) -> list[str]:
        """The elicitationIds of the completion notices received."""
        return [
            m["params"]["elicitationId"]
            for m in self.received
            if m.get("method") == "notifications/elicitation/complete"
        ]

    def validate(self, revision: str) -> int:
        """Check every message, both ways, against the schema of its revision: the era probe
        (``server/discover`` and its answer) is 2026-07-28 whatever the outcome, the rest
        ``revision``. The number checked."""
        checkers = {r: WireChecker.load(r) for r in {revision, MODERN}}
        by_client = {m["id"]: m["method"] for d, m in self.log if d == "send" and "method" in m and "id" in m}
        by_server = {
            m["id"]: m["method"] for d, m in self.log if d == "receive" and "method" in m and "id" in m
        }
        for direction, message in self.log:
            asked = by_client if direction == "receive" else by_server
            # An error answering no request in particular (HTTP 400 to the probe) has no id.
            method = message.get("method") or asked.get(message.get("id"), "")
            checkers[MODERN if method == "server/discover" else revision].outgoing(message, method)
        return len(self.log)


class Patient:
    """Answers from a script, but first, for a URL step the server will say is finished
    (``request.finished``), waits up to ``FINISH_WAIT`` for it to say so, as a person's
    client would while they are on the page."""

    def __init__(self, script: Scripted) -> None:
        self.script = script
        self.heard: list[str | None] = []

    @property
    def modes(self) -> frozenset[str]:
        return self.script.modes

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        if request.mode == "url" and request.finished is not None:
            try:
                async with asyncio.timeout(FINISH_WAIT):
                    await request.finished()
                self.heard.append(request.elicitation_id)
            except TimeoutError:
                pass
        return await self.script.elicit(request)

    async def url_done(self, request: ElicitationRequest) -> None:
        await self.script.url_done(request)


def _quiet(output: str) -> None:
    """Node said nothing about an error (the servers log their errors to stderr)."""
    assert "error" not in output.lower(), output


def _node_http(node: Path, sdk: str, log: Path) -> Iterator[str]:
    with peer_http(lambda port: [str(node), str(SERVERS[sdk]), "--http", str(port)], log) as url:
        yield url
    _quiet(log.read_text(errors="replace"))


@pytest.fixture(scope="module")
def v2_http(ts_node: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The v2 server over Streamable HTTP on a free loopback port, both eras."""
    yield from _node_http(ts_node, "v2", tmp_path_factory.mktemp("ts") / "v2-http.log")


@pytest.fixture(scope="module")
def v1_http(ts_node: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The v1 server over Streamable HTTP on a free loopback port, sessionful."""
    yield from _node_http(ts_node, "v1", tmp_path_factory.mktemp("ts") / "v1-http.log")


@dataclass
class Session:
    client: Client
    tape: Tape
    notes: list[tuple[str, dict[str, Any]]]


@asynccontextmanager
async def connected(
    request: pytest.FixtureRequest, node: Path, peer: Peer, answerer: Answerer, *, auto: bool = False
) -> AsyncIterator[Session]:
    """A client connected to ``peer`` (at ``peer.revision``, or settling it itself when
    ``auto``); on the way out, every message is checked and node's output must be clean."""
    tape = Tape()
    notes: list[tuple[str, dict[str, Any]]] = []
    transport: HttpTransport | StdioTransport
    if peer.kind == "http":
        transport = HttpTransport(request.getfixturevalue(f"{peer.sdk}_http"), trace=tape)
    else:
        transport = StdioTransport([str(node), str(SERVERS[peer.sdk])], cwd=str(ROOT), trace=tape)
    options: dict[str, Any] = {} if auto else {"versions": [peer.revision]}
    async with Client(
        transport, answerer=answerer, on_notification=lambda m, p: notes.append((m, dict(p))), **options
    ) as client:
        assert client.revision == peer.revision
        yield Session(client, tape, notes)
    if isinstance(transport, StdioTransport):
        _quiet(transport.stderr_tail())
    assert tape.validate(peer.revision) > 0


def _position(tape: Tape, direction: str, method: str | None, rid: object = None) -> int:
    """Where in the tape the first message going ``direction`` with this method (None: a
    response) and, when given, this id is."""
    for i, (way, message) in enumerate(tape.log):
        if way == direction and message.get("method") == method and rid in (None, message.get("id")):
            return i
    raise AssertionError(f"no {direction} {method or 'response'} {rid!r} in the tape")


def _text(result: Mapping[str, Any]) -> str:
    assert not result.get("isError"), result
    (block,) = result["content"]
    return str(block["text"])


def _script(*entries: Mapping[str, Any]) -> Scripted:
    return Scripted.from_script(list(entries))


@pytest.fixture(params=[*V2, *V1], ids=_id)
def peer(request: pytest.FixtureRequest) -> Peer:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=V2, ids=_id)
def v2_peer(request: pytest.FixtureRequest) -> Peer:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=V1, ids=_id)
def v1_peer(request: pytest.FixtureRequest) -> Peer:
    return request.param  # type: ignore[no-any-return]


# ---- forms ------------------------------------------------------------------------------


async def test_a_form_with_every_field_kind_arrives_with_its_json_types(
    request: pytest.FixtureRequest, ts_node: Path, peer: Peer
) -> None:
    script = _script({"fields": ["travellers", "date", "cabin"], "content": TRIP})
    async with connected(request, ts_node, peer, script) as s:
        tools = {t["name"] for t in await s.client.list_tools()}
        out = await s.client.call_tool("plan_trip", {})
    assert tools == TOOLS[peer.sdk]
    assert script.reports == []
    echoed = json.loads(_text(out))
    assert echoed["content"] == TRIP_SENT
    content = echoed["content"]
    assert type(content["travellers"]) is int and type(content["window"]) is bool
    # What the TypeScript handler saw: a JS number, a boolean, strings.
    assert echoed["types"] == {
        "travellers": "number",
        "date": "string",
        "cabin": "string",
        "window": "boolean",
        "meal": "string",
    }
    calls = s.tape.requests("tools/call")
    if peer.modern:
        assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
        first = s.tape.answer_to(calls[0])["result"]
        assert first["resultType"] == "input_required"
        asked = first["inputRequests"]["trip"]["params"]
        assert calls[1]["params"]["inputResponses"] == {"trip": {"action": "accept", "content": TRIP_SENT}}
    else:
        assert len(calls) == 1
        (question,) = s.tape.asked()
        asked = question["params"]
        assert s.tape.answers() == [{"action": "accept", "content": TRIP_SENT}]
    fields = asked["requestedSchema"]["properties"]
    assert fields["cabin"]["oneOf"][1] == {"const": "business", "title": "Business"}
    assert (fields["window"]["default"], fields["meal"]["default"]) == (True, "standard")


async def test_decline_and_cancel_come_back_as_distinct_results(
    request: pytest.FixtureRequest, ts_node: Path, peer: Peer
) -> None:
    script = _script(
        {"fields": ["travellers"], "action": "decline", "once": True},
        {"fields": ["travellers"], "action": "cancel", "once": True},
    )
    async with connected(request, ts_node, peer, script) as s:
        declined = await s.client.call_tool("plan_trip", {})
        cancelled = await s.client.call_tool("plan_trip", {})
    assert _text(declined) == "trip: declined, nothing booked"
    assert _text(cancelled) == "trip: cancelled, ask again later"
    if peer.modern:
        retries = [c["params"].get("inputResponses") for c in s.tape.requests("tools/call")]
        assert retries == [None, {"trip": {"action": "decline"}}, None, {"trip": {"action": "cancel"}}]
    else:
        assert s.tape.answers() == [{"action": "decline"}, {"action": "cancel"}]


# ---- two rounds (v2) --------------------------------------------------------------------


async def test_the_second_question_depends_on_the_first(
    request: pytest.FixtureRequest, ts_node: Path, v2_peer: Peer
) -> None:
    script = _script(
        {"fields": ["cuisine"], "content": {"cuisine": "japanese"}},
        {"fields": ["dish"], "content": {"dish": "ramen"}},
    )
    async with connected(request, ts_node, v2_peer, script) as s:
        out = await s.client.call_tool("pick_dish", {})
    assert _text(out) == "dish: ramen (japanese)"
    calls = s.tape.requests("tools/call")
    if v2_peer.modern:
        assert len(calls) == 3 and len({c["id"] for c in calls}) == 3
        first, second = (s.tape.answer_to(c)["result"] for c in calls[:2])
        assert "requestState" not in first and "requestState" not in calls[1]["params"]
        assert calls[1]["params"]["inputResponses"] == {
            "cuisine": {"action": "accept", "content": {"cuisine": "japanese"}}
        }
        dish = second["inputRequests"]["dish"]["params"]
        assert dish["message"] == "Which japanese dish?"
        assert dish["requestedSchema"]["properties"]["dish"]["enum"] == ["ramen", "tempura"]
        # The sealed state goes back exactly as it came, with the new round's answer only.
        assert isinstance(second["requestState"], str) and second["requestState"]
        assert calls[2]["params"]["requestState"] == second["requestState"]
        assert calls[2]["params"]["inputResponses"] == {
            "dish": {"action": "accept", "content": {"dish": "ramen"}}
        }
    else:
        # The SDK's legacy shim turns each input_required round into an elicitation/create.
        assert len(calls) == 1
        asked = s.tape.asked()
        assert [a["params"]["message"] for a in asked] == ["Which cuisine?", "Which japanese dish?"]
        assert s.tape.answers() == [
            {"action": "accept", "content": {"cuisine": "japanese"}},
            {"action": "accept", "content": {"dish": "ramen"}},
        ]


# ---- URL mode ---------------------------------------------------------------------------


async def test_a_url_step_accepted_and_declined(
    request: pytest.FixtureRequest, ts_node: Path, v2_peer: Peer
) -> None:
    script = _script(
        {"mode": "url", "action": "accept", "once": True},
        {"mode": "url", "action": "decline", "once": True},
    )
    async with connected(request, ts_node, v2_peer, script) as s:
        accepted = await s.client.call_tool("connect_calendar", {"provider": "work"})
        declined = await s.client.call_tool("connect_calendar", {"provider": "work"})
    assert _text(accepted) == "calendar: work connected"
    assert _text(declined) == "calendar: work not connected (decline)"
    assert [(e.mode, e.action) for _, e in script.used] == [("url", "accept"), ("url", "decline")]
    calls = s.tape.requests("tools/call")
    if v2_peer.modern:
        asked = s.tape.answer_to(calls[0])["result"]["inputRequests"]["consent"]["params"]
        assert asked == {
            "mode": "url",
            "message": "Grant work calendar access",
            "url": "https://calendar.example.com/consent/work",
        }
        retries = [c["params"].get("inputResponses") for c in calls]
        assert retries == [None, {"consent": {"action": "accept"}}, None, {"consent": {"action": "decline"}}]
    else:
        asked = [a["params"] for a in s.tape.asked()]
        assert all(a["mode"] == "url" and isinstance(a.get("elicitationId"), str) for a in asked)
        assert s.tape.answers() == [{"action": "accept"}, {"action": "decline"}]


async def test_the_completion_notice_reaches_the_client(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    script = _script({"mode": "url", "action": "accept"})
    async with connected(request, ts_node, v1_peer, script) as s:
        out = await s.client.call_tool("connect_calendar", {"provider": "home"})
    (asked,) = s.tape.asked()
    eid = asked["params"]["elicitationId"]
    assert _text(out) == f"calendar: home connected ({eid})"
    assert s.tape.notices() == [eid]
    assert s.notes == [("notifications/elicitation/complete", {"elicitationId": eid})]


@pytest.mark.parametrize("v1_peer", V1, ids=_id)
async def test_a_waiting_answerer_hears_that_the_url_step_is_finished(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    """The v1 server sends notifications/elicitation/complete 150 ms after asking, while its
    elicitation/create is unanswered; ``request.finished`` must return then, not time out."""
    patient = Patient(_script({"mode": "url", "action": "accept"}))
    async with connected(request, ts_node, v1_peer, patient) as s:
        out = await s.client.call_tool("connect_calendar", {"provider": "home"})
    (asked,) = s.tape.asked()
    eid = asked["params"]["elicitationId"]
    assert _text(out) == f"calendar: home connected ({eid})"
    assert patient.heard == [eid]
    # The answer left after the notice came in, not before.
    assert _position(s.tape, "receive", "notifications/elicitation/complete") < _position(
        s.tape, "send", None, asked["id"]
    )


async def test_url_elicitation_required_waits_for_the_notice_then_retries(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    script = _script({"mode": "url", "action": "accept", "await_completion": True})
    async with connected(request, ts_node, v1_peer, script) as s:
        out = await s.client.call_tool("connect_bank", {"account": "savings"})
    assert _text(out) == "bank: savings linked, balance 42"
    first, retry = s.tape.requests("tools/call")
    assert first["id"] != retry["id"] and first["params"] == retry["params"]
    error = s.tape.answer_to(first)["error"]
    assert error["code"] == -32042
    (wanted,) = error["data"]["elicitations"]
    assert wanted["url"].startswith("https://bank.example.com/link?state=")
    assert s.tape.notices() == [wanted["elicitationId"]]
    # The retry went out only once the server said the page was done.
    assert _position(s.tape, "receive", "notifications/elicitation/complete") < _position(
        s.tape, "send", "tools/call", retry["id"]
    )
    assert [entry.mode for _, entry in script.used] == ["url"]


async def test_a_declined_url_elicitation_required_ends_the_call_with_the_error(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    script = _script({"mode": "url", "action": "decline"})
    async with connected(request, ts_node, v1_peer, script) as s:
        with pytest.raises(URLElicitationRequired) as caught:
            await s.client.call_tool("connect_bank", {"account": "checking"})
    assert caught.value.code == -32042
    assert "Link your bank account first" in caught.value.message
    assert "the user answered decline" in caught.value.message
    assert caught.value.data["elicitations"][0]["mode"] == "url"
    assert len(s.tape.requests("tools/call")) == 1


# ---- era detection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "peer",
    [
        Peer("v2", "http", MODERN),
        Peer("v2", "stdio", MODERN),
        Peer("v1", "http", LEGACY),
        Peer("v1", "stdio", LEGACY),
    ],
    ids=lambda p: f"{p.sdk}-{p.kind}",
)
async def test_without_versions_the_client_finds_each_servers_era(
    request: pytest.FixtureRequest, ts_node: Path, peer: Peer
) -> None:
    script = _script({"fields": ["travellers"], "content": TRIP})
    async with connected(request, ts_node, peer, script, auto=True) as s:
        out = await s.client.call_tool("plan_trip", {})
    assert json.loads(_text(out))["content"] == TRIP_SENT
    methods = s.tape.methods()
    assert methods[0] == "server/discover"
    assert (methods[1] == "initialize") is (peer.revision == LEGACY)
