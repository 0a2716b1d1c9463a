"""Drive a ``Server`` in memory as a 2026-07-28 client would: every request is encoded to
bytes and decoded again, goes through the server's protocol core and handlers, and every
message either side produces is checked against the official schema of the revision.
No sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import orjson

from mcp_elicit import Server
from mcp_elicit.server.auth import Principal
from mcp_elicit.stores.base import Store
from mcp_elicit.wire import jsonrpc

from support.wire import WireChecker

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"

Answerer = Callable[[str, dict[str, Any]], dict[str, Any]]


class MemoryClient:
    def __init__(
        self,
        server: Server,
        *,
        capabilities: Mapping[str, Any] | None = None,
        principal: Principal | None = None,
        checker: WireChecker | None = None,
        revision: str = "2026-07-28",
    ) -> None:
        self.server = server
        self.capabilities = dict(capabilities) if capabilities is not None else {"elicitation": {}}
        self.principal = principal
        self.checker = checker
        self.revision = revision
        self.ids = itertools.count(1)
        self.notifications: list[dict[str, Any]] = []
        self.statuses: list[int] = []

    # the Channel protocol: the server's notifications for the request in flight
    async def notify(self, method: str, params: dict[str, Any]) -> None:
        message = orjson.loads(jsonrpc.encode_notification(method, params))
        if self.checker is not None:
            self.checker.notification(message)
        self.notifications.append(message)

    async def close_stream(self) -> bool:
        return False

    def meta(self, **extra: Any) -> dict[str, Any]:
        meta: dict[str, Any] = {
            META_VERSION: self.revision,
            META_CAPS: self.capabilities,
            META_INFO: {"name": "memory-client", "version": "1.0"},
        }
        meta.update(extra)
        return meta

    async def raw(
        self, message: Mapping[str, Any], *, headers: Mapping[str, str] | None = None, malformed: bool = False
    ) -> dict[str, Any]:
        """Send one already-built message; return the decoded response. A ``malformed``
        request is sent on purpose and not checked against the schema (its answer is)."""
        if self.checker is not None and "method" in message and not malformed:
            self.checker.request(message)
        decoded = jsonrpc.decode(orjson.dumps(message))
        assert isinstance(decoded, jsonrpc.Request)
        payload, status = await self.server.respond(
            decoded, channel=self, principal=self.principal, headers=headers
        )
        self.statuses.append(status)
        response: dict[str, Any] = orjson.loads(payload)
        if self.checker is not None:
            self.checker.response(str(message["method"]), response)
        return response

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        malformed: bool = False,
    ) -> dict[str, Any]:
        body = dict(params or {})
        body["_meta"] = dict(meta) if meta is not None else self.meta()
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": body}
        return await self.raw(message, malformed=malformed)

    async def result(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = await self.request(method, params, **kw)
        assert "result" in response, response
        return response["result"]  # type: ignore[no-any-return]

    async def rounds(
        self,
        method: str,
        params: Mapping[str, Any],
        answer: Answerer,
        *,
        max_rounds: int = 10,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Run a multi round-trip request to completion, answering each input request
        with ``answer(key, request)``; return the final response and every round's result."""
        seen: list[dict[str, Any]] = []
        retry = dict(params)
        for _ in range(max_rounds):
            response = await self.request(method, retry)
            if "error" in response:
                return response, seen
            result = response["result"]
            seen.append(result)
            if result.get("resultType") != "input_required":
                return response, seen
            retry = dict(params)
            retry["inputResponses"] = {k: answer(k, r) for k, r in result.get("inputRequests", {}).items()}
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
        raise AssertionError(f"no complete result after {max_rounds} rounds")


def accept(**content: Any) -> Answerer:
    """An answerer accepting every elicitation with ``content``."""
    return lambda _key, _request: {"action": "accept", "content": content}


class SessionClient:
    """Drive a ``Server`` in memory as a 2025-11-25 client: ``initialize`` opens a
    session; the server's questions (``elicitation/create``...) arrive as requests on the
    request's channel and are answered at once by ``answer``. Every message is checked
    against the 2025-11-25 schema."""

    def __init__(
        self,
        server: Server,
        *,
        capabilities: Mapping[str, Any] | None = None,
        principal: Principal | None = None,
        checker: WireChecker | None = None,
        version: str = "2025-11-25",
    ) -> None:
        self.server = server
        self.capabilities = dict(capabilities) if capabilities is not None else {"elicitation": {}}
        self.principal = principal
        self.checker = checker
        self.version = version
        self.ids = itertools.count(1)
        self.notifications: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.answer: Answerer = lambda _k, _r: {"action": "cancel"}
        self.session: Any = None

    async def open(self, *, initialized: bool = True) -> dict[str, Any]:
        """``initialize``, then (unless ``initialized`` is False) ``notifications/initialized``."""
        message = {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": "initialize",
            "params": {
                "protocolVersion": self.version,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "session-client", "version": "1.0"},
            },
        }
        if self.checker is not None:
            self.checker.request(message)
        decoded = jsonrpc.decode(orjson.dumps(message))
        assert isinstance(decoded, jsonrpc.Request)
        payload, self.session, _ = self.server.open_session(decoded, self.principal)
        response: dict[str, Any] = orjson.loads(payload)
        if self.checker is not None:
            self.checker.response("initialize", response)
        if initialized:
            self.initialized()
        return response

    def initialized(self) -> None:
        """Send ``notifications/initialized``."""
        if self.checker is not None:
            self.checker.notification({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.session.initialized = True

    # the HandshakeChannel protocol
    async def notify(self, method: str, params: dict[str, Any]) -> None:
        message = orjson.loads(jsonrpc.encode_notification(method, params))
        if self.checker is not None:
            self.checker.notification(message)
        self.notifications.append(message)

    async def close_stream(self) -> bool:
        return False

    async def send(self, data: bytes) -> None:
        message = orjson.loads(data)
        if "id" not in message:  # a session message sent on the request's stream (a step's completion)
            if self.checker is not None:
                self.checker.notification(message)
            self.notifications.append(message)
            return
        if self.checker is not None:
            self.checker.request(message)
        self.asked.append(message)
        reply = self.answer(str(message["id"]), {"method": message["method"], "params": message["params"]})
        response = {"jsonrpc": "2.0", "id": message["id"], "result": reply}
        if self.checker is not None:
            self.checker.response(message["method"], response)
        decoded = jsonrpc.decode(orjson.dumps(response))
        assert isinstance(decoded, jsonrpc.Response)
        self.session.resolve(decoded)

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, malformed: bool = False, **_: Any
    ) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": dict(params or {})}
        if self.checker is not None and not malformed:
            self.checker.request(message)
        decoded = jsonrpc.decode(orjson.dumps(message))
        assert isinstance(decoded, jsonrpc.Request)
        payload = await self.server.respond_in_session(
            decoded, self.session, channel=self, principal=self.principal
        )
        assert payload is not None
        response: dict[str, Any] = orjson.loads(payload)
        if self.checker is not None and (not malformed or "error" in response):
            self.checker.response(method, response)
        return response

    async def result(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = await self.request(method, params, **kw)
        assert "result" in response, response
        return response["result"]  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def instances(*servers: Server, store: Store) -> AsyncIterator[Store]:
    """``servers`` as the instances of one deployment: sharing ``store``, started (each
    hearing the others), stopped when the block ends."""
    try:
        for server in servers:
            server.configure_url_mode(store=store)
            await server.start()
            assert server.relay.listening is not None
            await asyncio.wait_for(server.relay.listening.wait(), 5)
        yield store
    finally:
        for server in servers:
            await server.stop()
