"""Headless Chromium driven by Playwright, for tests of pages a person uses.

The browser is Debian's ``chromium`` (``/usr/bin/chromium``, installed by ``make browser``;
``MCP_ELICIT_CHROMIUM`` names another), driven by the ``playwright`` package from PyPI (the
``dev`` extra). Playwright's own browser downloads are never used. Without either, the
fixtures skip, saying what is missing.

Fixtures (tests/ui/conftest.py provides them to the UI tests; elsewhere import them into a test
module; ``anyio_backend`` is module-scoped here so one browser serves a whole module, in the tests'
own event loop)::

    from support.browser import anyio_backend, browser, new_page

    async def test_something(new_page: NewPage) -> None:
        page = await new_page()                    # a fresh context (cookies, storage) and page
        phone = await new_page(**PHONE)            # phone-sized
        await page.goto(url)

Nothing leaves the machine: Chromium resolves no name but ``localhost``
(``--host-resolver-rules``), runs no background networking, and every context answers any
request for a non-loopback address with a stub page (so a popup to ``https://example.com``
opens, with that URL, and nothing is fetched). Each launch gets a fresh temporary profile
(Playwright's non-persistent launch makes one and removes it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Route

__all__ = [
    "ARGS",
    "DESKTOP",
    "PHONE",
    "NewPage",
    "anyio_backend",
    "block_outside",
    "browser",
    "chromium_path",
    "missing",
    "new_page",
]

ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
)
DESKTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 900}}
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_STUB = "<!doctype html><title>Stub page</title><p>A stub: tests never leave this machine.</p>"

NewPage = Callable[..., Awaitable["Page"]]


def chromium_path() -> Path:
    return Path(os.environ.get("MCP_ELICIT_CHROMIUM", "/usr/bin/chromium"))


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (pip install -e '.[dev]', or make install)"
    path = chromium_path()
    if not (path.is_file() and os.access(path, os.X_OK)) and shutil.which(str(path)) is None:
        return f"no Chromium at {path} (make browser installs Debian's chromium)"
    return None


async def block_outside(context: BrowserContext) -> None:
    """Answer every request for a non-loopback host with a stub page."""

    async def stub(route: Route) -> None:
        await route.fulfill(status=200, content_type="text/html", body=_STUB)

    def outside(url: str) -> bool:
        return urlsplit(url).hostname not in _LOOPBACK and url.startswith(("http:", "https:"))

    await context.route(outside, stub)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(chromium_path()), headless=True, args=list(ARGS)
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def new_page(browser: Browser) -> AsyncIterator[NewPage]:
    contexts: list[BrowserContext] = []

    async def make(**options: Any) -> Page:
        context = await browser.new_context(**{**DESKTOP, **options})
        context.set_default_timeout(5_000)
        await block_outside(context)
        contexts.append(context)
        return await context.new_page()

    try:
        yield make
    finally:
        for context in contexts:
            await context.close()
