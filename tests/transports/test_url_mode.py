"""Hosted URL mode over real HTTP: a handler asks for a secret in one line; the person
types it into the server's own page; the retry finds it. The secret never crosses the MCP
connection (every byte of it is captured and searched) and is never stored in clear."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.stores import MemoryStore, RedisStore, Store
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import InProcess, uvicorn_server
from support.proxy import stripping
from support.redis import SKIP_REASON, redis_available, redis_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SECRET = "sk-test-7Hq2-very-secret-value"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


class HeaderAuth:
    """A stand-in for a real sign-in: the browser says who it is in a cookie."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return cookies.get("who")


class Tokens:
    async def verify(self, token: str) -> Any:
        from mcp_elicit import Principal

        return Principal(token.removeprefix("tok-")) if token.startswith("tok-") else None


def build(store: Store, *, auth: bool = False) -> Server:
    app = Server(
        "url-mode",
        state_keys=KeyRing([bytes(range(40, 72))]),
        store=store,
        flow_wait=0.3,
        auth=Tokens() if auth else None,
        page_auth=HeaderAuth() if auth else None,
    )

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        value = await answer.secret.reveal()
        return f"key accepted ({len(value)} characters)"

    return app


class Wire(httpx.AsyncBaseTransport):
    """Records every byte exchanged with the MCP endpoint."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bytes = bytearray()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bytes += request.url.raw_path + b"".join(
            f"{k}: {v}".encode() for k, v in request.headers.items()
        )
        self.bytes += request.content
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.bytes += body + b"".join(f"{k}: {v}".encode() for k, v in response.headers.items())
        return httpx.Response(response.status_code, headers=response.headers, content=body)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Mcp:
    def __init__(
        self, http: httpx.AsyncClient, url: str, wire: WireChecker, token: str | None = None
    ) -> None:
        self.http, self.url, self.wire, self.ids = http, url, wire, 0
        self.token = token

    async def call(self, **extra: Any) -> dict[str, Any]:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": "use_key", "_meta": META, **extra},
        }
        self.wire.request(body)
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "use_key",
        }
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        response = await self.http.post(self.url, json=body, headers=headers)
        message: dict[str, Any] = response.json()
        self.wire.response("tools/call", message)
        return message


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess, MemoryStore]]:
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        yield app, running, store
    await store.close()


async def _fill_page(
    browser: httpx.AsyncClient, url: str, action: str = "submit", value: str = SECRET
) -> httpx.Response:
    first = await browser.get(url)
    assert first.status_code == 303, first.text
    assert "?t=" not in first.headers["location"]
    location = first.url.join(first.headers["location"])
    page = await browser.get(location)
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert csrf is not None
    return await browser.post(location, data={"csrf": csrf.group(1), "action": action, "value": value})


async def test_secret_entry_end_to_end(
    served: tuple[Server, InProcess, MemoryStore], wire: WireChecker
) -> None:
    _, running, store = served
    recorder = Wire()
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
        assert (await browser.get(url)).status_code == 303
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
        pushed = await client.session.next_pushed(1.0)
        notice = orjson.loads(pushed)
        wire_2025.notification(notice)
        assert notice["params"] == {"elicitationId": params["elicitationId"]}
    await store.close()


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

    recorder = Wire()
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


async def _key_through_the_pages(base: str, prefix: str, wire: WireChecker) -> None:
    """One round of ``use_key`` with the app's endpoint at ``base/mcp``: the link, the
    page's redirect and its cookie all start with ``prefix``, the path the browser sees."""
    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        mcp = Mcp(http, f"{base}/mcp", wire)
        first = (await mcp.call())["result"]
        ((key, request),) = first["inputRequests"].items()
        link = request["params"]["url"]
        assert link.startswith(f"{base}/mcp-elicit/flows/")
        hop = await browser.get(link)
        assert hop.status_code == 303 and hop.headers["location"].startswith(f"{prefix}/mcp-elicit/flows/")
        assert f"path={prefix}/mcp-elicit/flows/" in hop.headers["set-cookie"].lower()
        page = await browser.get(hop.url.join(hop.headers["location"]))
        assert page.status_code == 200, page.text  # the cookie came back under the prefix
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert csrf is not None
        saved = await browser.post(
            page.url, data={"csrf": csrf.group(1), "action": "submit", "value": SECRET}
        )
        assert saved.status_code == 200 and "Saved" in saved.text
        accepted = {key: {"action": "accept"}}
        final = (await mcp.call(inputResponses=accepted, requestState=first["requestState"]))["result"]
        assert final["content"][0]["text"] == f"key accepted ({len(SECRET)} characters)"


