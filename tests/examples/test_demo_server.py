"""The demo server's flows, in memory, schema-checked."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.cli.loader import load_server

from support.memory import MemoryClient
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()


@pytest.fixture
def app() -> Server:
    server = load_server("examples/demo_server.py")
    bookings = server._tools["list_bookings"].fn.__globals__["BOOKINGS"]
    bookings.clear()
    return server


def answers(details: dict[str, Any], *, confirm: bool = True, action: str = "accept") -> Any:
    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        if key == "details":
            return {"action": action, "content": details} if action == "accept" else {"action": action}
        return {"action": "accept", "content": {"confirm": confirm, "sure": confirm}}

    return answer


async def test_book_then_list_then_cancel(app: Server, wire: WireChecker) -> None:
    client = MemoryClient(app, checker=wire)
    details = {"party_size": 2, "date": TOMORROW, "seating": "terrace", "dietary": ["vegan"]}
    final, rounds = await client.rounds(
        "tools/call", {"name": "book_table", "arguments": {"restaurant": "Noma"}}, answers(details)
    )
    assert [list(r.get("inputRequests", {})) for r in rounds] == [["details"], ["confirm"], []]
    text = final["result"]["content"][0]["text"]
    assert text.startswith("Booked #1: Noma, Copenhagen, 2 people on")
    assert "terrace, vegan" in text
    listed = await client.result("tools/call", {"name": "list_bookings"})
    assert "#1: Noma" in listed["content"][0]["text"]
    kept, _ = await client.rounds(
        "tools/call", {"name": "cancel_booking", "arguments": {"booking_id": 1}}, answers({}, confirm=False)
    )
    assert kept["result"]["content"][0]["text"] == "Booking #1 kept."
    gone, _ = await client.rounds(
        "tools/call", {"name": "cancel_booking", "arguments": {"booking_id": 1}}, answers({})
    )
    assert gone["result"]["content"][0]["text"] == "Booking #1 cancelled."


@pytest.mark.parametrize(
    ("action", "start"), [("decline", "No booking made"), ("cancel", "Booking not finished")]
)
async def test_decline_and_cancel_differ(app: Server, wire: WireChecker, action: str, start: str) -> None:
    client = MemoryClient(app, checker=wire)
    final, rounds = await client.rounds(
        "tools/call",
        {"name": "book_table", "arguments": {"restaurant": "septime"}},
        answers({}, action=action),
    )
    assert final["result"]["content"][0]["text"].startswith(start)
    assert len(rounds) == 2


async def test_without_elicitation_the_tool_explains(app: Server, wire: WireChecker) -> None:
    """What it tells the client is something the client can do: the tool takes nothing but
    the restaurant, so the details cannot come in the request instead of the form."""
    client = MemoryClient(app, checker=wire, capabilities={})
    (tool,) = [t for t in (await client.result("tools/list", {}))["tools"] if t["name"] == "book_table"]
    assert list(tool["inputSchema"]["properties"]) == ["restaurant"]
    result = await client.result("tools/call", {"name": "book_table", "arguments": {"restaurant": "noma"}})
    text = result["content"][0]["text"]
    assert "Your client cannot show forms, so nothing was booked" in text, text
    assert "call again" not in text, text


async def test_prompt_and_resource_ask(app: Server, wire: WireChecker) -> None:
    client = MemoryClient(app, checker=wire)
    final, _ = await client.rounds(
        "prompts/get",
        {"name": "plan_evening", "arguments": {"city": "Paris"}},
        lambda k, r: {"action": "accept", "content": {"mood": "lively"}},
    )
    assert "lively evening in Paris" in final["result"]["messages"][0]["content"]["text"]
    final, _ = await client.rounds(
        "resources/read",
        {"uri": "bookings://menu/noma"},
        lambda k, r: {"action": "accept", "content": {"course": "desserts"}},
    )
    assert "desserts" in final["result"]["contents"][0]["text"]
