"""``Client(log_level=...)``: asking the server for its log messages, at both revisions.

A server sends ``notifications/message`` only to a client that asked for a level: at
2026-07-28 the request's ``_meta`` carries it, at 2025-11-25 ``logging/setLevel`` sets
it for the session. The client had no way to ask, so ``on_notification`` never heard
a log message at 2026-07-28, though the docstring promised it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Client
from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_client import HttpTransport, connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

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
