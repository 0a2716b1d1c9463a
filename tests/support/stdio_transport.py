"""What the tests of stdio (2026-07-28) with a real ``mcp-elicit serve`` subprocess share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.http import check_error, meta
from support.procs import StdioProcess
from support.wire import REQUESTS, WireChecker

WAITING_SERVER = Path(__file__).resolve().parents[1] / "transports" / "waiting_server.py"


class Stdio:
    """Sends requests and checks every message read against the schema."""

    def __init__(self, proc: StdioProcess, wire: WireChecker) -> None:
        self.proc = proc
        self.wire = wire
        self.methods: dict[Any, str] = {}

    async def send(self, method: str, params: dict[str, Any] | None = None, *, rid: Any, **kw: Any) -> None:
        body = dict(params or {})
        body.setdefault("_meta", meta(**kw))
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}
        if REQUESTS.get(method) in self.wire.defs:  # a method of this revision: the request is checked too
            self.wire.request(message)
        self.methods[rid] = method
        await self.proc.send(message)

    def check(self, message: dict[str, Any]) -> dict[str, Any]:
        if "method" in message:
            assert "id" not in message, f"the server sent a request: {message}"
            self.wire.notification(message)
        elif "error" in message:
            check_error(self.wire, message)
        else:
            self.wire.response(self.methods[message["id"]], message)
        return message

    async def recv(self) -> dict[str, Any]:
        return self.check(await self.proc.recv())

    async def until(self, rid: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        response, before = await self.proc.until(rid)
        for message in before:
            self.check(message)
        return self.check(response), before

    async def until_with(
        self, method: str, params: dict[str, Any] | None = None, *, rid: Any, **kw: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send a request; its response and the messages that came before it."""
        await self.send(method, params, rid=rid, **kw)
        return await self.until(rid)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, *, rid: Any, **kw: Any
    ) -> dict[str, Any]:
        response, before = await self.until_with(method, params, rid=rid, **kw)
        assert before == []
        return response
