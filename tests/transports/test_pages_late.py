"""The URL-mode pages on their late and odd paths, over real HTTP on 127.0.0.1: a form sent
after its page expired or after the server restarted, sent twice, or from two tabs."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpx
import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.loopback_pages import LoopbackPages

from support.pages import browser, form_of, open_page
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio
SECRET = "sk-late-9b2e-secret-value"
KEY = bytes(range(8, 40))
USERS = {"alice": "alice", "mallory": "mallory"}


class CookieAuth:
    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return USERS.get(cookies.get("who", ""))


@dataclass
class Clock:
    """The server's clock, moved by the test (the flows' and the pages' time)."""

    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Pages:
    app: Server
    base: str
    clock: Clock

    async def link(self, principal: str | None = "alice") -> tuple[str, str]:
        flow, token = await self.app.url_mode.flows.start("secret", "example_api_key", principal)
        return flow.id, f"{self.base}/mcp-elicit/flows/{flow.id}?t={token}"


def make_server(store: MemoryStore, clock: Clock, key: bytes = KEY) -> Server:
    return Server(
        "late", state_keys=KeyRing([key]), store=store, page_auth=CookieAuth(), clock=clock, flow_ttl=60.0
    )


@pytest.fixture
async def pages() -> AsyncIterator[Pages]:
    store, clock = MemoryStore(), Clock()
    app = make_server(store, clock)
    try:
        async with uvicorn_server(StreamableHTTP(app)) as running:
            yield Pages(app, f"http://127.0.0.1:{running.port}", clock)
    finally:
        await store.close()


def title_of(page: httpx.Response) -> str:
    found = re.search(r"<title>(.*?)</title>", page.text, re.S)
    assert found is not None, page.text
    return html.unescape(found.group(1))


def forget_flow_cookies(client: httpx.AsyncClient) -> None:
    """What the browser does once the flow's cookie reaches its max-age."""
    for cookie in list(client.cookies.jar):
        if cookie.name.startswith("mcp_elicit_"):
            client.cookies.jar.clear(cookie.domain, cookie.path, cookie.name)


@pytest.mark.parametrize("cookie", ["dropped", "kept"])
async def test_a_form_sent_after_its_page_expired_says_so(pages: Pages, cookie: str) -> None:
    """The person left the page open past its lifetime, then pressed Save: they are told the
    request expired and what to do, not that the page 'is not available'."""
    _, link = await pages.link()
    async with browser("alice") as alice:
        page = await open_page(alice, link)
        pages.clock.now += 61
        if cookie == "dropped":
            forget_flow_cookies(alice)
        late = await alice.post(page.url, data=form_of(page, SECRET))
    assert late.status_code == 410, late.text
    assert "expired" in late.text and "start again" in late.text
    assert title_of(late).endswith(" · late")
    assert SECRET not in late.text
    assert await pages.app.url_mode.vault.get("vault", "example_api_key", "alice") is None


async def test_a_page_reloaded_after_it_expired_gives_advice_that_can_work(pages: Pages) -> None:
    """A reload carries no stamp, so an expired page cannot be told from a foreign one; the
    refusal's advice must work for both: its link was used up with it, so 'open the link
    again' led nowhere."""
    _, link = await pages.link()
    async with browser("alice") as alice:
        page = await open_page(alice, link)
        pages.clock.now += 61
        reloaded = await alice.get(page.url)
    assert reloaded.status_code == 403, reloaded.text
    assert "This page is not available" in reloaded.text
    assert "Open the link from your application again" not in reloaded.text
    assert "expired" in reloaded.text and "start again" in reloaded.text


async def test_an_expired_form_sent_by_anyone_else_or_forged_gets_the_refusal_it_always_got(
    pages: Pages,
) -> None:
    _, link = await pages.link()
    async with browser("alice") as alice, browser("mallory") as mallory, browser(None) as nobody:
        page = await open_page(alice, link)
        pages.clock.now += 61
        forget_flow_cookies(alice)
        form = form_of(page, SECRET)
        forged = {k: v for k, v in form.items() if k not in ("csrf", "action", "value")}
        assert forged, "the page's form carries what tells an expired page from a forged one"
        sent = {
            "another user": await mallory.post(page.url, data=form),
            "nobody signed in": await nobody.post(page.url, data=form),
            "no page field": await alice.post(
                page.url, data={k: form[k] for k in ("csrf", "action", "value")}
            ),
            "page field changed": await alice.post(
                page.url,
                data={**form, **{k: v[:-2] + ("AA" if v[-2:] != "AA" else "BB") for k, v in forged.items()}},
            ),
            "another flow's address": await alice.post(
                page.url.join("/mcp-elicit/flows/" + "x" * 22), data=form
            ),
        }
    for what, refused in sent.items():
        assert refused.status_code == 403, (what, refused.text)
        assert "This page is not available" in refused.text, what
        assert SECRET not in refused.text


