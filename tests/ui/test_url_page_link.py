"""A hosted URL-mode page's link in a real browser (Chromium): followed from a page of
another site (a web mail, a chat, a web client opening it in a tab), the link still
leads to the page. A redirect would keep that site as the initiator, and the browser
would not send the flow's SameSite=Strict cookie back to the page."""

from __future__ import annotations

import pytest
from playwright.async_api import Route

from mcp_elicit import KeyRing, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.browser import NewPage
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("opened", ["typed in the address bar", "followed from another site"])
async def test_a_page_link_leads_to_the_page_however_it_is_opened(new_page: NewPage, opened: str) -> None:
    server = Server("links", state_keys=KeyRing([bytes(range(8, 40))]), store=MemoryStore(), flow_ttl=60.0)
    async with uvicorn_server(StreamableHTTP(server)) as running:
        flow, token = await server.url_mode.flows.start("secret", "example_api_key", None)
        link = f"http://127.0.0.1:{running.port}/mcp-elicit/flows/{flow.id}?t={token}"
        page = await new_page()

        async def mail(route: Route) -> None:
            await route.fulfill(
                status=200, content_type="text/html", body=f'<a id="link" href="{link}">open</a>'
            )

        await page.context.route("http://mail.example/**", mail)
        if opened == "followed from another site":
            await page.goto("http://mail.example/")
            await page.click("#link")
        else:
            await page.goto(link)
        await page.get_by_text("Enter your example_api_key").wait_for()
        assert "?t=" not in page.url
        held = await server.url_mode.flows.get(flow.id)
        assert held is not None and held.browser is not None
