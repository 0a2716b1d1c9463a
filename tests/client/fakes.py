"""A transport whose server is a Python function, for the client's unit tests.

``FakeTransport(serve)``: every request the client sends goes to ``serve(message,
headers)``, which returns what the exchange delivers: JSON-RPC messages as dicts, then
optionally an ``Ended`` (one is added when missing). ``serve`` may be async. Notifications
and responses the client sends are recorded in ``sent`` and passed to ``on_send``.
``push`` delivers a message outside any exchange, as stdio or an event stream would.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_elicit.client.transport import Ended, Unsolicited
from mcp_elicit.wire import jsonrpc

Item = dict[str, Any] | Ended
Serve = Callable[[dict[str, Any], dict[str, str]], "list[Item] | Awaitable[list[Item]]"]
META_VERSION = "io.modelcontextprotocol/protocolVersion"


def result(message: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message["id"], "result": dict(body)}


def error(message: Mapping[str, Any], code: int, text: str = "error", data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": message["id"], "error": err}


def discover(message: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    body = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "9"}},
    }
    body.update(extra)
    return result(message, body)


class FakeExchange:
    def __init__(self, items: list[Item], headers: dict[str, str] | None = None) -> None:
        self._items = list(items)
        if not self._items or not isinstance(self._items[-1], Ended):
            self._items.append(Ended(200))
        self.headers = headers or {}
        self.closed = False
        self.hang = False

    async def receive(self) -> jsonrpc.Message | Ended:
        if self.hang:
            await asyncio.Event().wait()
        item = self._items[0] if len(self._items) == 1 else self._items.pop(0)
        if isinstance(item, Ended):
            return item
        return jsonrpc.decode_value(item)

    async def aclose(self) -> None:
        self.closed = True


class FakeTransport:
    def __init__(
        self,
        serve: Serve,
        *,
        http: bool = True,
        headers: dict[str, str] | None = None,
        listen: Callable[[dict[str, str], str | None], FakeExchange | Ended | None] | None = None,
        on_send: Callable[[dict[str, Any]], Awaitable[None] | None] | None = None,
    ) -> None:
        self.serve = serve
        self._http = http
        self.response_headers = headers or {}
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []
        self.sent: list[tuple[dict[str, Any], dict[str, str]]] = []
        self.listens: list[tuple[dict[str, str], str | None, float]] = []
        self._listen = listen
        self.on_send = on_send
        self.unsolicited: Unsolicited | None = None
        self.opened = False
        self.closed = False
        self.ended_sessions: list[dict[str, str]] = []

    @property
    def http(self) -> bool:
        return self._http

    @property
    def where(self) -> str:
        return "fake://server"

    @property
    def network(self) -> Mapping[str, str | int]:
        return {}

    async def open(self, unsolicited: Unsolicited) -> None:
        self.unsolicited = unsolicited
        self.opened = True

    async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> FakeExchange:
        copy = jsonrpc.decode(jsonrpc.encode(message))  # what a wire would carry
        assert isinstance(copy, jsonrpc.Request)
        self.requests.append((dict(message), dict(headers)))
        out = self.serve(dict(message), dict(headers))
        items = await out if inspect.isawaitable(out) else out
        return FakeExchange(items, dict(self.response_headers))

    async def send(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        self.sent.append((dict(message), dict(headers)))
        if self.on_send is not None:
            out = self.on_send(dict(message))
            if inspect.isawaitable(out):
                await out

    async def listen(
        self, headers: Mapping[str, str], last_event_id: str | None = None
    ) -> FakeExchange | Ended | None:
        self.listens.append((dict(headers), last_event_id, asyncio.get_running_loop().time()))
        return self._listen(dict(headers), last_event_id) if self._listen is not None else None

    async def end_session(self, headers: Mapping[str, str]) -> None:
        self.ended_sessions.append(dict(headers))

    async def gone(self) -> str:
        """Never: the fake server is always there."""
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        self.closed = True

    async def push(self, message: dict[str, Any]) -> None:
        assert self.unsolicited is not None
        await self.unsolicited(jsonrpc.decode_value(message))

    def methods(self) -> list[str]:
        return [m["method"] for m, _ in self.requests]
