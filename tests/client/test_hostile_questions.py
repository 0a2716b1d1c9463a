"""The client against the hostile server process (``hostile_server.py`` over stdio) asking
what no answerer should be asked: a question under the id of one still being answered."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from client.hostile import hostile
from client.recorder import Recorder
from mcp_elicit.core.client_inputs import ElicitationRequest

from support.waiting import eventually

pytestmark = pytest.mark.anyio


class WaitsForTheDuplicate:
    """Answers "Ann" to the first question only once the transport has read the second
    question under the same id, so that the second arrives while the first is answered."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.recorder: Recorder | None = None
        self.asked: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> Mapping[str, Any]:
        self.asked.append(request.message)
        recorder = self.recorder
        assert recorder is not None
        await eventually(
            lambda: len([m for m in recorder.received if m.get("id") == "q-0" and "method" in m]) == 2,
            "the second question under id q-0",
        )
        return {"action": "accept", "content": {"name": "Ann"}}

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_a_question_reusing_an_id_in_use_gets_no_answer(caplog: pytest.LogCaptureFixture) -> None:
    """2025-11-25: a server's request under the id of one still being answered got -32600
    under that id, which the server takes for the answer to its FIRST request (ids must not
    be reused within a session; the response names only the id), so the first question was
    lost. Now the duplicate gets no response, a warning names the id, and the first question
    is answered as usual: the server gets one response under that id, the first one's."""
    person = WaitsForTheDuplicate()
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
        async with hostile(["legacy-same-id"], "2025-11-25", person) as (client, recorder):
            person.recorder = recorder
            out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert told == [
        {"jsonrpc": "2.0", "id": "q-0", "result": {"action": "accept", "content": {"name": "Ann"}}}
    ]
    assert person.asked == ["Your name?"]
    assert [m for m in recorder.sent if m.get("id") == "q-0"] == told
    assert any("'q-0'" in r.getMessage() and "no response" in r.getMessage() for r in caplog.records)
