"""URL mode over real HTTP: secrets a handler asks for are entered on the server's own page, wherever the server is deployed: mounted under a path,
behind proxies that strip a path or end TLS, with several allowed hosts, a public URL, a
store that goes away, a client without URL mode, and pages that name the server and user."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.stores import MemoryStore, RedisStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.proxy import stripping
from support.redis import SKIP_REASON, redis_available, redis_server
from support.url_mode import SECRET, Mcp, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


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
