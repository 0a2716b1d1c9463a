"""The pages a person lands on with nothing to answer, in a real Chromium: a refusal, a 404
and a 405 are laid out as the answer page is, with no second request (the stylesheet's own
request is refused as the page was, when the page was refused for its host name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest

from ui.web_rounds import form_request, open_round

from support.browser import NewPage
from support.web_page import SMALL, expect

if TYPE_CHECKING:
    from playwright.async_api import Page, Route

pytestmark = [pytest.mark.anyio]

_UNSTYLED = "rgba(0, 0, 0, 0)"


async def _styled(page: Page) -> None:
    """The page's box has the answer page's paper background and border: its style applied."""
    main = page.locator("main")
    await expect(main).to_be_visible()
    background = await main.evaluate("(node) => getComputedStyle(node).backgroundColor")
    radius = await main.evaluate("(node) => getComputedStyle(node).borderTopLeftRadius")
    assert background != _UNSTYLED and radius == "12px", (background, radius)


async def test_a_page_refused_for_its_host_name_is_styled_in_a_browser(new_page: NewPage) -> None:
    """A browser that reached the answer server under another name (DNS rebinding) got the 421
    page, and its stylesheet request went to the same name and was refused too: the page was
    bare. Every request of the page here goes to the answer server under another name."""
    async with open_round([form_request(SMALL)]) as opened, httpx.AsyncClient() as client:
        port = opened.host.split(":")[1]
        asked: list[str] = []

        async def rebound(route: Route) -> None:
            path = route.request.url.split(f":{port}", 1)[1]
            asked.append(path)
            answer = await client.get(f"{opened.base}{path}", headers={"Host": f"rebound.example:{port}"})
            assert answer.status_code == 421
            await route.fulfill(status=421, headers=dict(answer.headers), body=answer.content)

        page = await new_page()
        await page.route(f"http://rebound.example:{port}/**", rebound)
        await page.goto(f"http://rebound.example:{port}/form", wait_until="load")
        await expect(page.locator("h1")).to_have_text("This address does not serve the question")
        await _styled(page)
        assert asked == ["/form"], asked  # nothing else asked for, and nothing refused by the CSP


@pytest.mark.parametrize(
    ("path", "heading"), [("/nothing", "Nothing here"), ("/api/check", "Not a page")], ids=["404", "405"]
)
async def test_a_404_or_405_a_person_lands_on_is_a_styled_page(
    new_page: NewPage, path: str, heading: str
) -> None:
    """A mistyped address (404) or an API address opened in a tab (405) was bare text."""
    async with open_round([form_request(SMALL)]) as opened:
        page = await new_page()
        violations: list[str] = []
        page.on(
            "console",
            lambda message: violations.append(message.text) if "Content Security" in message.text else None,
        )
        await page.goto(f"{opened.base}{path}", wait_until="load")
        await expect(page.locator("h1")).to_have_text(heading)
        await _styled(page)
        assert violations == []
