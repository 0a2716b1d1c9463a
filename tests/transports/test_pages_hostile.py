"""The URL-mode pages against hostile input, over real HTTP on 127.0.0.1: what a browser
(or a site driving one) can send that the pages' happy paths never do."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpx
import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server.flows import Flow
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.loopback_pages import LoopbackPages

from support.pages import browser, open_page
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio
SECRET = "sk-hostile-4f1c-secret-value"
#: The page's user, from the browser's own sign-in cookie ("who").
USERS = {"zoe": "Zoë", "mallory": "Mällory", "alice": "alice"}


class CookieAuth:
    """A stand-in for the site's own sign-in; names need not be ASCII."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return USERS.get(cookies.get("who", ""))


@dataclass
class Pages:
    app: Server
    base: str

    async def flow(self, principal: str | None, kind: str = "secret") -> tuple[Flow, str]:
        """A new flow for ``principal`` and its link (as the client is sent it)."""
        flow, token = await self.app.url_mode.flows.start(kind, "example_api_key", principal)
        return flow, f"{self.base}/mcp-elicit/flows/{flow.id}?t={token}"


@pytest.fixture
async def pages() -> AsyncIterator[Pages]:
    store = MemoryStore()
    app = Server("hostile", state_keys=KeyRing([bytes(range(8, 40))]), store=store, page_auth=CookieAuth())
    try:
        async with uvicorn_server(StreamableHTTP(app)) as running:
            yield Pages(app, f"http://127.0.0.1:{running.port}")
    finally:
        await store.close()


def csrf_of(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


async def test_a_user_whose_name_is_not_ascii_gets_their_page_and_others_are_refused(pages: Pages) -> None:
    flow, link = await pages.flow("Zoë")
    async with browser("mallory") as mallory, browser("zoe") as zoe:
        refused = await mallory.get(link)
        assert refused.status_code == 403, refused.text
        assert "another user" in refused.text
        untouched = await pages.app.url_mode.flows.get(flow.id)
        assert untouched is not None and untouched.status == "pending" and untouched.browser is None
        page = await open_page(zoe, link)
        assert "Zoë" in page.text
        saved = await zoe.post(page.url, data={"csrf": csrf_of(page), "action": "submit", "value": SECRET})
        assert saved.status_code == 200 and "Saved" in saved.text
    assert await pages.app.url_mode.vault.get("vault", "example_api_key", "Zoë") == SECRET.encode()
    assert await pages.app.url_mode.vault.get("vault", "example_api_key", "Mällory") is None


async def test_a_csrf_field_that_is_not_ascii_is_refused_and_saves_nothing(pages: Pages) -> None:
    flow, link = await pages.flow("alice")
    async with browser("alice") as alice:
        page = await open_page(alice, link)
        forged = await alice.post(page.url, data={"csrf": "é" * 32, "action": "submit", "value": SECRET})
        assert forged.status_code == 403, forged.text
        assert "out of date" in forged.text
        assert SECRET not in forged.text
        still = await pages.app.url_mode.flows.get(flow.id)
        assert still is not None and still.status == "pending"
        assert await pages.app.url_mode.vault.get("vault", "example_api_key", "alice") is None
        saved = await alice.post(page.url, data={"csrf": csrf_of(page), "action": "submit", "value": SECRET})
        assert "Saved" in saved.text


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example"},  # a name rebound to 127.0.0.1
        {"Host": "127.0.0.1", "Origin": "http://evil.example"},
    ],
    ids=["host", "origin"],
)
async def test_the_loopback_pages_refuse_another_site_rebound_to_loopback(headers: dict[str, str]) -> None:
    """Over stdio the pages are served on 127.0.0.1 to loopback connections only. A site
    whose name resolves to 127.0.0.1 (DNS rebinding) makes such a connection from the
    person's own browser: it must not be able to use a leaked link there."""
    store = MemoryStore()
    app = Server("hostile", state_keys=KeyRing([bytes(range(8, 40))]), store=store)
    loopback = LoopbackPages(app)
    try:
        base = await loopback.base_url()
        port = base.rsplit(":", 1)[1]
        flow, token = await app.url_mode.flows.start("secret", "example_api_key", None)
        link = f"{base}/mcp-elicit/flows/{flow.id}?t={token}"
        sent = {k: f"{v}:{port}" if k == "Host" else v for k, v in headers.items()}
        async with browser() as rebound, browser() as person:
            refused = await rebound.get(link, headers=sent)
            assert refused.status_code in (403, 421), refused.text
            assert "set-cookie" not in refused.headers
            still = await app.url_mode.flows.get(flow.id)
            assert still is not None and still.browser is None
            await open_page(person, link)  # the link is still there for the person
    finally:
        await loopback.close()
        await store.close()


def tab_title(page: httpx.Response) -> str:
    found = re.search(r"<title>(.*?)</title>", page.text, re.S)
    assert found is not None, page.text
    return html.unescape(found.group(1))


async def test_every_refusal_names_the_server_that_refused_in_its_title() -> None:
    """WCAG 2.4.2: a person with tabs from several servers sees in each refusal's title (its
    tab's name) which server refused, and the server's text stays text."""
    store = MemoryStore()
    title = "Acme <b>Bookings</b> & Co"
    app = Server(
        "hostile", title=title, state_keys=KeyRing([bytes(range(8, 40))]), store=store, page_auth=CookieAuth()
    )
    loopback = LoopbackPages(app)
    seen: dict[str, tuple[int, str]] = {}
    try:
        async with uvicorn_server(StreamableHTTP(app)) as running:
            pages = Pages(app, f"http://127.0.0.1:{running.port}")
            _, link = await pages.flow("alice")
            async with browser("mallory") as mallory, browser() as nobody, browser("alice") as alice:
                for name, client in (("403", mallory), ("401", nobody)):
                    refused = await client.get(link)
                    seen[name] = (refused.status_code, tab_title(refused))
                await open_page(alice, link)
                again = await mallory.get(link)  # used up
                seen["403 used"] = (again.status_code, tab_title(again))
                flow, link = await pages.flow("alice")
                await app.url_mode.flows.finish(flow, "cancelled")
                ended = await alice.get(link)
                seen["410"] = (ended.status_code, tab_title(ended))
        base = await loopback.base_url()
        port = base.rsplit(":", 1)[1]
        async with browser() as rebound:
            wrong_host = await rebound.get(
                f"{base}/mcp-elicit/flows/x", headers={"Host": f"evil.example:{port}"}
            )
            seen["421"] = (wrong_host.status_code, tab_title(wrong_host))
            other_site = await rebound.get(
                f"{base}/mcp-elicit/flows/x", headers={"Origin": "http://evil.example"}
            )
            seen["403 origin"] = (other_site.status_code, tab_title(other_site))
    finally:
        await loopback.close()
        await store.close()
    assert {name: status for name, (status, _) in seen.items()} == {
        "403": 403,
        "401": 401,
        "403 used": 403,
        "410": 410,
        "421": 421,
        "403 origin": 403,
    }
    for name, (_, said) in seen.items():
        assert said.endswith(f" · {title}"), (name, said)
