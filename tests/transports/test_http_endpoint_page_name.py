"""The page a person gets at the MCP endpoint names whose endpoint it is: the server's title
as its ``serverInfo`` declares it, else its name, escaped (HTML) and made inert (text), cut
short when long; nothing else of the server. A server that needs a token names only what it
publishes to anyone (its resource metadata's ``resource_name``), never its ``serverInfo``.
The page named nobody. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import html

import httpx
import pytest
from transports.test_http_endpoint_page import CHROME, serving

from mcp_elicit import Server
from mcp_elicit.server.auth import Principal, ResourceMetadata, StaticTokens
from mcp_elicit.transports.endpoint_page import NAME_MAX

pytestmark = pytest.mark.anyio

MARKUP = 'Bookings <script>alert(1)</script> & "co"'


async def _page(server: Server, accept: str = CHROME, **options: object) -> str:
    async with serving(server, **options) as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": accept})
    assert response.status_code == 405
    return response.text


async def test_the_page_names_the_server_by_its_title() -> None:
    page = await _page(Server("bookings", "2.3.4", title="Table bookings", instructions="Ask for a table."))
    assert "<title>MCP server endpoint · Table bookings</title>" in page
    assert "the Model Context Protocol (MCP) endpoint of the server Table bookings:" in page
    assert "2.3.4" not in page and "Ask for a table" not in page  # nothing else of the server


async def test_without_a_title_it_is_named_by_its_name_and_as_text_too() -> None:
    assert "<title>MCP server endpoint · bookings</title>" in await _page(Server("bookings"))
    text = await _page(Server("bookings", title="Table bookings"), accept="text/plain")
    assert text.startswith("MCP server endpoint\n\n")
    assert "endpoint of the server Table bookings: MCP clients" in text


async def test_a_name_with_markup_is_escaped_and_one_with_controls_made_inert() -> None:
    page = await _page(Server("bookings", title=MARKUP))
    assert "<script>" not in page
    assert f"endpoint of the server {html.escape(MARKUP)}:" in page
    text = await _page(Server("bookings", title="Evil\x1b[2J\u202eco\nFake line"), accept="text/plain")
    assert "\x1b" not in text and "\u202e" not in text and "\nFake line" not in text
    assert "server Evil\\x1b[2J\\u202eco\\nFake line:" in text


async def test_a_long_name_is_cut_short() -> None:
    page = await _page(Server("bookings", title="B" * 5000))
    assert f"server {'B' * (NAME_MAX - 1)}…:" in page
    assert "B" * NAME_MAX not in page


async def test_a_server_that_needs_a_token_names_only_what_it_publishes() -> None:
    tokens = StaticTokens({"t": Principal("ann")})
    secret = Server("internal-payroll", title="Payroll (internal)")
    page = await _page(secret, auth=tokens)
    assert "payroll" not in page.lower()
    assert "<title>MCP server endpoint</title>" in page
    assert html.escape("This address is a Model Context Protocol (MCP) server's endpoint:") in page
    metadata = ResourceMetadata(["https://as.example"], resource_name="Example payments")
    page = await _page(secret, auth=tokens, resource_metadata=metadata)
    assert "<title>MCP server endpoint · Example payments</title>" in page
    assert "payroll" not in page.lower()
