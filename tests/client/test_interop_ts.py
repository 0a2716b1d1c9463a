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

import json
from pathlib import Path

import pytest

from client.ts_peer import (
    LEGACY,
    MODERN,
    TOOLS,
    V1,
    Patient,
    Peer,
    connected,
    peer,
    peer_id,
    position_of,
    scripted,
    tool_text,
    v1_http,
    v1_peer,
    v2_http,
    v2_peer,
)
from mcp_elicit.errors import URLElicitationRequired

from support.peers import ts_node

__all__ = ["peer", "ts_node", "v1_http", "v1_peer", "v2_http", "v2_peer"]  # fixtures

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: The answer to plan_trip's form: meal is left out (the client fills its default in), and
#: window says false over a default of true.
TRIP = {"travellers": 2, "date": "2026-12-24", "cabin": "business", "window": False}
TRIP_SENT = {**TRIP, "meal": "standard"}


# ---- forms ------------------------------------------------------------------------------


async def test_a_form_with_every_field_kind_arrives_with_its_json_types(
    request: pytest.FixtureRequest, ts_node: Path, peer: Peer
) -> None:
    script = scripted({"fields": ["travellers", "date", "cabin"], "content": TRIP})
    async with connected(request, ts_node, peer, script) as s:
        tools = {t["name"] for t in await s.client.list_tools()}
        out = await s.client.call_tool("plan_trip", {})
    assert tools == TOOLS[peer.sdk]
    assert script.reports == []
    echoed = json.loads(tool_text(out))
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
    script = scripted(
        {"fields": ["travellers"], "action": "decline", "once": True},
        {"fields": ["travellers"], "action": "cancel", "once": True},
    )
    async with connected(request, ts_node, peer, script) as s:
        declined = await s.client.call_tool("plan_trip", {})
        cancelled = await s.client.call_tool("plan_trip", {})
    assert tool_text(declined) == "trip: declined, nothing booked"
    assert tool_text(cancelled) == "trip: cancelled, ask again later"
    if peer.modern:
        retries = [c["params"].get("inputResponses") for c in s.tape.requests("tools/call")]
        assert retries == [None, {"trip": {"action": "decline"}}, None, {"trip": {"action": "cancel"}}]
    else:
        assert s.tape.answers() == [{"action": "decline"}, {"action": "cancel"}]


# ---- two rounds (v2) --------------------------------------------------------------------


async def test_the_second_question_depends_on_the_first(
    request: pytest.FixtureRequest, ts_node: Path, v2_peer: Peer
) -> None:
    script = scripted(
        {"fields": ["cuisine"], "content": {"cuisine": "japanese"}},
        {"fields": ["dish"], "content": {"dish": "ramen"}},
    )
    async with connected(request, ts_node, v2_peer, script) as s:
        out = await s.client.call_tool("pick_dish", {})
    assert tool_text(out) == "dish: ramen (japanese)"
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
    script = scripted(
        {"mode": "url", "action": "accept", "once": True},
        {"mode": "url", "action": "decline", "once": True},
    )
    async with connected(request, ts_node, v2_peer, script) as s:
        accepted = await s.client.call_tool("connect_calendar", {"provider": "work"})
        declined = await s.client.call_tool("connect_calendar", {"provider": "work"})
    assert tool_text(accepted) == "calendar: work connected"
    assert tool_text(declined) == "calendar: work not connected (decline)"
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
    script = scripted({"mode": "url", "action": "accept"})
    async with connected(request, ts_node, v1_peer, script) as s:
        out = await s.client.call_tool("connect_calendar", {"provider": "home"})
    (asked,) = s.tape.asked()
    eid = asked["params"]["elicitationId"]
    assert tool_text(out) == f"calendar: home connected ({eid})"
    assert s.tape.notices() == [eid]
    assert s.notes == [("notifications/elicitation/complete", {"elicitationId": eid})]


@pytest.mark.parametrize("v1_peer", V1, ids=peer_id)
async def test_a_waiting_answerer_hears_that_the_url_step_is_finished(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    """The v1 server sends notifications/elicitation/complete 150 ms after asking, while its
    elicitation/create is unanswered; ``request.finished`` must return then, not time out."""
    patient = Patient(scripted({"mode": "url", "action": "accept"}))
    async with connected(request, ts_node, v1_peer, patient) as s:
        out = await s.client.call_tool("connect_calendar", {"provider": "home"})
    (asked,) = s.tape.asked()
    eid = asked["params"]["elicitationId"]
    assert tool_text(out) == f"calendar: home connected ({eid})"
    assert patient.heard == [eid]
    # The answer left after the notice came in, not before.
    assert position_of(s.tape, "receive", "notifications/elicitation/complete") < position_of(
        s.tape, "send", None, asked["id"]
    )


async def test_url_elicitation_required_waits_for_the_notice_then_retries(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    script = scripted({"mode": "url", "action": "accept", "await_completion": True})
    async with connected(request, ts_node, v1_peer, script) as s:
        out = await s.client.call_tool("connect_bank", {"account": "savings"})
    assert tool_text(out) == "bank: savings linked, balance 42"
    first, retry = s.tape.requests("tools/call")
    assert first["id"] != retry["id"] and first["params"] == retry["params"]
    error = s.tape.answer_to(first)["error"]
    assert error["code"] == -32042
    (wanted,) = error["data"]["elicitations"]
    assert wanted["url"].startswith("https://bank.example.com/link?state=")
    assert s.tape.notices() == [wanted["elicitationId"]]
    # The retry went out only once the server said the page was done.
    assert position_of(s.tape, "receive", "notifications/elicitation/complete") < position_of(
        s.tape, "send", "tools/call", retry["id"]
    )
    assert [entry.mode for _, entry in script.used] == ["url"]


async def test_a_declined_url_elicitation_required_ends_the_call_with_the_error(
    request: pytest.FixtureRequest, ts_node: Path, v1_peer: Peer
) -> None:
    script = scripted({"mode": "url", "action": "decline"})
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
    script = scripted({"fields": ["travellers"], "content": TRIP})
    async with connected(request, ts_node, peer, script, auto=True) as s:
        out = await s.client.call_tool("plan_trip", {})
    assert json.loads(tool_text(out))["content"] == TRIP_SENT
    methods = s.tape.methods()
    assert methods[0] == "server/discover"
    assert (methods[1] == "initialize") is (peer.revision == LEGACY)
