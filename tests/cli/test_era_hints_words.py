"""``cli.era_hints`` on its own: which words of a server's error get the hint that
``--protocol 2025-11-25`` would follow it, and a tool's error text that is not text."""

from __future__ import annotations

import pytest

from mcp_elicit.cli.era_hints import era_hint, tool_error_note
from mcp_elicit.errors import InternalError, InvalidRequest

MODERN = "2026-07-28"


@pytest.mark.parametrize(
    "words",
    [
        "Cannot send 'elicitation/create': this transport context has no back-channel",  # the SDK's
        "elicitation via server-initiated requests is unavailable on 2026-07-28 connections.",  # FastMCP's
    ],
)
def test_a_server_saying_it_cannot_send_its_requests_gets_the_hint(words: str) -> None:
    assert "--protocol 2025-11-25" in era_hint(InvalidRequest(words), "stdio", MODERN)
    assert "--protocol 2025-11-25" in tool_error_note(
        {"isError": True, "content": [{"type": "text", "text": words}]}, MODERN
    )


@pytest.mark.parametrize(
    "words",
    [
        "No results for 'how do I send elicitation/create'",  # the caller's own words, echoed
        "Invalid params: 'elicitation/create' is not a tool; did you mean call?",
        "server-initiated requests are what this tool is about",
    ],
)
def test_an_error_merely_mentioning_them_gets_no_hint(words: str) -> None:
    assert era_hint(InternalError(words), "stdio", MODERN) == ""
    assert tool_error_note({"isError": True, "content": [{"type": "text", "text": words}]}, MODERN) == ""


def test_a_tool_error_whose_text_is_deeply_nested_is_no_crash() -> None:
    deep: object = "Cannot send 'elicitation/create'"
    for _ in range(1000):  # a JSON reader takes 1024 levels
        deep = [deep]
    assert tool_error_note({"isError": True, "content": [{"type": "text", "text": deep}]}, MODERN) == ""
