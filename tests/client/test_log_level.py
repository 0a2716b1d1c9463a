"""``Client(log_level=...)``: asking the server for its log messages, at both revisions.

A server sends ``notifications/message`` only to a client that asked for a level: at
2026-07-28 the request's ``_meta`` carries it, at 2025-11-25 ``logging/setLevel`` sets
it for the session. The client had no way to ask, so ``on_notification`` never heard
a log message at 2026-07-28, though the docstring promised it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Client
from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_client import HttpTransport, connect_http
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.meta import LOG_LEVEL_META_KEY, LOG_LEVELS

from support.procs import uvicorn_server
from support.wire import SPEC_DIR

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]

server = Server("chatty")


@server.tool()
async def chatty(ctx: Context) -> str:
    await ctx.debug("too fine to hear")
    await ctx.info("started")
    await ctx.warning("almost out of coffee")
    return "done"


@pytest.mark.parametrize("revision", REVISIONS)
async def test_log_messages_at_the_level_asked_reach_on_notification(revision: str) -> None:
    heard: list[tuple[str, Any]] = []

    async def on_notification(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/message":
            heard.append((params["level"], params["data"]))

    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(
            running.url, versions=[revision], log_level="info", on_notification=on_notification
        ) as client:
            result = await client.call_tool("chatty")
    assert result["content"][0]["text"] == "done"
    assert heard == [("info", "started"), ("warning", "almost out of coffee")]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_without_a_level_no_log_message_is_sent(revision: str) -> None:
    heard: list[str] = []

    async def on_notification(method: str, params: Mapping[str, Any]) -> None:
        heard.append(method)

    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(running.url, versions=[revision], on_notification=on_notification) as client:
            await client.call_tool("chatty")
    assert "notifications/message" not in heard


def test_an_unknown_level_is_refused_naming_the_levels() -> None:
    with pytest.raises(ConfigError, match=r"log_level 'verbose'.*debug, info, notice, warning, error"):
        Client(HttpTransport("http://127.0.0.1:9/mcp"), log_level="verbose")


def refusing_set_level(app: Any, code: int) -> Any:
    """``app``, but each ``logging/setLevel`` is answered with the JSON-RPC error ``code``
    (the server still declares ``logging``), as a server whose logging fails would."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            event = await receive()
            body, more = body + event.get("body", b""), event.get("more_body", False)
        message = json.loads(body)
        if message.get("method") == "logging/setLevel":
            error = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": code, "message": "no logs here"},
            }
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": json.dumps(error).encode()})
            return None
        replayed = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive_again() -> Any:
            return replayed.pop() if replayed else await receive()

        return await app(scope, receive_again, send)

    return wrapped


@pytest.mark.parametrize("code", [-32601, -32603])
async def test_a_server_refusing_set_level_is_still_connected_and_the_refusal_reported(code: int) -> None:
    """Logs are an extra: a server that declares ``logging`` but refuses or fails
    ``logging/setLevel`` is used without them (as a client calling it by hand would go
    on), and ``report`` says so. The refusal failed the whole connection."""
    reports: list[str] = []
    async with uvicorn_server(refusing_set_level(StreamableHTTP(server), code)) as running:
        async with connect_http(
            running.url, versions=["2025-11-25"], log_level="info", report=reports.append
        ) as client:
            result = await client.call_tool("chatty")
    assert result["content"][0]["text"] == "done"
    assert len(reports) == 1, reports
    assert "logging/setLevel" in reports[0] and "no logs here" in reports[0], reports


async def test_a_renewed_session_is_asked_for_logs_again() -> None:
    """At 2025-11-25 the level belongs to the session: when the server ends it and the
    client opens another, ``logging/setLevel`` goes again, so log messages keep coming."""
    heard: list[Any] = []

    async def on_notification(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/message":
            heard.append(params["data"])

    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(
            running.url, versions=["2025-11-25"], log_level="warning", on_notification=on_notification
        ) as client:
            first = client.session.session_id  # type: ignore[union-attr]
            async with httpx.AsyncClient() as raw:
                ended = await raw.delete(
                    running.url, headers={"Mcp-Session-Id": first, "MCP-Protocol-Version": "2025-11-25"}
                )
            assert ended.status_code == 200
            await client.call_tool("chatty")
            assert client.session.session_id not in (None, first)  # type: ignore[union-attr]
    assert heard == ["almost out of coffee"]


def test_the_levels_and_the_meta_key_are_the_schemas() -> None:
    """The eight levels a ``log_level`` may name, and the ``_meta`` key that carries it,
    are those of the 2026-07-28 schema (``LoggingLevel``, ``RequestMetaObject``)."""
    schema = json.loads((SPEC_DIR / "2026-07-28" / "schema.json").read_text(encoding="utf-8"))
    assert sorted(LOG_LEVELS) == sorted(schema["$defs"]["LoggingLevel"]["enum"])
    meta = schema["$defs"]["RequestMetaObject"]["properties"]
    assert meta[LOG_LEVEL_META_KEY] == {**meta[LOG_LEVEL_META_KEY], "$ref": "#/$defs/LoggingLevel"}
