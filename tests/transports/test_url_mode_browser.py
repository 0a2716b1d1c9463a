"""Hosted URL mode in a real browser (Playwright driving Debian's Chromium, headless): the
project's client calls a tool that needs a secret; the person opens the URL the client was
given, types the secret into the server's page, and the tool call completes. A browser
signed in as another principal is refused and the flow is not completed."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.browser import NewPage, anyio_backend, browser, new_page
from support.principals import Tokens
from support.procs import uvicorn_server

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["anyio_backend", "browser", "new_page"]  # fixtures

pytestmark = pytest.mark.anyio
SECRET = "sk-browser-4f9a-typed-by-a-person"


class SignedInAs:
    """The server's own sign-in, as far as its pages are concerned: a session cookie."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return cookies.get("session-user")


def build(store: MemoryStore, key: str = "example_api_key", title: str | None = None) -> Server:
    app = Server(
        "browser-url-mode",
        title=title,
        state_keys=KeyRing([bytes(range(150, 182))]),
        store=store,
        auth=Tokens(),
        page_auth=SignedInAs(),
        flow_wait=1.0,
    )

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret(key, message="Enter your Example API key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        return f"key of {len(await answer.secret.reveal())} characters"

    return app


class Person:
    """Opens the URL in a browser signed in as ``user`` and types the secret."""

    modes = frozenset({"url"})

    def __init__(
        self,
        new_page: NewPage,
        base: str,
        user: str,
        look: Callable[[Page], Awaitable[None]] | None = None,
        **options: Any,
    ) -> None:
        self.new_page = new_page
        self.base = base
        self.user = user
        self.look = look  # when given: only look at the page, then cancel
        self.options = options
        self.outcome = ""
        self.titles: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.mode == "url"
        assert request.url is not None
        page = await self.new_page(**self.options)
        await page.context.add_cookies([{"name": "session-user", "value": self.user, "url": self.base}])
        response = await page.goto(request.url)
        assert response is not None
        if response.status != 200:
            self.outcome = f"refused {response.status}: {await page.inner_text('h1')}"
            return ElicitAnswer.cancel()
        assert "?t=" not in page.url, "the single-use token is gone from the address bar"
        if self.look is not None:
            self.titles.append(await page.title())
            await self.look(page)
            await page.get_by_role("button", name="Cancel").click()
            await page.get_by_role("status").wait_for()
            self.titles.append(await page.title())
            return ElicitAnswer.cancel()
        await page.get_by_label("example_api_key").fill(SECRET)
        await page.get_by_role("button", name="Save").click()
        await page.get_by_role("status").wait_for()
        self.outcome = await page.inner_text("main")
        return ElicitAnswer.accept()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def _call(url: str, person: Person, token: str) -> dict[str, Any]:
    async with connect_http(
        url, answerer=person, headers={"authorization": f"Bearer {token}"}, timeout=20
    ) as client:
        return await client.call_tool("use_key", {})


async def test_the_person_types_the_secret_and_the_call_completes(new_page: NewPage) -> None:
    store = MemoryStore()
    async with uvicorn_server(StreamableHTTP(build(store))) as running:
        base = f"http://127.0.0.1:{running.port}"
        person = Person(new_page, base, "alice")
        result = await _call(running.url, person, "tok-alice")
        assert "Saved" in person.outcome
        assert result["content"][0]["text"] == f"key of {len(SECRET)} characters"
    everything = b"".join(value for (value, _) in store._data.values())
    assert SECRET.encode() not in everything
    await store.close()


async def test_the_pages_form_comes_with_origin_null_and_is_served(new_page: NewPage) -> None:
    """The pages send no referrer (``Referrer-Policy: no-referrer``), so a browser sends
    their own form's POST with ``Origin: null`` (Fetch, "append a request Origin header"):
    the pages must take it, though ``/mcp`` refuses it (403)."""
    store = MemoryStore()
    mcp = StreamableHTTP(build(store))
    origins: list[str | None] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and "/flows/" in scope["path"]:
            origins.append(dict(scope["headers"]).get(b"origin", b"").decode() or None)
        await mcp(scope, receive, send)

    async with uvicorn_server(recording) as running:
        person = Person(new_page, f"http://127.0.0.1:{running.port}", "alice")
        result = await _call(running.url, person, "tok-alice")
    assert origins == ["null"]
    assert "Saved" in person.outcome
    assert result["content"][0]["text"] == f"key of {len(SECRET)} characters"
    await store.close()


async def test_another_principals_browser_is_refused(new_page: NewPage) -> None:
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        base = f"http://127.0.0.1:{running.port}"
        mallory = Person(new_page, base, "mallory")
        result = await _call(running.url, mallory, "tok-alice")
        assert mallory.outcome.startswith("refused 403: Not your request")
        assert result["content"][0]["text"] == "no key (cancel)"
        assert await app.url_mode.vault.get("vault", "example_api_key", "alice") is None
        assert await app.url_mode.vault.get("vault", "example_api_key", "mallory") is None
    await store.close()


async def test_at_320_px_long_names_wrap_instead_of_widening_the_page(new_page: NewPage) -> None:
    """WCAG 1.4.10 (reflow): at 320 CSS px, a long secret name and a long user name (no
    spaces to break at) wrap; nothing of the page needs sideways scrolling to be read."""
    store = MemoryStore()
    user = "alice.with.a.long.account.name.at.the.subdivision.example-company.com"
    key = "example_api_key_for_the_integration_with_a_long_name"
    widths: list[int] = []

    async def look(page: Page) -> None:
        widths.extend(await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]"))

    async with uvicorn_server(StreamableHTTP(build(store, key=key))) as running:
        base = f"http://127.0.0.1:{running.port}"
        person = Person(new_page, base, user, look, viewport={"width": 320, "height": 640})
        result = await _call(running.url, person, f"tok-{user}")
        assert result["content"][0]["text"] == "no key (cancel)"
    assert widths[0] <= widths[1], f"the page is {widths[0]} px wide in a {widths[1]} px window"
    await store.close()


async def test_the_tabs_title_says_which_server_asks(new_page: NewPage) -> None:
    """WCAG 2.4.2: a person choosing among tabs (or told the title by a screen reader) sees
    which server asks for the secret, and which server's page says it is done."""
    store = MemoryStore()

    async def look(page: Page) -> None:
        return None

    async with uvicorn_server(StreamableHTTP(build(store, title="Acme Bookings"))) as running:
        person = Person(new_page, f"http://127.0.0.1:{running.port}", "alice", look)
        await _call(running.url, person, "tok-alice")
    assert person.titles == ["Acme Bookings asks for your example_api_key", "Done · Acme Bookings"]
    await store.close()


async def test_the_focused_secret_field_says_who_asks_and_for_whom(new_page: NewPage) -> None:
    """The page puts focus straight in the secret's field, past the line naming the server
    and the user: a screen reader starts there, so the field itself carries that line (and
    why a value was refused), and the person hears whose page it is before typing."""
    from playwright.async_api import expect

    store = MemoryStore()
    who = re.compile(r"Requested by the server Acme Bookings for the user alice\. If that is not you")

    async def look(page: Page) -> None:
        field = page.get_by_label("example_api_key")
        await expect(field).to_be_focused()
        await expect(field).to_have_accessible_description(who)
        await field.fill("   ")
        await page.keyboard.press("Enter")
        await expect(page.get_by_role("alert")).to_have_text("Enter a value (at most 8192 characters).")
        await expect(field).to_be_focused()
        await expect(field).to_have_accessible_description(re.compile(r"^Enter a value .*" + who.pattern))

    async with uvicorn_server(StreamableHTTP(build(store, title="Acme Bookings"))) as running:
        person = Person(new_page, f"http://127.0.0.1:{running.port}", "alice", look)
        assert (await _call(running.url, person, "tok-alice"))["content"][0]["text"] == "no key (cancel)"
    await store.close()


class SlowTyper:
    """Opens the page (its clock under the test's hand), starts typing, and lets the time
    run out, looking at what the page says on the way; then gives up (cancel)."""

    modes = frozenset({"url"})

    def __init__(self, new_page: NewPage, base: str) -> None:
        self.new_page = new_page
        self.base = base

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        from playwright.async_api import expect

        assert request.url is not None
        page = await self.new_page()
        await page.clock.install()
        await page.context.add_cookies([{"name": "session-user", "value": "alice", "url": self.base}])
        await page.goto(request.url)
        note = page.locator("#expiry-note")
        await expect(note).to_contain_text("This page expires in 10 minutes")
        warning = page.get_by_role("alert")
        await expect(warning).to_have_count(0)
        await page.get_by_label("example_api_key").fill("sk-half-typ")
        await page.clock.fast_forward("09:05")  # 55 s left: warned, with the time left shown
        await expect(warning).to_have_text(re.compile(r"^This page expires in 1 minute\. Save before then"))
        await expect(page.locator("#expiry-left")).to_have_text(re.compile(r"^0:5\d$"))
        await page.clock.fast_forward("00:20")
        await expect(page.locator("#expiry-left")).to_have_text(re.compile(r"^0:3\d$"))
        await expect(page.get_by_role("button", name="Save")).to_be_enabled()
        await page.clock.fast_forward("00:40")  # past the end: nothing more can be typed
        await expect(warning).to_have_text(
            "This page has expired. Nothing was saved. Go back to your application and ask again: "
            "it gives you a new link."
        )
        await expect(page.get_by_label("example_api_key")).to_be_hidden()
        await expect(page.get_by_role("button", name="Save")).to_be_hidden()
        assert await page.locator("#value").input_value() == ""  # what was typed is gone
        assert (await page.title()).startswith("Page expired · ")
        return ElicitAnswer.cancel()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def test_the_page_warns_before_it_expires_and_says_when_it_has(new_page: NewPage) -> None:
    """WCAG 2.2.1: the page says from the start how long it lasts, warns a minute before it
    expires (an alert, then the time left), and once expired says so and what to do next,
    rather than taking a secret it would refuse."""
    store = MemoryStore()
    async with uvicorn_server(StreamableHTTP(build(store))) as running:
        person = SlowTyper(new_page, f"http://127.0.0.1:{running.port}")
        assert (await _call(running.url, person, "tok-alice"))["content"][0]["text"] == "no key (cancel)"
    await store.close()


async def test_a_secret_saved_after_the_page_expired_is_told_so(new_page: NewPage) -> None:
    """The page's own clock fell behind the server's (the laptop slept, the tab was frozen), so
    the form is still there past the page's end: Save then says the request expired and what
    to do next, in a page titled with the server, and shows nothing of what was typed."""
    store = MemoryStore()
    now = [1_000_000.0]
    app = Server(
        "browser-url-mode",
        title="Acme Bookings",
        state_keys=KeyRing([bytes(range(150, 182))]),
        store=store,
        page_auth=SignedInAs(),
        clock=lambda: now[0],
    )
    async with uvicorn_server(StreamableHTTP(app)) as running:
        base = f"http://127.0.0.1:{running.port}"
        flow, token = await app.url_mode.flows.start("secret", "example_api_key", "alice")
        page = await new_page()
        await page.context.add_cookies([{"name": "session-user", "value": "alice", "url": base}])
        await page.goto(f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
        await page.get_by_label("example_api_key").fill(SECRET)
        now[0] += app.url_mode.flow_ttl + 1
        await page.context.clear_cookies(name=re.compile(r"^mcp_elicit_"))  # its max-age, reached
        await page.get_by_role("button", name="Save").click()
        await page.get_by_role("heading", name="This request has expired").wait_for()
        assert "Go back to your application and start again" in await page.inner_text("main")
        assert await page.title() == "This request has expired · Acme Bookings"
        assert SECRET not in await page.content()
        assert await app.url_mode.vault.get("vault", "example_api_key", "alice") is None
    await store.close()
