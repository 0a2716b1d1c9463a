"""Two forms of one URL-mode page saved at the same instant (two tabs, Save pressed twice),
over real HTTP on 127.0.0.1: exactly one is saved and told so; the other is answered 409,
as a form sent after the save is, and the vault holds the winner's value. On one server,
and on two instances sharing a Redis store (each form posted to a different one).

The race is made the same on every run (``support.gated_store``): the store holds the first
secret written to the vault until the other request has written something to the store.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from mcp_elicit import Server
from mcp_elicit.stores import MemoryStore, RedisStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.gated_store import Gate, GatedStore
from support.pages import browser, form_of, open_page, pages_server, serving
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio
#: Bounds the whole race, so a hang fails the test instead of stalling it.
RACE_TIMEOUT = 30.0


async def save_in_two_tabs(gate: Gate, apps: list[Server], bases: list[str]) -> None:
    """One page open in two tabs, Save pressed in both at once (the second tab's form
    posted to ``bases[-1]``); exactly one is saved."""
    flow, token = await apps[0].url_mode.flows.start("secret", "example_api_key", "alice")
    async with browser("alice") as alice:
        first_tab = await open_page(alice, f"{bases[0]}/mcp-elicit/flows/{flow.id}?t={token}")
        second_tab = await alice.get(f"{bases[-1]}/mcp-elicit/flows/{flow.id}")
        assert second_tab.status_code == 200 and "Save" in second_tab.text, second_tab.text
        values = ["sk-race-first-tab-value", "sk-race-second-tab-value"]
        gate.armed = True
        async with asyncio.timeout(RACE_TIMEOUT):
            answers = await asyncio.gather(
                alice.post(first_tab.url, data=form_of(first_tab, values[0])),
                alice.post(second_tab.url, data=form_of(second_tab, values[1])),
            )
    saved = [i for i, answer in enumerate(answers) if answer.status_code == 200]
    assert len(saved) == 1, [(a.status_code, a.text) for a in answers]
    winner, loser = answers[saved[0]], answers[1 - saved[0]]
    assert "Saved." in winner.text, winner.text
    assert loser.status_code == 409, loser.text
    assert "Already done" in loser.text and "had already been saved" in loser.text, loser.text
    assert "not used" in loser.text and "Saved." not in loser.text
    for app in apps:
        kept = await app.url_mode.vault.get("vault", "example_api_key", "alice")
        assert kept == values[saved[0]].encode(), (kept, saved)
    ended = await apps[-1].url_mode.flows.get(flow.id)
    assert ended is not None and ended.status == "complete"


async def test_two_saves_of_one_page_at_once_keep_one_and_tell_the_other_409() -> None:
    gate, memory = Gate(), MemoryStore()
    app = pages_server(GatedStore(memory, gate))
    try:
        async with uvicorn_server(StreamableHTTP(app)) as running:
            await save_in_two_tabs(gate, [app], [f"http://127.0.0.1:{running.port}"])
    finally:
        await memory.close()


async def test_two_saves_at_once_on_two_instances_sharing_redis_keep_one(redis_url: str) -> None:
    gate, prefix = Gate(), f"test-{uuid.uuid4().hex[:12]}"
    stores = [RedisStore(redis_url, prefix=prefix) for _ in range(2)]
    apps = [pages_server(GatedStore(store, gate)) for store in stores]
    try:
        async with serving(apps) as bases:
            await save_in_two_tabs(gate, apps, bases)
    finally:
        for store in stores:
            await store.close()


class FailingOnce(MemoryStore):
    """A memory store whose first write to the vault fails, as a store that is down does."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == "vault" and not self.failed:
            self.failed = True
            raise OSError("the store is down")
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_save_the_store_failed_can_be_sent_again() -> None:
    """The save that failed (503) does not keep the flow for itself: the same form sent
    again once the store is back is saved, not refused as a second form."""
    store = FailingOnce()
    app = pages_server(store)
    try:
        async with uvicorn_server(StreamableHTTP(app)) as running:
            flow, token = await app.url_mode.flows.start("secret", "example_api_key", "alice")
            async with browser("alice") as alice:
                base = f"http://127.0.0.1:{running.port}"
                page = await open_page(alice, f"{base}/mcp-elicit/flows/{flow.id}?t={token}")
                failed = await alice.post(page.url, data=form_of(page, "sk-race-retried"))
                again = await alice.post(page.url, data=form_of(page, "sk-race-retried"))
        assert failed.status_code == 503 and "try again" in failed.text, failed.text
        assert again.status_code == 200 and "Saved." in again.text, again.text
        assert await app.url_mode.vault.get("vault", "example_api_key", "alice") == b"sk-race-retried"
    finally:
        await store.close()


@pytest.mark.parametrize("same_browser", [False, True], ids=["two browsers", "one browser, two requests"])
async def test_two_browsers_back_with_their_claims_at_once_one_holds_the_page(same_browser: bool) -> None:
    """The link opened in two browsers (or one), both back at the same moment: exactly
    one browser holds the page; another is told it was opened elsewhere, and one browser's
    two requests are both served."""
    gate, memory = Gate(holds=frozenset({"flow"}), counts=frozenset({"flow"})), MemoryStore()
    app = pages_server(GatedStore(memory, gate))
    try:
        async with uvicorn_server(StreamableHTTP(app)) as running:
            flow, token = await app.url_mode.flows.start("secret", "example_api_key", "alice")
            link = f"http://127.0.0.1:{running.port}/mcp-elicit/flows/{flow.id}?t={token}"
            async with browser("alice") as first, browser("alice") as second:
                claims = (
                    [await first.get(link)] if same_browser else [await b.get(link) for b in (first, second)]
                )
                assert all(c.status_code == 303 for c in claims), claims
                page = claims[0].url.join(claims[0].headers["location"])
                if same_browser:
                    second.cookies.update(first.cookies)
                gate.armed = True
                async with asyncio.timeout(RACE_TIMEOUT):
                    answers = await asyncio.gather(first.get(page), second.get(page))
    finally:
        await memory.close()
    codes = sorted(answer.status_code for answer in answers)
    assert codes == ([200, 200] if same_browser else [200, 403]), [(a.status_code, a.text) for a in answers]
    for answer in answers:
        assert "Save" in answer.text or "opened in another browser" in answer.text, answer.text
