"""What the client's tests against a scripted 2026-07-28 server share: the scripted server, a
form and the ``input_required`` result that asks it, and a scripted yes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from client.fakes import discover, error, result

from mcp_elicit.client import Scripted

FORM = {"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]}


def ask(message: str = "Confirm?", schema: Any = FORM) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


def yes() -> Scripted:
    return Scripted.from_script([{"content": {"confirmed": True}}, {"action": "accept"}])


class Server:
    """A modern server function with tools and a multi round-trip tool call."""

    def __init__(self) -> None:
        self.tools: list[dict[str, Any]] = [{"name": "t", "inputSchema": {"type": "object"}}]
        self.calls: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        method = message["method"]
        params = message.get("params", {})
        if method == "server/discover":
            return [discover(message)]
        if method == "tools/list":
            return [
                result(
                    message,
                    {"resultType": "complete", "tools": self.tools, "ttlMs": 0, "cacheScope": "private"},
                )
            ]
        if method == "tools/call":
            self.calls.append(params)
            return self.call(message, params)
        return [error(message, -32601, "no")]

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        return [result(message, {"resultType": "complete", "content": []})]


async def _sample(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}


async def _roots() -> list[dict[str, Any]]:
    return [{"uri": "file:///work", "name": "work"}]


class Asking(Server):
    """``tools/call`` needs ``confirm`` first; the state is an odd string to echo exactly."""

    STATE = ' {"nonce": "é\\u00e9", "x": [1, 2]}  '

    def call(self, message: dict[str, Any], params: dict[str, Any]) -> list[Any]:
        if "inputResponses" not in params:
            return [
                result(
                    message,
                    {
                        "resultType": "input_required",
                        "inputRequests": {"confirm": ask()},
                        "requestState": self.STATE,
                    },
                )
            ]
        return [
            result(
                message,
                {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": str(params["inputResponses"])}],
                },
            )
        ]
