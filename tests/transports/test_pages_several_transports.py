"""Where the URL-mode pages are when one ``Server`` is served by several transports at
once and has no ``public_url``: each HTTP app's clients get links to that app (the one
their request came through, which serves the pages too), and a stdio client gets links to
the loopback page server stdio runs while it serves, whichever transport came first.
Real uvicorn apps on 127.0.0.1 and stdio over real pipes in this process."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import InProcess, uvicorn_server
from support.stdio_pipes import Pipes, stdio_session
from support.url_mode import Mcp, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
URL_CAPS = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def link_over_http(running: InProcess, wire: WireChecker) -> str:
    """The page link a 2026-07-28 client of ``running`` is given for ``use_key``."""
    async with httpx.AsyncClient(timeout=10) as http:
        out = (await Mcp(http, running.url, wire).call())["result"]
    assert out.get("resultType") == "input_required", out
    ((_, request),) = out["inputRequests"].items()
    link: str = request["params"]["url"]
    return link


async def link_over_stdio(pipes: Pipes) -> str:
    """The page link the stdio client is asked to open for ``use_key``, which opens (then
    the question is declined)."""
    pipes.write({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "use_key"}})
    asked: dict[str, Any] = await pipes.read()
    assert asked.get("method") == "elicitation/create", asked
    assert await opens(asked["params"]["url"]) == 200
    pipes.write({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
    answer = (await pipes.until(7))[-1]
    assert answer["result"]["content"][0]["text"] == "no key (decline)"
    link: str = asked["params"]["url"]
    return link


async def opens(link: str) -> int:
    async with httpx.AsyncClient(timeout=10, follow_redirects=True) as browser:
        return (await browser.get(link)).status_code


def local(port: int) -> str:
    return f"http://127.0.0.1:{port}/mcp-elicit/flows/"


async def test_each_apps_clients_get_links_to_that_app(wire: WireChecker) -> None:
    app = build(MemoryStore())
    first, second = StreamableHTTP(app), StreamableHTTP(app)
    async with uvicorn_server(first) as on_first, uvicorn_server(second) as on_second:
        assert (await link_over_http(on_first, wire)).startswith(local(on_first.port))
        link = await link_over_http(on_second, wire)
        assert link.startswith(local(on_second.port))
        assert await opens(link) == 200


@pytest.mark.parametrize("first", ["http", "stdio"])
async def test_a_stdio_client_gets_loopback_links_an_http_client_the_apps(
    first: str, wire: WireChecker
) -> None:
    app: Server = build(MemoryStore())
    http_app = StreamableHTTP(app) if first == "http" else None
    async with stdio_session(app, capabilities=URL_CAPS) as pipes:
        if http_app is None:
            http_app = StreamableHTTP(app)  # made while stdio serves
        async with uvicorn_server(http_app) as on_http:
            over_stdio = await link_over_stdio(pipes)
            assert over_stdio.startswith("http://127.0.0.1:") and not over_stdio.startswith(
                local(on_http.port)
            )
            assert (await link_over_http(on_http, wire)).startswith(local(on_http.port))
    # stdio stopped: its page server with it; the HTTP app's clients still get the app's
    async with uvicorn_server(http_app) as on_http:
        assert (await link_over_http(on_http, wire)).startswith(local(on_http.port))
    assert app.url_mode.page_host is not None