async def test_mounted_under_a_path_the_pages_are_there_too(wire: WireChecker) -> None:
    """Mounted in a Starlette app at ``/tools``, without a public URL: the link learned
    from the request, the pages' redirect and cookie all carry the mount point."""
    store = MemoryStore()
    mcp = StreamableHTTP(build(store))
    outer = Starlette(routes=[Mount("/tools", app=mcp)], lifespan=mcp.lifespan)
    async with uvicorn_server(outer, lifespan="on") as running:
        await _key_through_the_pages(f"http://127.0.0.1:{running.port}/tools", "/tools", wire)
    await store.close()


async def test_behind_a_proxy_that_strips_a_path_the_pages_keep_it(wire: WireChecker) -> None:
    """``--public-url https://host/mcp-app``: the pages' own redirects, links and cookies
    carry ``/mcp-app`` too, so a proxy that strips it needs one route, not two."""
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(stripping("/mcp-app", StreamableHTTP(app))) as running:
        base = f"http://127.0.0.1:{running.port}/mcp-app"
        app.url_mode.public_url = base
        await _key_through_the_pages(base, "/mcp-app", wire)
    await store.close()


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


@pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)
async def test_a_store_gone_mid_flow_gives_a_page_that_says_so(
    tmp_path: Path, wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        app = build(store)
        try:
            async with (
                uvicorn_server(StreamableHTTP(app)) as running,
                httpx.AsyncClient(timeout=10) as http,
                httpx.AsyncClient(timeout=10) as browser,
            ):
                first = (await Mcp(http, running.url, wire).call())["result"]
                ((_, request),) = first["inputRequests"].items()
                redis.proc.kill()
                redis.proc.wait()
                page = await browser.get(request["params"]["url"])
        finally:
            await store.close()
    assert page.status_code == 503
    assert "<title>Please try again in a moment · url-mode</title>" in page.text  # which server
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "try again" in page.text
    assert "Connection" not in page.text and "127.0.0.1" not in page.text  # nothing of the cause
    assert "cannot reach its storage" in caplog.text


async def test_a_client_without_url_mode_starts_no_flow(wire: WireChecker) -> None:
    """A form-only client is refused (-32021) before anything is written or looked up: no
    flow, no link in the store, no page address for a question that cannot be asked."""
    from support.memory import MemoryClient

    class Recording(MemoryStore):
        def __init__(self) -> None:
            super().__init__()
            self.written: list[tuple[str, str]] = []

        async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
            self.written.append((namespace, key))
            await super().put(namespace, key, value, ttl=ttl)

    store = Recording()
    app = build(store)
    client = MemoryClient(app, checker=wire, capabilities={"elicitation": {"form": {}}})
    response = await client.request("tools/call", {"name": "use_key"})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    assert store.written == []
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


async def test_behind_a_tls_proxy_the_flow_cookie_is_secure(wire: WireChecker) -> None:
    """``--public-url https://...`` with TLS ended at a proxy (the app itself sees http):
    the browser is on https, so its flow cookie is ``Secure`` and never goes out in clear."""
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        app.url_mode.public_url = "https://mcp.example"
        async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
            first = (await Mcp(http, running.url, wire).call())["result"]
            link = next(iter(first["inputRequests"].values()))["params"]["url"]
            assert link.startswith("https://mcp.example/mcp-elicit/flows/")
            local = link.replace("https://mcp.example", f"http://127.0.0.1:{running.port}")
            hop = await browser.get(local)
        assert hop.status_code == 303
        assert "; secure" in hop.headers["set-cookie"].lower()
    await store.close()


@pytest.mark.parametrize(
    "public_url", ["mcp.example.com", "ftp://mcp.example.com", "https://user:pw@mcp.example.com", "https://"]
)
def test_a_public_url_that_cannot_start_links_is_refused_at_once(public_url: str) -> None:
    """Given to ``Server(...)`` or ``configure_url_mode``, the same check: a base that could
    not start a page link fails the configuration, not the first handler that asks."""
    from mcp_elicit.errors import ConfigError

    with pytest.raises(ConfigError, match="public URL"):
        Server("bad-base", public_url=public_url)
    server = Server("bad-base")
    with pytest.raises(ConfigError, match="public URL"):
        server.configure_url_mode(public_url=public_url)


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
        again = await browser.get(url)
        assert again.status_code == 303, again.text
        assert again.headers["location"] == claimed.headers["location"]
        assert "set-cookie" not in again.headers
        page = await browser.get(again.url.join(again.headers["location"]))
        assert page.status_code == 200 and 'name="csrf"' in page.text
        assert (await stranger.get(url)).status_code == 403


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


async def test_the_page_names_the_server_and_the_user_it_is_for(wire: WireChecker) -> None:
    """Phishing resistance: the person sees which server asks and for which account
    before typing a secret, so a page reached from someone else's link stands out."""
    store = MemoryStore()
    app = build(store, auth=True)
    app.title = "Example <Bookings>"
    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10, cookies={"who": "alice.example"}) as browser,
    ):
        first = (await Mcp(http, running.url, wire, token="tok-alice.example").call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        claimed = await browser.get(url)
        assert claimed.status_code == 303, claimed.text
        page = await browser.get(claimed.url.join(claimed.headers["location"]))
        assert page.status_code == 200
        assert "Example &lt;Bookings&gt;" in page.text
        assert "alice.example" in page.text
        assert "<Bookings>" not in page.text
    await store.close()


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
        told = set()
        for _ in range(2):
            pushed = await client.session.next_pushed(1.0)
            assert pushed is not None
            notice = orjson.loads(pushed)
            wire_2025.notification(notice)
            told.add(notice["params"]["elicitationId"])
        assert told == {first["elicitationId"], second["elicitationId"]}
    await store.close()


async def test_a_request_with_another_allowed_host_does_not_change_the_links_of_others(
    wire: WireChecker,
) -> None:
    """Without a public URL the pages' address comes from the Host the client used. With
    any host allowed, a stranger's request naming another Host (not even a valid MCP
    request) must not decide where a link handed to someone else points: the link would
    send that person, and the secret they type, to the stranger's site."""
    gate = asyncio.Event()
    store = MemoryStore()
    app = Server("url-mode", state_keys=KeyRing([bytes(range(40, 72))]), store=store, flow_wait=0.3)

    @app.tool()
    async def use_key(ctx: Context) -> str:
        await gate.wait()
        answer = await ctx.secret("example_api_key")
        return answer.action

    async with (
        uvicorn_server(StreamableHTTP(app, allowed_hosts=["*"])) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        call = asyncio.ensure_future(Mcp(http, running.url, wire).call())
        await asyncio.sleep(0.2)  # the handler now waits at the gate
        poke = await http.post(running.url, content=b"{}", headers={"host": "evil.example"})
        assert poke.status_code >= 400  # refused; it only had to reach the endpoint
        gate.set()
        first = (await asyncio.wait_for(call, 5))["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        assert url.startswith(f"http://127.0.0.1:{running.port}/mcp-elicit/flows/"), url
    await store.close()


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


@pytest.mark.parametrize("when", ["given", "set later"])
async def test_a_form_whose_body_stalls_is_refused_and_a_later_one_saves(
    wire: WireChecker, when: str
) -> None:
    """The person's browser (or anything holding its cookie) sends the form's headers and
    part of the body, then nothing: the page answers 408 after the app's ``body_timeout``
    (given to it, or set on it later) and closes the connection, and the flow is still
    open for the form sent again."""
    store = MemoryStore()
    app = build(store)
    if when == "given":
        transport = StreamableHTTP(app, body_timeout=0.3)
    else:
        transport = StreamableHTTP(app)
        transport.body_timeout = 0.3
    async with (
        uvicorn_server(transport) as running,
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(timeout=10) as browser,
    ):
        first = (await Mcp(http, running.url, wire).call())["result"]
        url = next(iter(first["inputRequests"].values()))["params"]["url"]
        claimed = await browser.get(url)
        location = claimed.url.join(claimed.headers["location"])
        page = await browser.get(location)
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert csrf is not None
        form = f"csrf={csrf.group(1)}&action=submit&value={SECRET}".encode()
        cookies = "; ".join(f"{k}={v}" for k, v in browser.cookies.items())
        head = (
            f"POST {location.raw_path.decode()} HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(form)}\r\n"
            f"Cookie: {cookies}\r\n\r\n"
        ).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
        try:
            writer.write(head + form[:20])
            await writer.drain()
            async with asyncio.timeout(10):
                answer = await reader.read()  # up to the server's close
        finally:
            writer.close()
            await writer.wait_closed()
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"connection: close" in answer.lower()
        assert b"took too long to arrive" in answer
        assert b"text/html" in answer.split(b"\r\n\r\n", 1)[0]
        assert SECRET.encode() not in answer
        done = await browser.post(
            location, content=form, headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert done.status_code == 200 and "Saved" in done.text, done.text
    await store.close()
