"""A page link's claim, in two steps, over real HTTP on 127.0.0.1: opening the link gives the
browser a cookie (a pending claim) and uses nothing up; the link is used up when a browser
comes back to the page with such a cookie, and the first to come back holds the page. So a
303 that never reached the browser, or a link preview that does not follow it, leaves the
link usable; once a browser holds the page, the link and every other claim are dead.

Each case runs on one server, and on two instances sharing a Redis store (the link opened
on one, the page on the other).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.server.flows import MAX_PENDING_CLAIMS
from mcp_elicit.stores import MemoryStore, RedisStore, Store

from support.pages import browser, form_of, open_page, pages_server, serving

pytestmark = pytest.mark.anyio
ELSEWHERE = "This page was opened in another browser"


@dataclass
class Served:
    """The servers (one, or two sharing a store) and where each answers."""

    apps: list[Server]
    bases: list[str]

    async def link(self) -> tuple[str, str]:
        """A new secret flow of alice's: its id and its link, on the first server."""
        flow, token = await self.apps[0].url_mode.flows.start("secret", "example_api_key", "alice")
        return flow.id, f"{self.bases[0]}/mcp-elicit/flows/{flow.id}?t={token}"

    def page(self, flow_id: str) -> str:
        """The flow's page (no token) on the last server."""
        return f"{self.bases[-1]}/mcp-elicit/flows/{flow_id}"


@pytest.fixture(params=["one server", "two instances sharing redis"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    stores: list[Store]
    if request.param == "one server":
        stores = [MemoryStore()]
    else:
        redis_url: str = request.getfixturevalue("redis_url")
        prefix = f"test-{uuid.uuid4().hex[:12]}"
        stores = [RedisStore(redis_url, prefix=prefix) for _ in range(2)]
    apps = [pages_server(store) for store in stores]
    try:
        async with serving(apps) as bases:
            yield Served(apps, bases)
    finally:
        for store in stores:
            await store.close()


async def claim(client: httpx.AsyncClient, link: str) -> httpx.URL:
    """Open ``link`` without following its redirect (as a lost 303 leaves it): where it sends."""
    claimed = await client.get(link)
    assert claimed.status_code == 303, claimed.text
    return claimed.url.join(claimed.headers["location"])


async def test_a_link_opened_twice_goes_to_the_first_browser_back_and_refuses_the_other(
    served: Served,
) -> None:
    flow_id, link = await served.link()
    async with browser("alice") as first, browser("alice") as second:
        await claim(first, link)
        await claim(second, link)
        page = await second.get(served.page(flow_id))  # the second is back first: it wins
        assert page.status_code == 200 and "Save" in page.text, page.text
        late = await first.get(served.page(flow_id))
        assert late.status_code == 403 and ELSEWHERE in late.text, late.text
        again = await first.get(link)
        assert again.status_code == 403 and "This link was already used" in again.text
        assert (await second.get(served.page(flow_id))).status_code == 200  # still the winner's
    flow = await served.apps[-1].url_mode.flows.get(flow_id)
    assert flow is not None and flow.status == "pending" and flow.browser is not None


async def test_a_link_claimed_and_confirmed_cannot_be_claimed_again(served: Served) -> None:
    flow_id, link = await served.link()
    async with browser("alice") as alice, browser("alice") as other:
        await open_page(alice, link)
        refused = await other.get(link)
        assert refused.status_code == 403 and "This link was already used" in refused.text
        assert (await other.get(served.page(flow_id))).status_code == 403
        back = await alice.get(link)  # the browser holding the page, opening the link again
        assert back.status_code == 303 and (await alice.get(served.page(flow_id))).status_code == 200


async def test_a_pending_claim_replayed_after_another_confirmed_is_refused(served: Served) -> None:
    flow_id, link = await served.link()
    async with browser("alice") as lost, browser("alice") as alice:
        await claim(lost, link)
        kept = dict(lost.cookies)  # the lost 303's cookie, as a replay presents it
        page = await open_page(alice, link)
        async with httpx.AsyncClient(timeout=10, cookies=kept) as replay:
            shown = await replay.get(served.page(flow_id))
            assert shown.status_code == 403 and ELSEWHERE in shown.text, shown.text
            posted = await replay.post(served.page(flow_id), data=form_of(page, "sk-from-a-replay"))
            assert posted.status_code == 403, posted.text
        saved = await alice.post(page.url, data=form_of(page, "sk-from-the-page"))
        assert saved.status_code == 200 and "Saved." in saved.text, saved.text
    kept_value = await served.apps[-1].url_mode.vault.get("vault", "example_api_key", "alice")
    assert kept_value == b"sk-from-the-page"


async def test_a_preview_that_does_not_follow_the_redirect_leaves_the_link_usable(served: Served) -> None:
    flow_id, link = await served.link()
    async with httpx.AsyncClient(timeout=10, cookies={"who": "alice"}) as preview:
        for _ in range(2):  # a link preview, then a mail scanner: neither keeps the cookie
            await claim(preview, link)
            preview.cookies.clear()
            preview.cookies.set("who", "alice")
    flow = await served.apps[-1].url_mode.flows.get(flow_id)
    assert flow is not None and flow.browser is None
    async with browser("alice") as alice:
        page = await open_page(alice, link)
        assert "Save" in page.text


async def test_another_user_with_a_pending_claim_is_refused_before_the_link_is_used_up(
    served: Served,
) -> None:
    """The signed-in user is checked before a claim is confirmed: a pending claim's cookie
    in a browser signed in as someone else uses nothing up, and a HEAD confirms nothing."""
    flow_id, link = await served.link()
    async with browser("alice") as alice:
        await claim(alice, link)
        taken = {**dict(alice.cookies), "who": "mallory"}
        async with httpx.AsyncClient(timeout=10, cookies=taken) as mallory:
            refused = await mallory.get(served.page(flow_id))
            assert refused.status_code == 403 and "Not your request" in refused.text, refused.text
            assert (await mallory.head(served.page(flow_id))).status_code == 403
        async with httpx.AsyncClient(timeout=10, cookies=dict(alice.cookies)) as head_only:
            assert (await head_only.head(served.page(flow_id))).status_code == 200
        flow = await served.apps[-1].url_mode.flows.get(flow_id)
        assert flow is not None and flow.browser is None
        async with browser("alice") as other:
            page = await open_page(other, link)  # the link still works: another browser takes it
            assert "Save" in page.text


async def test_a_link_opened_over_and_over_is_refused_once_its_pending_claims_are_at_the_bound(
    served: Served,
) -> None:
    """Each opening records a pending claim until the flow ends: a flood of openings stops
    at ``MAX_PENDING_CLAIMS`` with a clear refusal, and a browser given one of those
    claims still comes back to the page and holds it."""
    flow_id, link = await served.link()
    async with browser("alice") as alice, httpx.AsyncClient(timeout=10, cookies={"who": "alice"}) as flood:
        await claim(alice, link)
        for _ in range(MAX_PENDING_CLAIMS - 1):
            await claim(flood, link)
            flood.cookies.clear()
            flood.cookies.set("who", "alice")
        refused = await flood.get(link)
        assert refused.status_code == 429 and "opened too many times" in refused.text, refused.text
        assert "set-cookie" not in refused.headers
        shown = await alice.get(served.page(flow_id))
        assert shown.status_code == 200 and "Save" in shown.text, shown.text
