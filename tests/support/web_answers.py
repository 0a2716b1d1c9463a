"""Helpers for the tests of the browser answerer's answer server over plain HTTP: claiming an
opened round's link as the browser would, the headers of an API call, and a small form."""

from __future__ import annotations

import re

import httpx
from ui.web_rounds import Opened

from mcp_elicit.forms import Form, Integer, String


async def claim(client: httpx.AsyncClient, opened: Opened) -> str:
    """Open the link as a browser would; the page's CSRF token."""
    first = await client.get(opened.url, headers={"Sec-Fetch-Site": "none"})
    assert first.status_code == 303
    assert first.headers["location"] == "/form"
    assert "httponly" in first.headers["set-cookie"].lower()
    assert "samesite=strict" in first.headers["set-cookie"].lower()
    form = await client.get(f"{opened.base}/form")
    assert form.status_code == 200
    found = re.search(r'data-csrf="([^"]+)"', form.text)
    assert found is not None
    return found.group(1)


def api(csrf: str, **headers: str) -> dict[str, str]:
    return {"X-MCP-Elicit-CSRF": csrf, "Content-Type": "application/json", **headers}


#: A small form the answerer's tests share, over plain HTTP and in a real browser alike.
SMALL = Form(guests=Integer(title="Guests", minimum=1, maximum=20), note=String(title="Note", required=False))