@pytest.mark.parametrize("keys", ["kept", "new"])
async def test_a_form_sent_after_the_server_restarted_without_its_flows(keys: str) -> None:
    """The server restarted on a store in memory: the flow is gone with it. With its keys
    kept it knows it served the page and says the request ended; with new keys it cannot
    tell the form from a forged one, and refuses it as it always did."""
    clock = Clock()
    before, after = MemoryStore(), MemoryStore()
    try:
        first = make_server(before, clock)
        async with browser("alice") as alice:  # one browser: it keeps the flow's cookie across the restart
            async with uvicorn_server(StreamableHTTP(first)) as running:
                flow_id, link = await Pages(first, f"http://127.0.0.1:{running.port}", clock).link()
                page = await open_page(alice, link)
            second = make_server(after, clock, KEY if keys == "kept" else bytes(range(40, 72)))
            async with uvicorn_server(StreamableHTTP(second)) as running:
                address = f"http://127.0.0.1:{running.port}/mcp-elicit/flows/{flow_id}"
                late = await alice.post(address, data=form_of(page, SECRET))
        assert SECRET not in late.text
        if keys == "kept":
            assert late.status_code == 410, late.text
            assert "has ended" in late.text and "start again" in late.text
            assert title_of(late).endswith(" · late")
        else:
            assert late.status_code == 403, late.text
            assert "This page is not available" in late.text
        assert await second.url_mode.vault.get("vault", "example_api_key", "alice") is None
    finally:
        await before.close()
        await after.close()


async def test_a_form_sent_again_after_the_request_was_answered_says_its_value_was_not_used(
    pages: Pages,
) -> None:
    """The page open in two tabs (or Save pressed twice, or the form back from history):
    the first form saves; a later one must not be told 'Saved' when what it sent was
    dropped, and the value saved stays the first."""
    flow_id, link = await pages.link()
    async with browser("alice") as alice:
        first_tab = await open_page(alice, link)
        second_tab = await alice.get(first_tab.url)
        assert second_tab.status_code == 200 and "Save" in second_tab.text
        saved = await alice.post(first_tab.url, data=form_of(first_tab, SECRET))
        assert saved.status_code == 200 and "Saved" in saved.text
        back = await alice.get(first_tab.url)  # the back button: the page is not cached
        assert back.status_code == 200 and "Saved" in back.text
        other = "sk-late-another-value"
        late = {
            "second tab": await alice.post(second_tab.url, data=form_of(second_tab, other)),
            "sent twice": await alice.post(first_tab.url, data=form_of(first_tab, SECRET)),
            "declined later": await alice.post(
                first_tab.url, data={**form_of(first_tab, SECRET), "action": "decline"}
            ),
        }
    for what, answer in late.items():
        assert answer.status_code == 409, (what, answer.text)
        assert "had already been saved" in answer.text and "not used" in answer.text, what
        assert "Saved." not in answer.text, what
        assert title_of(answer).endswith(" · late")
        assert other not in answer.text and SECRET not in answer.text
    assert await pages.app.url_mode.vault.get("vault", "example_api_key", "alice") == SECRET.encode()
    ended = await pages.app.url_mode.flows.get(flow_id)
    assert ended is not None and ended.status == "complete"


@pytest.mark.parametrize("keys", ["kept", "new"])
async def test_a_form_sent_after_the_server_restarted_on_the_same_store_saves(keys: str) -> None:
    """The flows outlive the restart (a store on disk, Redis): the browser's cookie and the
    form's CSRF token do not depend on the keys, so the form saves, and the value is sealed
    under the keys the server has now."""
    clock, store = Clock(), MemoryStore()
    try:
        first = make_server(store, clock)
        async with browser("alice") as alice:
            async with uvicorn_server(StreamableHTTP(first)) as running:
                flow_id, link = await Pages(first, f"http://127.0.0.1:{running.port}", clock).link()
                page = await open_page(alice, link)
            second = make_server(store, clock, KEY if keys == "kept" else bytes(range(40, 72)))
            async with uvicorn_server(StreamableHTTP(second)) as running:
                address = f"http://127.0.0.1:{running.port}/mcp-elicit/flows/{flow_id}"
                saved = await alice.post(address, data=form_of(page, SECRET))
        assert saved.status_code == 200 and "Saved" in saved.text, saved.text
        assert await second.url_mode.vault.get("vault", "example_api_key", "alice") == SECRET.encode()
    finally:
        await store.close()


async def test_over_stdio_a_form_sent_after_its_page_expired_says_so() -> None:
    """The loopback page server of a stdio server (single user, no sign-in) tells it too."""
    clock, store = Clock(), MemoryStore()
    app = Server("late", state_keys=KeyRing([KEY]), store=store, clock=clock, flow_ttl=60.0)
    loopback = LoopbackPages(app)
    try:
        base = await loopback.base_url()
        flow, token = await app.url_mode.flows.start("secret", "example_api_key", None)
        async with browser(None) as person:
            page = await open_page(person, f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
            clock.now += 61
            forget_flow_cookies(person)
            late = await person.post(page.url, data=form_of(page, SECRET))
        assert late.status_code == 410 and "expired" in late.text, late.text
        assert SECRET not in late.text
    finally:
        await loopback.close()
        await store.close()
