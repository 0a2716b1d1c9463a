"""The server's name on the endpoint page is at most ``NAME_MAX`` characters as shown: its
escapes (``inert_text``: a control character is written ``\\x1b``, four characters) count.
The name was cut to ``NAME_MAX`` first and made inert after, so a title of control
characters came out at up to six times that. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import re

import httpx
import pytest
from transports.test_http_endpoint_page import serving

from mcp_elicit import Server
from mcp_elicit.transports.endpoint_page import NAME_MAX, public_name

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("title", ["\x1b" * 500, "\u202e" * 500, "a\x00" * 300])
def test_the_name_shown_is_at_most_name_max_characters(title: str) -> None:
    shown = public_name("n", title, guarded=False)
    assert shown is not None and len(shown) <= NAME_MAX and shown.endswith("…")
    assert shown.isprintable()


async def test_the_text_page_shows_it_so() -> None:
    async with serving(Server("n", title="\x1b" * 500)) as origin, httpx.AsyncClient(timeout=10) as http:
        text = (await http.get(f"{origin}/mcp", headers={"accept": "text/plain"})).text
    [name] = re.findall(r"endpoint of the server (.*?): MCP clients", text)
    assert len(name) <= NAME_MAX and name.startswith("\\x1b")
