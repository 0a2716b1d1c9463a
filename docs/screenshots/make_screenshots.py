"""Regenerate the browser answerer's screenshots in this folder.

    .venv/bin/python docs/screenshots/make_screenshots.py

It asks the demo server's booking question and a URL-mode question through a real
``WebAnswerer``, opens each page in headless Chromium (Debian's, through Playwright: see
``tests/support/browser.py``), at desktop and phone width, and saves:

    web-form-desktop.png         web-form-phone.png
    web-url-consent-desktop.png  web-url-consent-phone.png

Everything stays on this machine; the answers are cancelled afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from mcp_elicit.core.client_inputs import Origin, ServerInfo, parse_elicitation  # noqa: E402
from mcp_elicit.forms import FormSchema  # noqa: E402
from mcp_elicit.ui.web import WebAnswerer  # noqa: E402

from support.browser import ARGS, DESKTOP, PHONE, block_outside, chromium_path, missing  # noqa: E402

SERVER = ServerInfo(
    name="bookings",
    version="1.0.0",
    title="Table bookings",
    where="stdio: mcp-elicit serve examples/demo_server.py",
)
ORIGIN = Origin("tools/call", "book_table")
URL = "https://accounts.example.com@login.ex\u0430mple.co.uk/oauth/authorize?client_id=bookings"


def _booking() -> FormSchema:
    sys.path.insert(0, str(ROOT / "examples"))
    from demo_server import Booking

    return FormSchema.from_type(Booking)


async def _shoot(kind: str, fill: bool) -> None:
    from playwright.async_api import async_playwright

    if kind == "form":
        params = {
            "message": "Booking a table at Noma, Copenhagen: how many, and when?",
            "requestedSchema": _booking().to_json(),
        }
    else:
        params = {"mode": "url", "message": "Sign in to pay the deposit", "url": URL, "elicitationId": "pay"}
    request = parse_elicitation(params, server=SERVER, key=kind, origin=ORIGIN)
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    task = asyncio.ensure_future(answerer.elicit(request))
    url = await links.get()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(chromium_path()), headless=True, args=list(ARGS)
        )
        try:
            for size, options in (("desktop", DESKTOP), ("phone", PHONE)):
                context = await browser.new_context(
                    **options, locale="en-GB", timezone_id="Europe/Copenhagen"
                )
                await block_outside(context)
                page = await context.new_page()
                if size == "desktop":
                    await page.goto(url)
                else:  # the link is single-use: the phone context takes the desktop's cookie
                    await context.add_cookies(await browser.contexts[0].cookies())
                    await page.goto(url.split("/r/")[0] + "/form")
                if fill and kind == "form":
                    await page.fill("#q0-f0-input", "25")
                    await page.fill("#q0-f1-input", "2026-12-24")
                    await page.get_by_label("On the terrace").check()
                    await page.get_by_label("vegan", exact=True).check()
                    await page.locator("#q0-f1-input").focus()
                    await page.wait_for_selector("#q0-f0-error:not(:empty)")
                    await page.locator("#q0-f1-input").blur()
                name = f"web-{'form' if kind == 'form' else 'url-consent'}-{size}.png"
                await page.screenshot(path=str(HERE / name), full_page=True)
                print(f"wrote docs/screenshots/{name}")
        finally:
            await browser.close()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def main() -> None:
    await _shoot("form", fill=True)
    await _shoot("url", fill=False)


if __name__ == "__main__":
    reason = missing()
    if reason is not None:
        sys.exit(f"cannot take screenshots: {reason}")
    asyncio.run(main())
