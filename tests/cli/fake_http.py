"""An HTTP server on 127.0.0.1 that fails in the ways real ones do, for the CLI tests.

``fake_http(tls=False)`` serves, in a thread, until the block ends:

* ``POST /auth`` 401 with a ``WWW-Authenticate`` challenge; ``POST /scope`` 403 with an
  ``insufficient_scope`` challenge;
* ``GET /sse`` a legacy HTTP+SSE stream whose first event is ``endpoint``; ``POST /sse``
  405;
* ``POST /page`` an HTML page; ``POST /plain`` a 200 in plain text (a terminal escape in
  it, and longer than a message quotes); ``POST /fail`` a 500 saying why; ``POST /echo/CODE``
  that status in plain text, echoing the request's ``Authorization`` and ``X-Api-Key``;
  ``POST /marks`` a 200 in plain text of direction marks, each quoted as a code;
* ``POST /moved/CODE`` a redirect with that status (301, 302, 303, 307, 308) to ``/bogus``;
* ``POST /broken``: a modern MCP server whose ``tools/list`` page has no ``tools``;
* ``POST /bogus``: a modern MCP server whose ``tools/call`` answers an unknown
  ``resultType``;
* anything else 404. With ``tls=True`` the same over TLS with a self-signed certificate
  no client trusts.

``serving(handler)`` serves another handler class the same way (a test's own server);
``JsonAnswering`` is a base for such a handler speaking JSON-RPC over POST (``_answer``),
refusing GET and DELETE 405.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support.tls import self_signed_127

DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-http", "version": "1"}},
}
TOOLS = {
    "resultType": "complete",
    "tools": [{"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}],
}

#: What ``POST /plain`` answers: a terminal escape that clears the screen, then 2000 "x".
PLAIN = b"It works!\x1b[2J\n" + b"x" * 2000
#: What ``POST /marks`` answers: left-to-right marks, each quoted as six characters
#: (``\u200e``), more than a message quotes.
MARKS = b"Paused:" + "\u200e".encode() * 100


class JsonAnswering(http.server.BaseHTTPRequestHandler):
    """A test's own JSON-RPC server over HTTP: ``_answer`` writes a JSON body (none for
    None) with an ``Mcp-Session-Id`` when ``session`` is given; GET and DELETE are 405."""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _answer(self, status: int, message: dict[str, object] | None, session: str = "") -> None:
        body = json.dumps(message).encode() if message is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if session:
            self.send_header("Mcp-Session-Id", session)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(405, None)

    do_DELETE = do_GET


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"event: endpoint\ndata: /messages?session_id=abc\n\n")
            self.wfile.flush()
            return
        self._send(404, b"Not Found", "text/plain")

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(size) or b"{}")
        host = self.headers.get("Host", "")
        if self.path == "/auth":
            challenge = f'Bearer resource_metadata="http://{host}/.well-known/oauth-protected-resource"'
            self._send(401, b"Unauthorized", "text/plain", {"WWW-Authenticate": challenge})
        elif self.path == "/scope":
            challenge = 'Bearer error="insufficient_scope", scope="bookings.write"'
            self._send(403, b"Forbidden", "text/plain", {"WWW-Authenticate": challenge})
        elif self.path == "/sse":
            self._send(405, b"Method Not Allowed", "text/plain", {"Allow": "GET"})
        elif self.path.startswith("/moved/"):  # /moved/301 ... /moved/308: to /bogus, which works
            self._send(int(self.path[7:]), b"", "text/plain", {"Location": "/bogus"})
        elif self.path == "/fail":
            self._send(500, b"database is down", "text/plain")
        elif self.path.startswith("/echo/"):  # a debugging endpoint that says what it was sent
            echoed = (
                f"got Authorization: {self.headers.get('Authorization')}, key={self.headers.get('X-Api-Key')}"
            )
            self._send(int(self.path[6:]), echoed.encode(), "text/plain")
        elif self.path == "/marks":
            self._send(200, MARKS, "text/plain; charset=utf-8")
        elif self.path == "/plain":
            self._send(200, PLAIN, "text/plain; charset=utf-8")
        elif self.path == "/page":
            self._send(200, b"<html><body>Welcome!</body></html>", "text/html; charset=utf-8")
        elif self.path in ("/broken", "/bogus") and isinstance(body, dict) and "id" in body:
            method = body.get("method")
            if method == "server/discover":
                result: dict[str, Any] = DISCOVER
            elif method == "tools/list":
                result = {"resultType": "complete", "items": []} if self.path == "/broken" else TOOLS
            else:
                result = {"resultType": "bogus"}
            reply = {"jsonrpc": "2.0", "id": body["id"], "result": result}
            self._send(200, json.dumps(reply).encode(), "application/json")
        else:
            self._send(404, b"Not Found", "text/plain")


def _self_signed(directory: Path) -> tuple[Path, Path]:
    cert, key = self_signed_127()
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert)
    key_path.write_bytes(key)
    return cert_path, key_path


@contextlib.contextmanager
def fake_http(tmp: Path, *, tls: bool = False) -> Iterator[str]:
    """Serve until the block ends; yields the base URL (no trailing slash)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    if tls:
        cert, key = _self_signed(tmp)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    scheme = "https" if tls else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler], *, tls: Path | None = None) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 in a thread until the block ends; yields the base URL.
    With ``tls`` (a directory), over TLS with a self-signed certificate written there as
    ``cert.pem``, which a client trusts through ``SSL_CERT_FILE``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*_self_signed(tls))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'http' if tls is None else 'https'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
