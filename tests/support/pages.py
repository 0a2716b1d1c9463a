"""A browser for the server's hosted URL-mode pages, as the page tests drive them over HTTP.

The test servers sign a person in by the ``who`` cookie (``CookieAuth``: alice or mallory;
``pages_server(store)`` is such a server on ``store``); ``open_page`` follows a link as a browser does: claimed (303), then the page (200);
``form_of`` is what its form sends when Save is pressed; ``to_the_provider_and_back``
presses "Continue" on a sign-in page, the provider consenting.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

import httpx

from mcp_elicit import KeyRing, Server
from mcp_elicit.stores import Store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

#: The state key of ``pages_server``.
KEY = bytes(range(8, 40))


class CookieAuth:
    """Signs in alice or mallory (the cookie ``who=<name>``), nobody else."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return {"alice": "alice", "mallory": "mallory"}.get(cookies.get("who", ""))


def pages_server(store: Store) -> Server:
    """A server on ``store`` whose pages know their user by ``CookieAuth``; flows last a minute."""
    return Server("race", state_keys=KeyRing([KEY]), store=store, page_auth=CookieAuth(), flow_ttl=60.0)


@asynccontextmanager
async def serving(apps: Sequence[Server]) -> AsyncIterator[list[str]]:
    """Each of ``apps`` served over Streamable HTTP on 127.0.0.1: their base URLs, in order."""
    async with AsyncExitStack() as stack:
        bases = []
        for app in apps:
            running = await stack.enter_async_context(uvicorn_server(StreamableHTTP(app)))
            bases.append(f"http://127.0.0.1:{running.port}")
        yield bases


def browser(who: str | None = None) -> httpx.AsyncClient:
    """A browser signed in as ``who`` (None: nobody)."""
    return httpx.AsyncClient(timeout=10, cookies={"who": who} if who else None)


async def open_page(client: httpx.AsyncClient, link: str) -> httpx.Response:
    """The page behind ``link``, opened as a browser does."""
    claimed = await client.get(link)
    assert claimed.status_code == 303, claimed.text
    page = await client.get(claimed.url.join(claimed.headers["location"]))
    assert page.status_code == 200, page.text
    return page


def form_of(page: httpx.Response, value: str) -> dict[str, str]:
    """What the page's form sends when Save is pressed with ``value`` typed."""
    fields = dict(re.findall(r'<input type="hidden" name="([a-z]+)" value="([^"]*)">', page.text))
    assert "csrf" in fields, page.text
    return {**{k: html.unescape(v) for k, v in fields.items()}, "action": "submit", "value": value}


async def to_the_provider_and_back(alice: httpx.AsyncClient, page: httpx.Response) -> httpx.URL:
    """ "Continue" on ``page`` (a new authorization request), the provider consenting: the
    callback URL the browser is sent back to."""
    assert "Continue to example" in page.text, page.text
    href = re.search(r'href="([^"]+/start)"', page.text)
    assert href is not None
    start = await alice.get(page.url.join(href.group(1)))
    assert start.status_code == 303, start.text
    back = await alice.get(start.headers["location"])
    assert back.status_code == 302, back.text
    return httpx.URL(back.headers["location"])
