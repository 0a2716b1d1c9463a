"""The page a person gets at the MCP endpoint, opened in a real Chromium (Playwright) and
run through axe-core (WCAG 2.2 A and AA, axe's best practices): light, dark, forced colours
and phone width. Served by uvicorn on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.versions import SUPPORTED

from support.axe import audit, blocking, describe
from support.browser import PHONE, NewPage, anyio_backend, browser, new_page
from support.procs import uvicorn_server

__all__ = ["anyio_backend", "browser", "new_page"]  # fixtures

pytestmark = pytest.mark.anyio

MEDIA: dict[str, dict[str, Any]] = {
    "light": {"color_scheme": "light"},
    "dark": {"color_scheme": "dark"},
    "forced colours": {"forced_colors": "active"},
    "phone": {**PHONE},
}


@pytest.mark.parametrize("media", list(MEDIA))
async def test_the_endpoint_page_is_accessible(new_page: NewPage, media: str) -> None:
    async with uvicorn_server(StreamableHTTP(Server("endpoint"))) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        page = await new_page(**MEDIA[media])
        response = await page.goto(url)
        assert response is not None and response.status == 405
        assert await page.title() == "MCP server endpoint · endpoint"  # whose tab it is
        said = await page.locator("main").inner_text()
        assert f"mcp-elicit check {url}" in said and all(revision in said for revision in SUPPORTED)
        found = await audit(page)
        assert not blocking(found), describe(found)
