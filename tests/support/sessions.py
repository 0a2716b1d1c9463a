"""Opening a 2025-11-25 session over raw HTTP, for transport tests that need to see the
bytes: ``initialize`` (checked against the schema), ``notifications/initialized``, and
the headers every later request of the session carries; and the server those tests ask
a person through (``ask_name``), to which each test module adds its own tools."""

from __future__ import annotations

from typing import Any

import httpx

from mcp_elicit import Context, Form, Server, String

from support.wire import WireChecker

__all__ = ["ACCEPT", "ask_name_server", "initialize_body", "open_session"]

ACCEPT = "application/json, text/event-stream"


def initialize_body(
    version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {"form": {}}} if capabilities is None else capabilities,
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


async def open_session(
    http: httpx.AsyncClient,
    url: str,
    wire: WireChecker,
    *,
    version: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Initialize a session at ``url``; the headers of its later requests."""
    init = initialize_body(version, capabilities)
    wire.request(init)
    opened = await http.post(url, json=init, headers={"accept": ACCEPT})
    wire.response("initialize", opened.json())
    headers = {
        "accept": ACCEPT,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    wire.notification(note)
    initialized = await http.post(url, json=note, headers=headers)
    assert initialized.status_code == 202, initialized.text
    return headers


def ask_name_server(name: str, **options: Any) -> Server:
    """A server whose tool ``ask_name`` asks for a name and greets it (or names the action)."""
    app = Server(name, **options)

    @app.tool()
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"hello {answer.content['name'] if answer.content else answer.action}"

    return app
