"""The person's part of MCP authorization on this machine: :class:`LoopbackAuthorizer`, an
:class:`~mcp_elicit.transports.http_auth.Authorizer` that asks for consent, opens the
system browser at the authorization URL and takes the browser's way back on a loopback
redirect URI (RFC 8252 §7.3), ``http://127.0.0.1:<port>/callback``.

Rules:

* The port is bound when ``redirect_uri`` is first read (the flow registers the client with
  it before it authorizes) or at the first ``authorize``, on 127.0.0.1 only; ``port`` picks
  it (0: the first free one of ``prefer``, the ports of earlier registrations, else any
  free port). Between authorizations nothing listens: each ``authorize`` serves
  the callback for its own duration and binds the same port again if it needs to.
* ``authorize(url, issuer=...)`` awaits ``consent(url, issuer)`` first (False: an
  :class:`AuthorizationError`, "sign-in declined"), then hands the URL to ``open_url`` (in a
  thread; False: the person is told to open it themselves), then waits at most ``timeout``
  seconds for the browser to come back.
* The callback server answers ``GET /callback`` once, with a small self-contained page
  (signed in, or not completed: the ``error`` it carried is not echoed, see ``_page``),
  and returns the full callback URL;
  anything else is 404 (405 for another method on ``/callback``), and a ``Host`` other than
  this address is 421. A callback without the ``state`` of the authorization URL is
  answered 400 and the wait goes on: anything on this machine (another process, a web
  page the person has open) can reach the loopback before the authorization server's
  redirect does, and must not end the sign-in. Checking the response (``state``, ``iss``,
  ``code``) is still the flow's job (``core.authorization.read_callback``).
* Nothing outlives the flow: the server stops when ``authorize`` ends however it ends
  (answer, timeout, cancellation), its socket is closed, and ``aclose`` releases a socket
  bound but never used. Ctrl-C stays the caller's (the server installs no signal handler).
"""

from __future__ import annotations

import asyncio
import html
import logging
import os
import secrets
import socket
import sys
import time
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from types import TracebackType
from typing import Any, Final

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.local import LocalServer, open_in_browser, serve_quietly

__all__ = ["Consent", "LoopbackAuthorizer", "Opener"]

log = logging.getLogger("mcp_elicit.oauth_loopback")

#: Asks the person whether to open ``url`` to sign in at ``issuer``; True to go on.
Consent = Callable[[str, str], Awaitable[bool]]
#: Opens a URL in a browser; True when it could.
Opener = Callable[[str], bool]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

