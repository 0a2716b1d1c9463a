"""The README's URL-mode fragment is code a reader copies: its ``share_to_calendar``
body runs as written once ``ctx.connect`` has a connection. It posts a JSON event to the
calendar's API through the connection's client and says what the API answered (no
placeholder such as ``json={...}``, a set holding ``Ellipsis`` that httpx cannot encode).
The calendar is an ``httpx.MockTransport`` here, since ``calendar.example`` does not
exist, and ``ctx`` a stand-in that answers ``connect`` as a connected person would; the
whole sign-in is tested in ``tests/transports/test_oauth.py``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Server

from support.readme import block_starting

pytestmark = pytest.mark.anyio


class Calendar:
    """The provider's API: records what it is sent, and answers ``status``."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.sent: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return httpx.Response(self.status, json={"id": "ev-1"})


class Connected:
    """``ctx.connect``'s answer once the person connected: its client reaches ``calendar``."""

    action = "accept"

    def __init__(self, calendar: Calendar) -> None:
        self.connection = self
        self._calendar = calendar

    def client(self, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self._calendar), **options)


class StandIn:
    """The ``ctx`` of the fragment's tool: ``connect`` answers as a connected person."""

    def __init__(self, calendar: Calendar) -> None:
        self.calendar = calendar
        self.asked: list[str] = []

    async def connect(self, provider: str, *, message: str) -> Connected:
        self.asked.append(provider)
        return Connected(self.calendar)


def share_to_calendar() -> Any:
    pytest.importorskip("authlib")  # app.oauth_provider needs the oauth extra
    block = block_starting("python", "app.oauth_provider(")
    names: dict[str, Any] = {"app": Server("bookings"), "Context": Context}
    exec(compile(block.text, f"README.md:{block.line}", "exec"), names)
    return names["share_to_calendar"]


@pytest.mark.parametrize(("status", "said"), [(201, "Shared."), (403, "The calendar answered 403.")])
async def test_the_fragments_calendar_call_runs_as_written(status: int, said: str) -> None:
    tool = share_to_calendar()
    ctx = StandIn(Calendar(status))
    assert await tool(ctx, 7) == said
    assert ctx.asked == ["calendar"]
    (request,) = ctx.calendar.sent
    assert (request.method, str(request.url)) == ("POST", "https://calendar.example/api/events")
    assert json.loads(request.content) == {"summary": "Table booking 7"}
