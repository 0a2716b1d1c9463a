"""URL mode over real HTTP: secrets a handler asks for are entered on the server's own page, never through the client. End to end, and the link: used once, by the
user and browser it is for, declined, expired, forgotten, asked inside a task; the MCP
connection never carries the secret."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import InProcess, uvicorn_server
from support.recording import RecordingTransport
from support.url_mode import SECRET, Mcp, _fill_page, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess, MemoryStore]]:
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        yield app, running, store
    await store.close()


async def test_secret_entry_end_to_end(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    _, running, store = served
    recorder = RecordingTransport()
    async with (
        httpx.AsyncClient(transport=recorder, timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
    ):
        mcp = Mcp(http, running.url, wire)
        first = (await mcp.call())["result"]
        assert first["resultType"] == "input_required"
        ((key, request),) = first["inputRequests"].items()
        params = request["params"]
        assert params["mode"] == "url"
        assert params["url"].startswith(f"http://127.0.0.1:{running.port}/mcp-elicit/flows/")
        # the client accepts (agrees to open the page); the person has not finished yet
        accepted = {key: {"action": "accept"}}
        waiting = (await mcp.call(inputResponses=accepted, requestState=first["requestState"]))["result"]
        assert waiting["resultType"] == "input_required"
        assert "inputRequests" not in waiting, "a state-only round while the page is open"
        assert waiting["requestState"] != first["requestState"]
        # the person fills the page; a retry already waiting wakes up
        retry = asyncio.ensure_future(mcp.call(requestState=waiting["requestState"]))
        await asyncio.sleep(0.05)
        done = await _fill_page(browser, params["url"])
        assert done.status_code == 200
        assert "Saved" in done.text
        final = (await retry)["result"]
        assert final["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"
        # a later call finds it without asking
        again = (await mcp.call())["result"]
        assert again["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"
    assert SECRET.encode() not in recorder.bytes, "the secret crossed the MCP connection"
    assert len(recorder.bytes) > 1000
    stored = (
        [v for ns in ("vault",) for v in store._values_for_tests(ns)]
        if hasattr(store, "_values_for_tests")
        else None
    )
    dump = repr(store.__dict__).encode() + b"".join(stored or [])
    assert SECRET.encode() not in dump, "the secret is stored in clear"


async def test_a_used_link_is_refused(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    _, running, _ = served
    async with (
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
        httpx.AsyncClient(timeout=10) as stranger,
    ):
        first = (await Mcp(http, running.url, wire).call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        claimed = await browser.get(url)
        assert claimed.status_code == 303
        # the link is used up once the browser is back with its cookie
        assert (await browser.get(claimed.url.join(claimed.headers["location"]))).status_code == 200
        replay = await stranger.get(url)
        assert replay.status_code == 403
        assert "already used" in replay.text
        no_cookie = await stranger.get(url.split("?")[0])
        assert no_cookie.status_code == 403


async def test_decline_on_the_page(served: tuple[Server, InProcess, MemoryStore], wire: WireChecker) -> None:
    _, running, _ = served
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        mcp = Mcp(http, running.url, wire)
        first = (await mcp.call())["result"]
        ((key, request),) = first["inputRequests"].items()
        await _fill_page(browser, request["params"]["url"], action="decline")
        final = (
            await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        )["result"]
        assert final["content"][0]["text"] == "no key (decline)"


async def test_decline_in_the_client_ends_the_flow(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    _, running, _ = served
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        mcp = Mcp(http, running.url, wire)
        first = (await mcp.call())["result"]
        ((key, request),) = first["inputRequests"].items()
        final = (
            await mcp.call(inputResponses={key: {"action": "decline"}}, requestState=first["requestState"])
        )["result"]
        assert final["content"][0]["text"] == "no key (decline)"
        first_visit = await browser.get(request["params"]["url"])
        assert first_visit.status_code == 410


async def test_another_user_is_refused_and_the_flow_is_not_completed(wire: WireChecker) -> None:
    store = MemoryStore()
    app = build(store, auth=True)
    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10, cookies={"who": "mallory"}) as mallory,
        httpx.AsyncClient(timeout=10, cookies={"who": "alice"}) as alice_browser,
    ):
        mcp = Mcp(http, running.url, wire, token="tok-alice")
        first = (await mcp.call())["result"]
        ((key, request),) = first["inputRequests"].items()
        url = request["params"]["url"]
        refused = await mallory.get(url)
        assert refused.status_code == 403
        assert "another user" in refused.text
        # the link was not consumed by the refused visit: alice can still use it
        done = await _fill_page(alice_browser, url)
        assert "Saved" in done.text
        final = (
            await mcp.call(inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        )["result"]
        assert final["content"][0]["text"].startswith("key accepted")
        # bob has no secret stored: he is asked
        bob = (await Mcp(http, running.url, wire, token="tok-bob").call())["result"]
        assert bob["resultType"] == "input_required"
    await store.close()


async def test_expired_link(wire: WireChecker) -> None:
    store = MemoryStore()
    app = build(store)
    app.url_mode.flow_ttl = 0.2
    async with uvicorn_server(StreamableHTTP(app)) as running:
        async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
            first = (await Mcp(http, running.url, wire).call())["result"]
            url = next(iter(first["inputRequests"].values()))["params"]["url"]
            await asyncio.sleep(0.4)
            assert (await browser.get(url)).status_code == 410
    await store.close()


async def test_forgetting_asks_again(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    app, running, _ = served
    await app.url_mode.vault.put("vault", "example_api_key", None, b"old-value")
    async with httpx.AsyncClient(timeout=10) as http:
        mcp = Mcp(http, running.url, wire)
        assert (await mcp.call())["result"]["content"][0]["text"] == "key accepted (9 characters)"
        assert await app.url_mode.vault.forget("vault", "example_api_key", None)
        assert (await mcp.call())["result"]["resultType"] == "input_required"


def test_secret_handles_never_show_the_value() -> None:
    from mcp_elicit.server.vault import Secret, Vault

    handle = Secret(Vault(MemoryStore(), lambda: None), "api_key", None)  # type: ignore[arg-type]
    assert repr(handle) == str(handle) == "<Secret 'api_key' (hidden)>"
    assert orjson.dumps({"x": str(handle)}) == b'{"x":"<Secret \'api_key\' (hidden)>"}'


async def test_a_secret_asked_inside_a_task(served: tuple[Server, InProcess, MemoryStore]) -> None:
    """A tool that goes on as a task (the tasks extension) asks for a secret: the URL step
    waits in the task, the person fills the page, and the task completes, the secret never
    crossing the MCP connection."""
    from mcp_elicit.client import ElicitAnswer
    from mcp_elicit.core.client_inputs import ElicitationRequest
    from mcp_elicit.transports.http_client import connect_http

    app, running, _ = served

    @app.tool(task="optional")
    async def key_job(ctx: Context) -> str:
        """Starts a task, then needs the key."""
        await ctx.start_task("waiting for your key")
        answer = await ctx.secret("job_key", message="Enter the job's key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        return f"job ran with a key of {len(await answer.secret.reveal())} characters"

    recorder = RecordingTransport()
    async with httpx.AsyncClient(timeout=10) as browser:
        pages: list[asyncio.Task[httpx.Response]] = []

        class Person:
            """Agrees to open the page (accept), then types the key there a moment later."""

            modes = frozenset({"url"})

            async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
                assert request.mode == "url" and request.url is not None
                url = request.url

                async def later() -> httpx.Response:
                    await asyncio.sleep(0.5)  # the task waits meanwhile; the client polls
                    return await _fill_page(browser, url)

                pages.append(asyncio.ensure_future(later()))
                return ElicitAnswer("accept")

        async with (
            httpx.AsyncClient(transport=recorder, timeout=10) as http,
            connect_http(running.url, answerer=Person(), http_client=http, tasks=True) as client,
        ):
            out = await asyncio.wait_for(client.call_tool("key_job"), 15)
        (page,) = pages
        assert (await page).status_code == 200
    assert out["content"][0]["text"] == f"job ran with a key of {len(SECRET)} characters"
    assert b'"resultType":"task"' in recorder.bytes and b"tasks/update" in recorder.bytes
    assert SECRET.encode() not in recorder.bytes, "the secret crossed the MCP connection"


@pytest.mark.parametrize("flow_id", ["%C3%A9t%C3%A9", "a%0Ab", "a%20b%09", "x" * 64])
async def test_a_flow_address_that_names_no_flow_is_refused_not_an_error(
    served: tuple[Server, InProcess, MemoryStore], flow_id: str
) -> None:
    _, running, _ = served
    base = running.url.removesuffix("/mcp")
    async with httpx.AsyncClient(timeout=10) as browser:
        for suffix in ("", "?t=abc", "/start"):
            page = await browser.get(f"{base}/mcp-elicit/flows/{flow_id}{suffix}")
            assert page.status_code in (403, 410), (suffix, page.status_code, page.text[:200])
        posted = await browser.post(f"{base}/mcp-elicit/flows/{flow_id}", data={"action": "decline"})
        assert posted.status_code == 403


async def test_a_head_request_does_not_use_the_link_up(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    """Link checkers and previews send HEAD, which must change nothing: the person's
    browser can still claim the link afterwards."""
    _, running, _ = served
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = (await Mcp(http, running.url, wire).call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        async with httpx.AsyncClient(timeout=10) as checker:
            probe = await checker.head(url)
        assert probe.status_code == 200
        assert "set-cookie" not in probe.headers
        assert probe.headers["cache-control"] == "no-store"
        claimed = await browser.get(url)
        assert claimed.status_code == 303


async def test_the_browser_that_claimed_the_link_may_open_it_again(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    """The person opens the link a second time (the tab was closed, the client's "open
    again"): their own browser gets the page back; any other one is still refused."""
    _, running, _ = served
    async with (
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
        httpx.AsyncClient(timeout=10) as stranger,
    ):
        first = (await Mcp(http, running.url, wire).call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        claimed = await browser.get(url)
        assert claimed.status_code == 303
        assert (await browser.get(claimed.url.join(claimed.headers["location"]))).status_code == 200
        again = await browser.get(url)
        assert again.status_code == 303, again.text
        assert again.headers["location"] == claimed.headers["location"]
        assert "set-cookie" not in again.headers
        page = await browser.get(again.url.join(again.headers["location"]))
        assert page.status_code == 200 and 'name="csrf"' in page.text
        assert (await stranger.get(url)).status_code == 403


async def test_an_accept_for_a_link_never_sent_asks_for_the_secret(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    """A first call that already "accepts" the secret's URL step consented to no page: the
    server sends the link (it does not wait on a page nobody was shown)."""
    _, running, _ = served
    async with httpx.AsyncClient(timeout=10) as http:
        mcp = Mcp(http, running.url, wire)
        first = await mcp.call(inputResponses={"mcp-elicit/secret/example_api_key": {"action": "accept"}})
        result = first["result"]
        assert result["resultType"] == "input_required"
        (request,) = result["inputRequests"].values()
        assert request["params"]["mode"] == "url"


async def test_a_single_user_page_names_the_server(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    _, running, _ = served
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = (await Mcp(http, running.url, wire).call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        claimed = await browser.get(url)
        page = await browser.get(claimed.url.join(claimed.headers["location"]))
        assert page.status_code == 200
        assert "url-mode" in page.text


async def test_a_secret_posted_while_the_request_gives_up_is_not_kept(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    """The request ends the flow (cancelled, its budget spent) while the form is still on
    its way: the page must not keep the secret it then receives, nor say it saved it."""
    app, running, _ = served
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        first = (await Mcp(http, running.url, wire).call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        flow_id = url.split("/flows/")[1].split("?")[0]
        claimed = await browser.get(url)
        location = claimed.url.join(claimed.headers["location"])
        page = await browser.get(location)
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert csrf is not None
        form = f"csrf={csrf.group(1)}&action=submit&value={SECRET}".encode()

        async def body() -> AsyncIterator[bytes]:
            yield form[:10]
            await asyncio.sleep(0.3)  # the page has looked at the flow and reads the form
            flow = await app.url_mode.flows.get(flow_id)
            assert flow is not None and not flow.done
            assert await app.url_mode.flows.finish(flow, "cancelled")
            yield form[10:]

        done = await browser.post(
            location,
            content=body(),
            headers={"content-type": "application/x-www-form-urlencoded", "content-length": str(len(form))},
        )
        assert "Saved" not in done.text
        assert done.status_code == 409 and "had already been cancelled" in done.text, done.text
        assert await app.url_mode.vault.get("vault", "example_api_key", None) is None