HOST: Final = "127.0.0.1"
CALLBACK_PATH: Final = "/callback"
_HEADERS: Final = [
    (b"cache-control", b"no-store"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
]
_PAGE: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{title}</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:34em;margin:4em auto;padding:0 1em;color:#222}}
h1{{font-size:1.4em}} .bad{{color:#a00}} code{{font-size:.9em}}</style></head>
<body><h1 class="{kind}">{title}</h1>{body}</body></html>
"""


def _printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters become U+FFFD."""
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in text)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _page(query: str, issuer: str) -> bytes:
    """What the browser shows once it is back. An error the redirect carries is not shown
    here: until the flow has checked the response (its ``state`` and ``iss``), it may not be
    the authorization server's, and MCP forbids acting on or displaying an error whose
    issuer does not match. The terminal says what happened, once checked."""
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    where = f" at <code>{html.escape(issuer)}</code>" if issuer else ""
    if "error" not in params:
        title, kind = "Signed in", "ok"
        body = f"<p>You signed in{where}. You can close this tab and go back to the terminal.</p>"
    else:
        title, kind = "Sign-in not completed", "bad"
        body = f"<p>The sign-in{where} did not complete. You can close this tab; the terminal says why.</p>"
    return _PAGE.format(title=title, kind=kind, body=body).encode("utf-8")


_NOT_THIS_SIGN_IN: Final = _PAGE.format(
    title="Not this sign-in",
    kind="bad",
    body="<p>This is not the answer to the sign-in the terminal is waiting for. "
    "Finish signing in in the tab the terminal opened.</p>",
).encode("utf-8")


def _state(url: str) -> str | None:
    """The ``state`` of an authorization URL (None: it has none, or more than one)."""
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("state", [])
    return values[0] if len(values) == 1 else None


def _carries(query: str, state: str) -> bool:
    """Whether a callback's query carries ``state`` (once)."""
    values = urllib.parse.parse_qs(query, keep_blank_values=True).get("state", [])
    return len(values) == 1 and secrets.compare_digest(values[0].encode(), state.encode())


class _Callback:
    """The callback server's ASGI app for one ``authorize``: the first ``GET /callback``
    sets ``url`` (after its page is sent)."""

    def __init__(self, redirect_uri: str, port: int, issuer: str, state: str | None = None) -> None:
        self.redirect_uri = redirect_uri
        self.issuer = issuer
        self.state = state  # what a genuine callback carries (None: the request named none)
        self.hosts = frozenset({f"{HOST}:{port}", f"localhost:{port}"})
        self.url: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts:
            await _answer(send, 421, b"Misdirected Request\n")
            return
        if scope["path"] != CALLBACK_PATH or self.url.done():
            await _answer(send, 404, b"Not Found\n")
            return
        if scope["method"] != "GET":
            await _answer(send, 405, b"Method Not Allowed\n", [(b"allow", b"GET")])
            return
        query = scope.get("query_string", b"").decode("latin-1")
        if self.state is not None and not _carries(query, self.state):
            log.warning("ignored a request to the sign-in's callback without the sign-in's state")
            await _answer(send, 400, _NOT_THIS_SIGN_IN, kind=b"text/html; charset=utf-8")
            return
        try:
            await _answer(send, 200, _page(query, self.issuer), kind=b"text/html; charset=utf-8")
        finally:  # the page first (the flow stops this server next), the answer whatever happens
            if not self.url.done():
                self.url.set_result(self.redirect_uri + (f"?{query}" if query else ""))


async def _answer(
    send: Send,
    status: int,
    body: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    kind: bytes = b"text/plain; charset=utf-8",
) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


class LoopbackAuthorizer:
    """Signs a person in through their browser and a loopback redirect URI; see the module
    docstring. Use it as an async context manager, or call ``aclose``."""

    def __init__(
        self,
        *,
        consent: Consent,
        open_url: Opener,
        timeout: float = 300.0,
        port: int = 0,
        prefer: Sequence[int] = (),
        announce: Callable[[str], None] = _stderr,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be more than 0 seconds")
        if not 0 <= port <= 65535:
            raise ValueError("port is 0 (any free port) or 1-65535")
        self.consent = consent
        self.open_url = open_url
        self.timeout = timeout
        self.announce = announce
        self._port = port
        self._prefer = [p for p in prefer if 0 < p <= 65535] if port == 0 else []
        self._sock: socket.socket | None = None
        self._bound = False
        self._lock = asyncio.Lock()
        self._closed = False
        self._current: _Callback | None = None
        #: The issuers a sign-in came back from, in order.
        self.completed: list[str] = []
        #: Seconds spent in ``authorize`` (a person's time: consent, browser, sign-in).
        self.waited = 0.0

    # ---- the address -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The callback port (binding it on first use)."""
        if not self._bound:
            self._sock = self._bind()
            self._bound = True
        return self._port

    @property
    def redirect_uri(self) -> str:
        return f"http://{HOST}:{self.port}{CALLBACK_PATH}"

    def _bind(self) -> socket.socket:
        if self._closed:
            raise AuthorizationError("the sign-in listener is closed")
        while self._prefer:  # where an earlier run registered its redirect URI, if still free
            port = self._prefer.pop(0)
            try:
                return self._bind_port(port)
            except AuthorizationError:
                log.info("port %d is taken; the sign-in listens on another", port)
        return self._bind_port(self._port)

    def _bind_port(self, port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if os.name == "posix":  # rebinding over TIME_WAIT; on Windows it would allow sharing
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, port))
        except OSError as exc:
            sock.close()
            where = f"{HOST}:{port}" if port else HOST
            raise AuthorizationError(
                f"cannot listen for the sign-in's way back on {where} ({exc.strerror or exc})"
                + ("; is another sign-in using that port?" if port else "")
            ) from None
        self._port = int(sock.getsockname()[1])
        return sock

    def _take_socket(self) -> socket.socket:
        """The bound socket for one ``authorize`` (whose server will close it)."""
        if self._bound and self._sock is None:  # an earlier authorize closed it: the same port again
            return self._bind()
        _ = self.port  # binds on first use
        sock, self._sock = self._sock, None
        assert sock is not None
        return sock

    # ---- the flow --------------------------------------------------------------------------

    async def authorize(self, url: str, *, issuer: str) -> str:
        started = time.monotonic()
        try:
            return await self._authorize(url, issuer)
        finally:
            self.waited += time.monotonic() - started

    async def _authorize(self, url: str, issuer: str) -> str:
        async with self._lock:
            if not await self.consent(url, issuer):
                raise AuthorizationError("sign-in declined")
            sock = self._take_socket()
            app = _Callback(self.redirect_uri, self._port, issuer, _state(url))
            server = await _serve(sock, app)
            self._current = app
            try:
                opened = await open_in_browser(self.open_url, url)
                if not opened:
                    self.announce(
                        "mcp-elicit: could not start a browser here; open this address yourself to sign in:\n"
                        f"  {_printable(url)}"
                    )
                self.announce(
                    f"mcp-elicit: waiting for the sign-in in your browser (up to {self.timeout:g} s; "
                    "Ctrl-C to stop)..."
                )
                try:
                    async with asyncio.timeout(self.timeout):
                        callback = await asyncio.shield(app.url)
                except TimeoutError:
                    raise AuthorizationError(
                        f"no sign-in within {self.timeout:g} s: the browser did not come back to "
                        f"{self.redirect_uri} (was the page at {_printable(issuer)} finished?)"
                    ) from None
            finally:
                self._current = None
                if not app.url.done():
                    app.url.cancel()
                await server.stop()
            self.completed.append(issuer)
            return callback

    async def aclose(self) -> None:
        """Release the port; an ``authorize`` under way ends with an ``AuthorizationError``."""
        self._closed = True
        current = self._current
        if current is not None and not current.url.done():
            current.url.set_exception(AuthorizationError("the sign-in was stopped"))
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    async def __aenter__(self) -> LoopbackAuthorizer:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


async def _serve(sock: socket.socket, app: _Callback) -> LocalServer:
    return await serve_quietly(
        sock,
        app,
        grace=1,
        failed=lambda: AuthorizationError("the sign-in listener stopped before it started"),
    )
