"""What the tests of isolation between principals over real HTTP share: the server ann and bob
both use, their tokens and cookies, a peer's requests, and the fixtures serving it on
127.0.0.1 with an HTTP client (a test module assigns them to its own names)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.forms import Boolean
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import parse_sse
from support.principals import CookieAuth, Tokens
from support.procs import InProcess, uvicorn_server
from support.sessions import ACCEPT, initialize_body
from support.wire import WireChecker

TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"elicitation": {"form": {}, "url": {}}, "extensions": {TASKS: {}}}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": CAPS,
    "io.modelcontextprotocol/clientInfo": {"name": "iso", "version": "1"},
}


def build(store: MemoryStore) -> Server:
    app = Server(
        "isolation",
        auth=Tokens(),
        state_keys=KeyRing([bytes(range(100, 132))]),
        store=store,
        page_auth=CookieAuth(),
        flow_wait=0.2,
        task_poll=0.05,
    )

    @app.tool(task="optional")
    async def deploy(ctx: Context) -> str:
        """Becomes a task, then asks."""
        await ctx.start_task()
        answer = await ctx.elicit("Go?", Form(go=Boolean()), key="go")
        return f"{ctx.principal.subject if ctx.principal else '-'}: {answer.action} {answer.content}"

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action} {answer.content}"

    @app.prompt()
    async def guided(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action} {answer.content}"

    @app.resource("iso://note")
    async def note(ctx: Context) -> str:
        answer = await ctx.elicit("Format?", Form(fmt=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action} {answer.content}"

    @app.resource(
        "iso://notes/{user}",
        readable=lambda principal, user: principal is not None and principal.subject == user,
    )
    def notes(user: str) -> str:
        return f"{user}'s notes"

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        return f"key of {len(await answer.secret.reveal())} characters"

    return app


class Peer:
    """One principal talking 2026-07-28 to the server."""

    def __init__(self, http: httpx.AsyncClient, url: str, wire: WireChecker, name: str) -> None:
        self.http, self.url, self.wire, self.name = http, url, wire, name
        self.ids = 0

    def headers(self, method: str, name: str | None = None) -> dict[str, str]:
        headers = {
            "accept": ACCEPT,
            "authorization": f"Bearer tok-{self.name}",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
        }
        if name is not None:
            headers["mcp-name"] = name
        return headers

    async def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return (await self.exchange(method, params))[1]

    async def exchange(self, method: str, params: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and the JSON-RPC response of one request."""
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": {**params, "_meta": META}}
        name = params.get("uri") if method == "resources/read" else params.get("name", params.get("taskId"))
        response = await self.http.post(self.url, json=body, headers=self.headers(method, name))
        assert response.status_code in (200, 400, 429), response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            message: dict[str, Any] = orjson.loads(parse_sse(response.text)[-1])
        else:
            message = response.json()
        self.wire.response(method, message)
        return response.status_code, message

    async def status(self, task_id: str) -> dict[str, Any]:
        result: dict[str, Any] = (await self.request("tasks/get", {"taskId": task_id}))["result"]
        return result


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess]]:
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app, keepalive=0.2), lifespan="on") as running:
        yield app, running
    await store.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def _open(http: httpx.AsyncClient, url: str, token: str) -> dict[str, str]:
    headers = {"accept": ACCEPT, "authorization": f"Bearer {token}"}
    opened = await http.post(url, json=initialize_body(), headers=headers)
    assert opened.status_code == 200, opened.text
    session = {
        **headers,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=session)).status_code == 202
    return session
