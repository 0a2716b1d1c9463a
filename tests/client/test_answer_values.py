"""An app's own answerer answers a real server's form with Python values (a ``date``, an
aware ``datetime``, a set of choices), at both revisions: the official Python SDK's
``profile`` tool (tests/peers/sdk_server.py, over stdio) gets them as the JSON its pydantic
model reads. Without the peer, these tests skip."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.stdio_client import connect_stdio

from support.peers import sdk_python
from support.procs import ROOT

__all__ = ["sdk_python"]  # a fixture

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = ROOT / "tests" / "peers" / "sdk_server.py"


class Profile:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert not request.problems, request.problems
        return ElicitAnswer.accept(
            email="ann@example.com",
            site="https://ann.example.com/",
            born=dt.date(1990, 2, 28),
            meeting=dt.datetime(2026, 12, 24, 18, 30, tzinfo=dt.UTC),
            budget=120.5,
            seat="out",
            diet={"halal", "veg"},
        )


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_python_values_reach_the_server_as_json(sdk_python: Path, revision: str) -> None:
    async with connect_stdio([str(sdk_python), str(SERVER)], answerer=Profile(), versions=[revision]) as app:
        out = await app.call_tool("profile")
    got = json.loads(out["content"][0]["text"])
    assert got["born"] == "1990-02-28"
    assert got["meeting"] == "2026-12-24T18:30:00Z"  # pydantic writes UTC as Z
    assert got["diet"] == ["veg", "halal"]  # the options' order
