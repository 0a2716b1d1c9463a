"""2025-11-25 sessions over real HTTP, what their tests share: the server they ask through, and a
client session that opens streams, reads their events and answers on a separate POST (``accepting``
makes the answer)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.wire.sse import EventDecoder

from support.sessions import ACCEPT, ask_name_server, initialize_body
from support.wire import WireChecker


def build() -> Server:
    app = ask_name_server("http-sessions")

    @app.tool()
    async def connect(ctx: Context) -> str:
        await ctx.require_url("Connect", "https://example.com/c", elicitation_id="e-42")
        return "connected"

    @app.tool()
    async def stubborn(ctx: Context) -> str:
        """Asks once more when cancelled (a handler may catch the cancellation)."""
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            again = await ctx.elicit("Sure you want to stop?", Form(sure=String()))
            return f"asked again: {again.action}"
        return "answered"

    @app.tool()
    async def stubborn_step(ctx: Context) -> str:
        """Asks a URL step (-32042) when cancelled."""
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            await ctx.require_url("Connect", "https://example.com/c", elicitation_id="e-7")
        return "answered"

    return app


class Session:
    def __init__(self, http: httpx.AsyncClient, url: str, wire: WireChecker) -> None:
        self.http = http
        self.url = url
        self.wire = wire
        self.sid = ""
        self.ids = 0

    def headers(self) -> dict[str, str]:
        return {"accept": ACCEPT, "mcp-session-id": self.sid, "mcp-protocol-version": "2025-11-25"}

    async def open(self, caps: dict[str, Any] | None = None) -> httpx.Response:
        body = initialize_body(
            capabilities=caps if caps is not None else {"elicitation": {"form": {}, "url": {}}}
        )
        self.wire.request(body)
        response = await self.http.post(self.url, json=body, headers={"accept": ACCEPT})
        self.wire.response("initialize", response.json())
        self.sid = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.wire.notification(note)
        assert (await self.http.post(self.url, json=note, headers=self.headers())).status_code == 202
        return response

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        """POST ``message`` in this session, with its headers."""
        return await self.http.post(self.url, json=message, headers=self.headers())

    def call(self, name: str) -> dict[str, Any]:
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": {"name": name}}
        self.wire.request(body)
        return body

    @contextlib.asynccontextmanager
    async def asked(
        self, name: str = "ask_name"
    ) -> AsyncIterator[tuple[httpx.Response, AsyncIterator[dict[str, Any]], dict[str, Any]]]:
        """Call the tool ``name`` with its answer streamed: the stream, its events, and the
        question the tool asks first (an ``elicitation/create``, schema-checked)."""
        async with self.http.stream("POST", self.url, json=self.call(name), headers=self.headers()) as stream:
            events = _events(stream)
            question = await anext(events)
            self.wire.request(question)
            assert question["method"] == "elicitation/create"
            yield stream, events, question


def accepting(question: dict[str, Any], **content: Any) -> dict[str, Any]:
    """The client's answer to ``question``: accept, with ``content``."""
    return {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}}


async def _events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    decoder = EventDecoder()
    async for chunk in response.aiter_bytes():
        for event in decoder.feed(chunk):
            yield orjson.loads(event.data)
