"""2025-11-25: how many of a hostile server's questions the client answers (at once, and
during one request), what it answers beyond, and that it warns once, not per refusal."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from client.hostile import NAME, hostile
from mcp_elicit.client import Scripted
from mcp_elicit.client.answerers import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.core.rounds import RoundLimits

pytestmark = pytest.mark.anyio


class Slow:
    """An answerer that cancels each question once ``go`` is set, counting them."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = 0
        self.go = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked += 1
        await self.go.wait()
        return ElicitAnswer.cancel()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_a_flood_of_questions_is_refused_beyond_the_limit(caplog: pytest.LogCaptureFixture) -> None:
    """2025-11-25: a server that sends 40 questions at once has the 32 first answered one
    by one (RoundLimits.max_requests), and the 8 others refused at once with a clear error,
    never put to the person. One warning tells of the burst, not one for each refusal."""
    answerer = Slow()
    caplog.set_level(logging.WARNING, "mcp_elicit")
    async with hostile(["legacy-flood", "40"], "2025-11-25", answerer) as (client, recorder):
        call = asyncio.ensure_future(client.call_tool("t"))
        for _ in range(500):
            refused = [m for m in recorder.sent if "error" in m]
            if len(refused) == 8:
                break
            await asyncio.sleep(0.01)
        assert sorted(m["id"] for m in refused) == sorted(f"s-{i}" for i in range(32, 40))
        assert all("already answering 32" in m["error"]["message"] for m in refused)
        answerer.go.set()
        out = await asyncio.wait_for(call, 10)
    codes = json.loads(out["content"][0]["text"])
    assert codes.count(-32600) == 8 and codes.count(0) == 32
    assert answerer.asked == 32
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1, warned
    assert "8 requests beyond the limit of 32" in warned[0]


async def test_a_server_that_asks_for_ever_during_one_request_is_refused_at_the_limit() -> None:
    """2025-11-25: a server asking one question after another during one request gets as
    many answers as 2026-07-28 rounds would carry (max_rounds x max_requests), then a
    refusal; the person is not asked for ever."""
    answerer = Scripted.from_script(NAME)
    limits = RoundLimits(max_rounds=2, max_requests=3)
    async with hostile(["legacy-ask-forever"], "2025-11-25", answerer, limits) as (client, _):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert told["answered"] == 6 and len(answerer.used) == 6
    assert told["error"]["code"] == -32600
    assert "at most 6 of the server's questions during one request" in told["error"]["message"]


async def test_a_server_that_goes_on_asking_after_the_limit_gets_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """2025-11-25: a server that goes on asking after its refusal at the limit of one
    request's questions has each refused, and one warning tells of them all, when the
    request is over."""
    answerer = Scripted.from_script(NAME)
    limits = RoundLimits(max_rounds=2, max_requests=3)
    caplog.set_level(logging.WARNING, "mcp_elicit")
    async with hostile(["legacy-ask-forever", "5"], "2025-11-25", answerer, limits) as (client, _):
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    told = json.loads(out["content"][0]["text"])
    assert told["answered"] == 6 and len(answerer.used) == 6
    assert told["error"]["code"] == -32600
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1, warned
    assert "11 questions during tools/call" in warned[0] and "the last 5 were refused" in warned[0]
