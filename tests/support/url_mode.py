"""What the URL-mode tests over real HTTP share: the server that asks for a secret through a
page, its sign-in stand-ins, a recorded MCP connection, and filling the page as a browser."""

from __future__ import annotations

import re
from typing import Any

import httpx

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.stores import Store

from support.principals import CookieAuth, Tokens
from support.wire import WireChecker

SECRET = "sk-test-7Hq2-very-secret-value"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def build(
    store: Store | None,
    *,
    auth: bool = False,
    flow_wait: float = 0.3,
    done: dict[str, int] | None = None,
    default_keys: bool = False,
) -> Server:
    """``use_key`` asks for a secret, then counts its side effect in ``done["use_key"]``.
    ``store`` None and ``default_keys``: the default SQLite file and its key file."""
    app = Server(
        "url-mode",
        state_keys=None if default_keys else KeyRing([bytes(range(40, 72))]),
        store=store,
        flow_wait=flow_wait,
        auth=Tokens() if auth else None,
        page_auth=CookieAuth() if auth else None,
    )

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        value = await answer.secret.reveal()
        if done is not None:
            done["use_key"] = done.get("use_key", 0) + 1
        return f"key accepted ({len(value)} characters)"

    return app


class Mcp:
    """``tools/call`` of ``tool`` at 2026-07-28 over plain HTTP, each request and answer
    checked against the schema; ``call`` gives the whole answer."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        wire: WireChecker,
        token: str | None = None,
        *,
        tool: str = "use_key",
    ) -> None:
        self.http, self.url, self.wire, self.ids = http, url, wire, 0
        self.token, self.tool = token, tool

    async def call(self, **extra: Any) -> dict[str, Any]:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": self.tool, "_meta": META, **extra},
        }
        self.wire.request(body)
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": self.tool,
        }
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        response = await self.http.post(self.url, json=body, headers=headers)
        message: dict[str, Any] = response.json()
        self.wire.response("tools/call", message)
        return message


async def _fill_page(
    browser: httpx.AsyncClient, url: str, action: str = "submit", value: str = SECRET
) -> httpx.Response:
    first = await browser.get(url)
    assert first.status_code == 303, first.text
    assert "?t=" not in first.headers["location"]
    location = first.url.join(first.headers["location"])
    page = await browser.get(location)
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert csrf is not None
    return await browser.post(location, data={"csrf": csrf.group(1), "action": action, "value": value})
