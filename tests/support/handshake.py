"""What the client's tests at a handshake revision (2025-11-25) share: the revision, a form
and a URL elicitation, and the messages of a scripted server (its ``initialize`` answer and
its ``elicitation/create`` requests)."""

from __future__ import annotations

from typing import Any

from client.fakes import result

V2025 = ["2025-11-25"]
FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "default": "Ann"}, "age": {"type": "integer"}},
}
URL_ELICITATION = {
    "mode": "url",
    "message": "Sign in to Example",
    "url": "https://example.com/connect?e=e-1",
    "elicitationId": "e-1",
}


def init(message: dict[str, Any], version: str = "2025-11-25") -> dict[str, Any]:
    return result(
        message,
        {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "old", "version": "2"},
        },
    )


def elicit(rid: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": params}
