"""2025-11-25: a server that says a URL step is complete (``notifications/elicitation/complete``)
before it answers with the -32042 naming that step, in every round of one request: each
retry goes out at once, with no wait for a notice that has already come. The server is a
real process over stdio (``hostile_server.py``, scenario ``legacy-url-notice-first``); the
script waits for the server's notice (``await_completion``), which is what would otherwise
wait ``completion_timeout`` and fail."""

from __future__ import annotations

import pytest

from client.hostile import hostile
from mcp_elicit.client import Scripted

pytestmark = pytest.mark.anyio

ROUNDS = 3


def _waits_for_the_server() -> Scripted:
    script = Scripted.from_script([{"mode": "url", "action": "accept", "await_completion": True}])
    script.completion_timeout = 10  # a bound on the failure only: the notices came first
    return script


@pytest.mark.parametrize("ids", ["same-id", "new-ids"])
async def test_a_notice_before_each_rounds_error_is_the_steps_completion(ids: str) -> None:
    """``same-id``: every round's step is named ``e0`` (one id for a kind of step), so each
    round's notice comes after the step of that id in the round before was over; it is
    this round's, not a late copy of that one's, since the request it answers was sent
    after. ``new-ids``: ``e0``, ``e1``, ``e2``."""
    answerer = _waits_for_the_server()
    async with hostile(["legacy-url-notice-first", str(ROUNDS), ids], "2025-11-25", answerer) as (
        client,
        recorder,
    ):
        out = await client.call_tool("t")
    assert out["content"][0]["text"] == str(ROUNDS)  # the call that came after the rounds
    assert len([m for m in recorder.sent if m.get("method") == "tools/call"]) == ROUNDS + 1
    assert [key for key, _ in answerer.used] == [
        f"url e{0 if ids == 'same-id' else i}" for i in range(ROUNDS)
    ]
