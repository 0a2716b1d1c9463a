"""Interop: the mcp-elicit client answers a FastMCP server (4.1.6, tests/peers/fastmcp_server.py),
over Streamable HTTP and stdio: every shape FastMCP builds from a Python type at
2025-11-25 (choices wrapped as ``{"value": ...}``, titled options, several choices, a
number, a dataclass with a default, an empty form), and its "guard pattern" at 2026-07-28.

FastMCP lives in its own virtualenv (tests/.peers/fastmcp, the benchmark's pins); without
it (offline, say), these tests skip, saying why.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from client.recorder import Recorder, peer_client
from mcp_elicit.client import Client, Scripted
from mcp_elicit.transports.http_client import HttpTransport

from support.peers import fastmcp_python, peer_http
from support.procs import ROOT

__all__ = ["fastmcp_python"]  # a fixture

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = ROOT / "tests" / "peers" / "fastmcp_server.py"
SCRIPT = [
    {"tool": "pick_color", "content": {"value": "green"}},
    {"tool": "pick_toppings", "content": {"value": ["cheese", "olives"]}},
    {"tool": "pick_plan", "content": {"value": "pro"}},
    {"tool": "how_many", "content": {"value": 4}},
    {"tool": "register", "content": {"name": "Ann", "age": 41}},
    {"tool": "confirm", "content": {"value": False}},
    {"tool": "guarded", "content": {"city": "Paris"}},
]


@pytest.fixture(scope="module")
def fastmcp_http(fastmcp_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("fastmcp") / "fastmcp-http.log"
    with peer_http(lambda port: [str(fastmcp_python), str(SERVER), "--http", str(port)], log) as url:
        yield url


@pytest.fixture(params=["http", "stdio"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def connected(
    kind: str, revision: str, request: pytest.FixtureRequest, script: list[dict[str, Any]]
) -> AsyncIterator[tuple[Client, Recorder, Scripted]]:
    answers = Scripted.from_script(script)
    if kind == "http":
        where: str | list[str] = request.getfixturevalue("fastmcp_http")
    else:
        where = [str(request.getfixturevalue("fastmcp_python")), str(SERVER)]
    async with peer_client(where, answers, revision, env={"FASTMCP_LOG_LEVEL": "WARNING"}) as (
        client,
        recorder,
    ):
        yield client, recorder, answers


async def outcome(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


async def test_every_shape_fastmcp_asks_at_2025(kind: str, request: pytest.FixtureRequest) -> None:
    async with connected(kind, "2025-11-25", request, SCRIPT) as (client, recorder, _):
        assert await outcome(client, "pick_color") == {"action": "accept", "data": "green"}
        assert await outcome(client, "pick_toppings") == {"action": "accept", "data": ["cheese", "olives"]}
        assert await outcome(client, "pick_plan") == {"action": "accept", "data": "pro"}
        assert await outcome(client, "how_many") == {"action": "accept", "data": 4}
        # The default the form carries is filled in before the answer leaves.
        assert await outcome(client, "register") == {
            "action": "accept",
            "data": {"name": "Ann", "age": 41, "subscribe": False},
        }
        assert await outcome(client, "confirm") == {"action": "accept", "data": False}
    asked = {
        m["params"]["message"]: m["params"]["requestedSchema"]["properties"]
        for m in recorder.received
        if m.get("method") == "elicitation/create"
    }
    assert asked["Which plan?"]["value"]["oneOf"] == [
        {"const": "free", "title": "Free"},
        {"const": "pro", "title": "Pro, 9 EUR"},
    ]
    # FastMCP leaves out the items' "type": "string"; the client takes it as a multi-select.
    assert asked["Which toppings?"]["value"]["items"] == {"enum": ["cheese", "ham", "olives"]}
    assert asked["Go ahead?"]["value"]["type"] == "boolean"
    assert asked["Register"]["subscribe"] == {"type": "boolean", "title": "Subscribe", "default": False}


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_fastmcp(
    kind: str, request: pytest.FixtureRequest, action: str
) -> None:
    async with connected(kind, "2025-11-25", request, [{"tool": "pick_color", "action": action}]) as (
        client,
        *_,
    ):
        assert await outcome(client, "pick_color") == {"action": action, "data": None}


async def test_the_guard_pattern_at_2026(kind: str, request: pytest.FixtureRequest) -> None:
    async with connected(kind, "2026-07-28", request, SCRIPT) as (client, recorder, _):
        result = await client.call_tool("guarded", {"name": "Ann"})
        assert result["content"][0]["text"] == "Ann lives in Paris"
        # FastMCP's push-style ctx.elicit refuses this revision, as a tool error.
        refused = await client.call_tool("pick_color")
        assert refused["isError"] is True
        assert "unavailable on 2026-07-28" in refused["content"][0]["text"]
    calls = [m for m in recorder.sent if m.get("method") == "tools/call"]
    first = next(m["result"] for m in recorder.received if m.get("id") == calls[0]["id"])
    assert first["resultType"] == "input_required"
    assert calls[1]["params"]["requestState"] == first["requestState"]  # sealed by FastMCP, echoed
    assert calls[1]["params"]["inputResponses"]["city"]["content"] == {"city": "Paris"}


async def test_auto_detection_finds_fastmcps_modern_era(fastmcp_http: str) -> None:
    async with Client(HttpTransport(fastmcp_http), answerer=Scripted.from_script(SCRIPT)) as client:
        assert client.revision == "2026-07-28"
        result = await client.call_tool("guarded", {"name": "Bo"})
    assert result["content"][0]["text"] == "Bo lives in Paris"
