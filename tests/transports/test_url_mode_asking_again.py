"""URL mode over real HTTP: secrets a handler asks for are entered on the server's own page: on 2025-11-25 the request waits in place while the
page is open, is closed by the budget or a cancel, and a declined secret asked again gets a
live link; on 2026-07-28 it is asked again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.stores import MemoryStore, Store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.url_mode import SECRET, _fill_page, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def _url_session(
    app: Server, port: int, wire: WireChecker, action: Callable[[int], str] = lambda n: "accept"
) -> tuple[Any, list[dict[str, Any]]]:
    """A 2025-11-25 session declaring URL mode, with the pages at ``port``: it answers the
    n-th URL question with ``action(n)`` and records what each asked."""
    from support.memory import SessionClient

    app.url_mode.public_url = f"http://127.0.0.1:{port}"
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
    await client.open()
    asked: list[dict[str, Any]] = []

    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request["params"])
        return {"action": action(len(asked))}

    client.answer = answer
    return client, asked


async def test_on_2025_the_request_waits_in_place_and_the_session_hears_completion(
    wire_2025: WireChecker,
) -> None:
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        client, asked = await _url_session(app, running.port, wire_2025)
        call = asyncio.ensure_future(client.result("tools/call", {"name": "use_key"}))
        for _ in range(100):
            if asked:
                break
            await asyncio.sleep(0.02)
        (params,) = asked
        assert params["elicitationId"] in params["url"]
        async with httpx.AsyncClient(timeout=10) as browser:
            await _fill_page(browser, params["url"])
        result = await asyncio.wait_for(call, 5)
        assert result["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"
        # on the request's own stream, before its answer (checked by the client), not the session's
        (notice,) = client.notifications
        assert notice["method"] == "notifications/elicitation/complete"
        assert notice["params"] == {"elicitationId": params["elicitationId"]}
        assert await client.session.next_pushed(0) is None
    await store.close()


async def test_on_2025_a_page_left_unfinished_past_the_budget_is_closed(wire_2025: WireChecker) -> None:
    """The request stops waiting for the page after ``ask_timeout`` and answers ``cancel``:
    the flow ends there too, so the page does not take a secret (and say "Saved") for a
    request that has already given up, and no completion is announced for it."""

    store = MemoryStore()
    app = build(store)
    app.url_mode.ask_timeout = 0.3
    async with uvicorn_server(StreamableHTTP(app)) as running:
        client, asked = await _url_session(app, running.port, wire_2025)
        result = await asyncio.wait_for(client.result("tools/call", {"name": "use_key"}), 5)
        assert result["content"][0]["text"] == "no key (cancel)"
        (params,) = asked
        async with httpx.AsyncClient(timeout=10) as browser:
            late = await browser.get(params["url"])
        assert late.status_code == 410, late.text
        assert await client.session.next_pushed(0.2) is None
        assert client.notifications == []
        assert client.session.elicitations == {}, "the session still waits on a closed page"
    await store.close()


async def test_on_2025_a_request_cancelled_while_the_page_is_open_closes_it(wire_2025: WireChecker) -> None:
    """The client cancels the request (``notifications/cancelled``) while it waits for the
    page: the flow ends with it, so the page takes nothing for a request that is gone."""
    from mcp_elicit.wire import jsonrpc

    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        client, asked = await _url_session(app, running.port, wire_2025)
        message = jsonrpc.decode(
            orjson.dumps({"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": "use_key"}})
        )
        assert isinstance(message, jsonrpc.Request)
        call = asyncio.ensure_future(app.respond_in_session(message, client.session, channel=client))
        for _ in range(100):
            if asked:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)  # the handler now waits for the page
        assert client.session.cancel(77)
        assert await asyncio.wait_for(call, 5) is None
        (params,) = asked
        async with httpx.AsyncClient(timeout=10) as browser:
            late = await browser.get(params["url"])
        assert late.status_code == 410, late.text
        assert client.session.elicitations == {}, "the session still waits on a closed page"
    await store.close()


def _asking_twice(store: Store) -> Server:
    app = build(store)

    @app.tool()
    async def ask_twice(ctx: Context) -> str:
        first = await ctx.secret("example_api_key")
        second = await ctx.secret("example_api_key")
        return f"{first.action}, then {second.action}"

    return app


async def test_on_2025_asking_a_declined_secret_again_sends_a_live_link(wire_2025: WireChecker) -> None:
    """Asked again after a decline, the secret gets a flow of its own: a new link that
    opens, not the ended flow's (410)."""

    store = MemoryStore()
    app = _asking_twice(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        client, asked = await _url_session(
            app, running.port, wire_2025, lambda n: "decline" if n == 1 else "accept"
        )
        call = asyncio.ensure_future(client.result("tools/call", {"name": "ask_twice"}))
        for _ in range(100):
            if len(asked) == 2:
                break
            await asyncio.sleep(0.02)
        first, second = asked
        assert second["url"] != first["url"]
        assert second["elicitationId"] != first["elicitationId"]
        async with httpx.AsyncClient(timeout=10) as browser:
            done = await _fill_page(browser, second["url"])
            assert "Saved" in done.text
        result = await asyncio.wait_for(call, 5)
        assert result["content"][0]["text"] == "decline, then accept"
    await store.close()


async def test_on_2026_asking_a_declined_secret_again_asks_again(wire: WireChecker) -> None:
    """The second ask is a question of its own (its own key and flow), not the first
    one's recorded decline given back without asking."""
    from support.memory import MemoryClient

    store = MemoryStore()
    app = _asking_twice(store)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as browser:
        app.url_mode.public_url = f"http://127.0.0.1:{running.port}"
        client = MemoryClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
        urls: list[str] = []

        def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
            urls.append(request["params"]["url"])
            return {"action": "decline"}

        final, rounds = await client.rounds("tools/call", {"name": "ask_twice"}, answer)
        assert final["result"]["content"][0]["text"] == "decline, then decline"
        first_keys, second_keys = (set(r["inputRequests"]) for r in rounds[:2])
        assert first_keys.isdisjoint(second_keys)
        first, second = urls
        assert second != first
        assert (await browser.get(first)).status_code == 410, "the declined flow's link is closed"
        assert (await browser.get(second)).status_code == 410, "the second flow is declined too"
    await store.close()


async def test_on_2025_two_requests_for_one_secret_both_go_on_once_it_is_entered(
    wire_2025: WireChecker,
) -> None:
    """Two calls of one session ask for the same secret at once (two links). The person
    fills one page: both requests go on with the stored secret, the other page is closed
    (it takes no second value) and the session hears that both elicitations completed."""
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        client, asked = await _url_session(app, running.port, wire_2025)
        calls = [asyncio.ensure_future(client.result("tools/call", {"name": "use_key"})) for _ in range(2)]
        for _ in range(100):
            if len(asked) == 2:
                break
            await asyncio.sleep(0.02)
        first, second = asked
        assert first["url"] != second["url"]
        async with httpx.AsyncClient(timeout=10) as browser:
            await _fill_page(browser, first["url"])
            results = await asyncio.wait_for(asyncio.gather(*calls), 5)
            for result in results:
                assert result["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"
            late = await browser.get(second["url"])
            assert late.status_code == 410, late.text
        # each on the stream of the request that asked it (checked by the client)
        told = {n["params"]["elicitationId"] for n in client.notifications}
        assert len(client.notifications) == 2
        assert told == {first["elicitationId"], second["elicitationId"]}
        assert await client.session.next_pushed(0) is None
    await store.close()
