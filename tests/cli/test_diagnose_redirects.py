"""The legacy HTTP+SSE probe of ``check`` (``diagnose.legacy_sse_endpoint``) when the
server redirects it: what the person gave for that server stays with that server."""

from __future__ import annotations

import http.server

import pytest

from cli.fake_http import serving
from mcp_elicit.cli.legacy_sse import legacy_sse_endpoint


def _legacy_server(seen: list[dict[str, str]]) -> type[http.server.BaseHTTPRequestHandler]:
    class Legacy(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()})
            body = b"event: endpoint\ndata: /messages?session_id=abc\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Legacy


def _redirecting_to(target: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Redirect(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_GET(self) -> None:
            self.send_response(307)
            self.send_header("Location", f"{target}/sse")
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Redirect


@pytest.mark.anyio
async def test_a_redirect_to_another_origin_leaves_the_persons_headers_behind() -> None:
    """`check --header 'X-Api-Key: ...'` against a server whose GET redirects to another
    origin: the probe still finds the legacy server there, but the key (meant for the
    server the person named) does not go with it. httpx itself drops only Authorization."""
    seen: list[dict[str, str]] = []
    with serving(_legacy_server(seen)) as elsewhere, serving(_redirecting_to(elsewhere)) as named:
        found = await legacy_sse_endpoint(f"{named}/mcp", {"X-Api-Key": "the-secret", "Accept": "x"})
    assert found == "/messages?session_id=abc"
    assert len(seen) == 1 and "x-api-key" not in seen[0], seen
    assert seen[0]["accept"] == "text/event-stream"


@pytest.mark.anyio
async def test_the_same_origin_keeps_them() -> None:
    seen: list[dict[str, str]] = []
    with serving(_legacy_server(seen)) as base:
        found = await legacy_sse_endpoint(f"{base}/sse", {"X-Api-Key": "the-secret"})
    assert found == "/messages?session_id=abc"
    assert seen[0]["x-api-key"] == "the-secret"
