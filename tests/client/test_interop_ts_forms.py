"""Interop: what the mcp-elicit client sends the official TypeScript SDK's servers
(tests/peers/ts) for a form of every field kind (each string format, number, integer,
boolean, single and multiple choice with and without titles, defaults left as they are), and
for a prompt and a resource that ask before they answer (``input_required`` on
``prompts/get`` and ``resources/read`` at 2026-07-28, ``elicitation/create`` at 2025-11-25):
what each handler receives, checked by what it echoes back. Every message is checked against
the official schema of its revision (``client.ts_peer``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.ts_peer import (
    PROFILE,
    PROFILE_SENT,
    Peer,
    connected,
    peer,
    scripted,
    tool_text,
    v1_http,
    v2_http,
    v2_peer,
)

from support.peers import ts_node

__all__ = ["peer", "ts_node", "v1_http", "v2_http", "v2_peer"]  # fixtures

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_every_string_format_choice_and_default_reaches_the_handler(
    request: pytest.FixtureRequest, ts_node: Path, peer: Peer
) -> None:
    script = scripted({"fields": ["email", "extras"], "content": PROFILE})
    async with connected(request, ts_node, peer, script) as s:
        out = await s.client.call_tool("profile", {})
    assert script.reports == []
    echoed = json.loads(tool_text(out))
    assert echoed["content"] == PROFILE_SENT
    assert echoed["types"] == {
        **{name: "string" for name in ("email", "site", "born", "meeting", "nickname", "size", "seat")},
        "budget": "number",
        "guests": "number",
        "newsletter": "boolean",
        "diet": "array of string",
        "extras": "array of string,string",
    }


async def test_a_declined_profile_reaches_the_handler_as_a_decline(
    request: pytest.FixtureRequest, ts_node: Path, peer: Peer
) -> None:
    script = scripted({"fields": ["email"], "action": "decline"})
    async with connected(request, ts_node, peer, script) as s:
        out = await s.client.call_tool("profile", {})
    assert tool_text(out) == "profile: decline"


# ---- prompts and resources that ask first (v2) -------------------------------------------


async def test_a_prompt_and_a_resource_that_ask_before_answering(
    request: pytest.FixtureRequest, ts_node: Path, v2_peer: Peer
) -> None:
    script = scripted(
        {"fields": ["audience"], "content": {"audience": "board"}},
        {"fields": ["passphrase"], "content": {"passphrase": "open sesame"}},
    )
    async with connected(request, ts_node, v2_peer, script) as s:
        prompt = await s.client.get_prompt("briefing", {"topic": "budget"})
        memo = await s.client.read_resource("memo://vault")
    assert prompt["messages"][0]["content"]["text"] == "Brief board on budget."
    assert memo["contents"][0]["text"] == "the memo: buy milk"
    gets, reads = s.tape.requests("prompts/get"), s.tape.requests("resources/read")
    if v2_peer.modern:
        assert len(gets) == 2 and len(reads) == 2
        assert gets[1]["params"]["inputResponses"] == {
            "audience": {"action": "accept", "content": {"audience": "board"}}
        }
        assert gets[1]["params"]["arguments"] == {"topic": "budget"}
        assert reads[1]["params"]["uri"] == "memo://vault"
    else:
        assert len(gets) == 1 and len(reads) == 1
        assert [a["params"]["message"] for a in s.tape.asked()] == [
            "Who reads the budget briefing?",
            "The vault passphrase",
        ]


async def test_a_cancelled_prompt_question_reaches_the_prompt(
    request: pytest.FixtureRequest, ts_node: Path, v2_peer: Peer
) -> None:
    script = scripted(
        {"fields": ["audience"], "action": "cancel"}, {"fields": ["passphrase"], "action": "decline"}
    )
    async with connected(request, ts_node, v2_peer, script) as s:
        prompt = await s.client.get_prompt("briefing", {"topic": "hiring"})
        memo = await s.client.read_resource("memo://vault")
    assert prompt["messages"][0]["content"]["text"] == "Brief nobody (cancel) on hiring."
    assert memo["contents"][0]["text"] == "vault shut (decline)"
