"""Streamable HTTP, client side (httpx): one POST per message, JSON or SSE answers, and for
handshake-era sessions the GET event stream and DELETE. How one request's response is read
is ``http_client_exchange``.

Rules:

* Every POST carries ``Accept: application/json, text/event-stream`` and
  ``Content-Type: application/json``, the caller's fixed headers (authorization, say), and
  the protocol headers of the message, in that order of precedence. The fixed headers are
  checked when the transport is made (``_sendable``): one that HTTP cannot carry as given
  is refused then, naming it (never its value), not found out by every request.
* Only the configured URL is ever requested (and where it redirects, as servers mounted at
  ``/mcp/`` do): nothing in a message (a ``$ref``, a URL to show the user) makes this
  transport fetch anything.
* A redirect is not followed from https to plain http, nor, for a POST or a DELETE, to
  another origin; a request that does go elsewhere (the GET stream) goes without what is
  meant for the configured server only (``http_redirects``). Both rules hold for a
  caller's own ``client`` too (event hooks, added while the transport is open, that touch
  only this transport's requests).
* A server's request that is not valid JSON-RPC (``params`` not an object, say) but whose
  id can be read is answered -32600 Invalid Request (``http_client_exchange``), POSTed like
  any answer to a server's request: the fixed headers and the session's (``Mcp-Session-Id``,
  ``MCP-Protocol-Version``), copied from the request whose stream carried it. On
  ``initialize``'s own stream that request had no session yet: the ``Mcp-Session-Id`` its
  response's headers assign (they arrive before any event) goes instead, so the answer
  reaches the session it belongs to (no ``MCP-Protocol-Version``: none is agreed yet).
  At most 16 such answers are on their way at once; a flood beyond that goes unanswered.
* An answer to a server's request that the server refuses with 413 (larger than it takes)
  is followed by a JSON-RPC error under the same id (-32603, saying so), and a warning:
  the server's question then ends at once instead of waiting for its timeout.
* Of the answer to a notification's (or a response's) POST and to ``DELETE``, no more is
  read than is logged (300 bytes).
* Answers are asked for uncompressed (``Accept-Encoding: identity``): a response compressed
  all the same fails its request unread, naming the encoding (the caps on a response count
  decoded bytes, and a few KB of gzip decode to gigabytes in one read).
* Network time is bounded by the client (its request budget); httpx has a connect timeout
  (a host that takes no connection within it fails the request saying so) and no read
  timeout, since a response stream may rightly stay quiet while a person answers a
  question on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import httpx
from typing_extensions import Unpack

from mcp_elicit.client.answerers import Answerer
from mcp_elicit.client.options import ClientOptions, seconds
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.session import Client
from mcp_elicit.client.transport import Ended, Trace, Unsolicited, speaks_modern
from mcp_elicit.errors import AuthorizationError, TransportError
from mcp_elicit.log_labels import peer_text, request_where
from mcp_elicit.telemetry_attributes import redact_uri
from mcp_elicit.transports.given import callable_or_none, instance, wrong_type
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client_exchange import HttpExchange, describe
from mcp_elicit.transports.http_redirects import MARK, check_server_url, compressed, keep_home, refuse_leaving
from mcp_elicit.wire import jsonrpc
from mcp_elicit.wire.sse import last_event_id_value

__all__ = ["HttpTransport", "connect_http"]

log = logging.getLogger("mcp_elicit.http_client")

_ACCEPT: Final = "application/json, text/event-stream"
_SEND_TIMEOUT: Final = 30.0
#: Answers come uncompressed: a few KB of gzip can swell to gigabytes (and millions of SSE
#: events) in one read, which no cap on the decoded size stops in time.
_IDENTITY: Final = {"Accept-Encoding": "identity"}
#: How many -32600 answers to unreadable requests may be on their way at once; past it, a
#: flood of them (each owed a POST) is logged, not answered.
_MAX_REPLIES: Final = 16
_SHOWN_BODY: Final = 300  # what is read (and logged) of the answer to a notification's POST
#: What an answer to a server's request carries besides the fixed headers (2025-11-25).
_SESSION_HEADERS: Final = frozenset({"mcp-session-id", "mcp-protocol-version"})
#: A header name (RFC 9110 token).
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")


class HttpTransport:
    """A Streamable HTTP connection to one MCP endpoint."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        connect_timeout: float = 10.0,
        trace: Trace | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        if auth is not None and client is not None:
            raise ValueError("pass auth or client, not both: give the client its auth yourself")
        self.url = check_server_url(url)
        self._shown = redact_uri(url)  # as messages and logs name it, whole: no key from its query
        if auth is not None and not _taken_as_auth(auth):
            wrong_type("auth", auth, _AUTH_TAKES)
        self.auth = auth
        if headers is not None and not isinstance(headers, Mapping):
            wrong_type(
                "headers", headers, "a mapping of header names to values ({'X-Team': 'blue'}), or None"
            )
        self.fixed = _sendable(headers or {})
        if client is not None:
            instance("client", client, httpx.AsyncClient, "an httpx.AsyncClient, or None")
        self._given = client
        self._client: httpx.AsyncClient | None = client
        self.connect_timeout = seconds("connect_timeout", connect_timeout)
        self.trace = callable_or_none("trace", trace, "a function trace(direction, message), or None")
        self._exchanges: set[HttpExchange] = set()
        self._replies: set[asyncio.Task[None]] = set()
        self._redirect_warned = False

    @property
    def http(self) -> bool:
        return True

    @property
    def where(self) -> str:
        return self._shown

    @property
    def network(self) -> Mapping[str, str | int]:
        url = httpx.URL(self.url)
        port = url.port or (443 if url.scheme == "https" else 80)
        return {
            "network.transport": "tcp",
            "network.protocol.name": "http",
            "server.address": url.host,
            "server.port": port,
        }

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise TransportError(f"the connection to {self._shown} is not open")
        return self._client

    async def open(self, unsolicited: Unsolicited) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(connect=self.connect_timeout, read=None, write=60.0, pool=60.0),
                follow_redirects=True,
                auth=self.auth,
            )
        if isinstance(self._client.auth, OAuth):  # its requests go where this client's go
            # this transport's own client takes httpx's defaults: the environment's proxies,
            # which the flow then takes itself (its errors naming the proxy and variable)
            await self._client.auth.route_like(self._given)
        hooks = self._client.event_hooks["request"]
        if self._keep_fixed_headers_home not in hooks:
            hooks.append(self._keep_fixed_headers_home)
        seen = self._client.event_hooks["response"]
        if self._refuse_leaving not in seen:
            seen.append(self._refuse_leaving)

    async def _refuse_leaving(self, response: httpx.Response) -> None:
        """Of this transport's requests, refuse a redirect that may not be followed (see
        ``http_redirects.refuse_leaving``)."""
        if response.request.extensions.get(MARK) is self:
            refuse_leaving(response, self.url, self._shown)

    async def _keep_fixed_headers_home(self, request: httpx.Request) -> None:
        """Of this transport's requests, one redirected to another origin goes without what
        is meant for the configured server only (``http_redirects.keep_home``)."""
        if request.extensions.get(MARK) is not self:
            return  # not this transport's request (a caller's client may be shared)
        dropped = keep_home(request, self.url, self.fixed)
        if dropped and not self._redirect_warned:
            self._redirect_warned = True
            log.warning(
                "%s redirected to another origin (%s); %s not sent there",
                self._shown,
                redact_uri(
                    str(request.url.copy_with(path="/", query=None, fragment=None))
                ),  # its password too
                ", ".join(dropped),
            )

    def _headers(self, extra: Mapping[str, str], *, accept: str = _ACCEPT) -> dict[str, str]:
        headers = {"Accept": accept, "Content-Type": "application/json", **self.fixed, **_IDENTITY}
        headers.update(extra)
        return headers

    async def exchange(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> HttpExchange:
        if self.trace is not None:
            self.trace("send", message)
        exchange = HttpExchange(
            self,
            "POST",
            self._headers(headers),
            jsonrpc.encode(message),
            rid=message.get("id"),
            modern=speaks_modern(message),
        )
        self._exchanges.add(exchange)
        return exchange

    async def send(self, message: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        if self.trace is not None:
            self.trace("send", message)
        body = jsonrpc.encode(message)
        try:
            async with (
                asyncio.timeout(_SEND_TIMEOUT),
                self.client.stream(
                    "POST",
                    self.url,
                    headers=self._headers(headers),
                    content=body,
                    extensions={MARK: self},
                ) as response,
            ):
                status = response.status_code
                head = await _head(response, _SHOWN_BODY)
        except TimeoutError:
            raise TransportError(
                f"could not send {message.get('method', 'a response')} to {self._shown}: "
                f"its POST got no answer within {_SEND_TIMEOUT:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise TransportError(f"could not send to {self._shown}: {describe(exc)}") from None
        if status == 413 and "result" in message and "method" not in message:
            await self._too_large(message, headers, len(body))
        elif status >= 400:
            log.warning(
                "%s answered a %s with HTTP %d: %s",
                self._shown,
                message.get("method", "response"),
                status,
                peer_text(head.decode("utf-8", errors="replace")),
            )

    async def _too_large(self, answer: Mapping[str, Any], headers: Mapping[str, str], size: int) -> None:
        """The server refused ``answer`` (to one of its requests) with 413: it is told so
        with a small JSON-RPC error under the same id, so that its question fails now
        rather than waiting for an answer that will never come."""
        # what matters first: a server may show only the start of it
        text = f"Internal error: answer too large for the server (HTTP 413, {size} bytes); it was not sent"
        log.warning(
            "%s refused the answer to its %s with HTTP 413 (%d bytes is too large for it); "
            "telling it so with a JSON-RPC error (-32603)",
            self._shown,
            request_where(answer.get("id")),
            size,
        )
        error = {"jsonrpc": "2.0", "id": answer.get("id"), "error": {"code": -32603, "message": text}}
        await self.send(error, headers)

    def answer_unreadable(
        self, reply: dict[str, Any], sent_with: Mapping[str, str], response: Mapping[str, str]
    ) -> None:
        """POST ``reply`` (a -32600 to a server's request that is not valid JSON-RPC) the
        way the client answers any server request: with the session's headers, taken from
        the request whose stream carried it, or (that request opened the session:
        ``initialize``) the session its ``response`` headers assign. In the background: a
        stream is being read."""
        if len(self._replies) >= _MAX_REPLIES:
            log.warning(
                "%s sent more unreadable requests than the %d answered at a time; %s not answered",
                self._shown,
                _MAX_REPLIES,
                request_where(reply["id"]),
            )
            return
        session = {k: v for k, v in sent_with.items() if k.lower() in _SESSION_HEADERS}
        assigned = response.get("mcp-session-id")
        if (
            assigned
            and all(0x21 <= ord(c) <= 0x7E for c in assigned)
            and not any(k.lower() == "mcp-session-id" for k in session)
        ):
            session["Mcp-Session-Id"] = assigned
        task = asyncio.ensure_future(self._answer_unreadable(reply, session))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)

    async def _answer_unreadable(self, reply: dict[str, Any], headers: dict[str, str]) -> None:
        try:
            await self.send(reply, headers)
        except (TransportError, AuthorizationError) as exc:
            log.warning(
                "could not answer %s's unreadable %s: %s",
                self._shown,
                request_where(reply["id"]),
                peer_text(str(exc)),
            )

    async def listen(
        self, headers: Mapping[str, str], last_event_id: str | None = None
    ) -> HttpExchange | Ended:
        extra = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        if last_event_id is not None:  # sent as its UTF-8 bytes (HttpExchange)
            extra["Last-Event-ID"] = last_event_id_value(last_event_id)
        all_headers = self._headers(extra, accept="text/event-stream")
        all_headers.pop("Content-Type", None)
        exchange = HttpExchange(self, "GET", all_headers, None)
        self._exchanges.add(exchange)
        # The stream is open once its headers are in; a refusal (405, say) means no stream.
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.connect_timeout + 5.0):
                    await exchange.started.wait()
        except BaseException:  # its caller gave up waiting (its request timed out): no GET left open
            await exchange.aclose()
            raise
        if not exchange.streaming:
            await exchange.aclose()
            return exchange.refusal()
        return exchange

    async def end_session(self, headers: Mapping[str, str]) -> None:
        extra = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        try:
            async with asyncio.timeout(5.0):
                async with self.client.stream(
                    "DELETE", self.url, headers={**self.fixed, **_IDENTITY, **extra}, extensions={MARK: self}
                ) as response:
                    await _head(response, 0)
        except TransportError as exc:  # a redirect refused, a failed authorization
            log.warning("DELETE %s failed: %s", self._shown, peer_text(str(exc)))
        except (httpx.HTTPError, TimeoutError) as exc:
            log.debug("DELETE %s failed: %s", self._shown, describe(exc))

    def forget(self, exchange: HttpExchange) -> None:
        """``exchange`` is closed: not one to close with the transport any more."""
        self._exchanges.discard(exchange)

    async def gone(self) -> str:
        """Never: each request connects anew, so a server down now may answer the next."""
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        for exchange in list(self._exchanges):
            await exchange.aclose(why="the transport was closed (HttpTransport.aclose)")
        await reap(*self._replies)
        if self._client is not None and self._given is None:
            await self._client.aclose()
        if self._client is not None:
            with contextlib.suppress(ValueError):
                self._client.event_hooks["request"].remove(self._keep_fixed_headers_home)
            with contextlib.suppress(ValueError):
                self._client.event_hooks["response"].remove(self._refuse_leaving)
        self._client = self._given
        if isinstance(self.auth, OAuth):  # its own HTTP client, for the flow's requests
            await self.auth.aclose()


async def _head(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of the body (what is logged of it), and no more read: the
    rest, however long, is left unread when the response closes."""
    head = b""
    if limit <= 0 or compressed(response) is not None:
        return head
    async for chunk in response.aiter_bytes():
        head += chunk[: limit - len(head)]
        if len(head) >= limit:
            break
    return head


#: What ``auth`` takes: what its httpx client takes.
_AUTH_TAKES: Final = (
    "an httpx.Auth (OAuth(...), httpx.BasicAuth(...)), a function auth(request) -> request, "
    "a (user, password) pair, or None"
)


def _taken_as_auth(auth: object) -> bool:
    """Whether httpx takes ``auth``: an ``httpx.Auth``, a function, or a (user, password) pair."""
    if isinstance(auth, tuple):
        return len(auth) == 2 and all(isinstance(part, str | bytes) for part in auth)
    return isinstance(auth, httpx.Auth) or callable(auth)


def _sendable(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers``, the caller's fixed headers, when each can be sent as given: a token for
    a name, and a value of visible ASCII, spaces and tabs (bytes, as httpx takes them, may
    also hold bytes past 0x7F: their encoding is the caller's choice), not starting or
    ending with white space; else a ``ValueError`` (``TypeError`` for a value that is
    neither text nor bytes) naming the header, never its value (a token, often), when the
    transport is made rather than a failed request each time, told as the server's doing."""
    fixed = dict(headers)
    for name, value in fixed.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            raise ValueError(
                f"the header name {name!r} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~)"
            )
        if isinstance(value, bytes):
            text = value.decode("latin-1")
        elif isinstance(value, str):
            text = value
            wide = next((i for i, ch in enumerate(text) if ord(ch) > 0x7F), None)
            if wide is not None:
                raise ValueError(
                    f"the value of header {name!r} is not ASCII ({text[wide]!r} at {wide}); HTTP header "
                    "values are ASCII: encode it as the server expects (percent-encoding, base64)"
                )
        else:
            raise TypeError(
                f"the value of header {name!r} must be a string (or bytes), not {type(value).__name__}"
            )
        control = next((i for i, ch in enumerate(text) if ch != "\t" and (ch < " " or ch == "\x7f")), None)
        if control is not None:
            raise ValueError(f"the value of header {name!r} holds a control character (at {control})")
        if text != text.strip(" \t"):
            raise ValueError(
                f"the value of header {name!r} starts or ends with white space, which HTTP drops"
            )
    return fixed


@contextlib.asynccontextmanager
async def connect_http(
    url: str,
    *,
    answerer: Answerer | None = None,
    headers: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    trace: Trace | None = None,
    auth: httpx.Auth | None = None,
    **options: Unpack[ClientOptions],
) -> AsyncIterator[Client]:
    """A connected ``Client`` for the Streamable HTTP endpoint at ``url``; ``options`` are
    ``Client``'s keyword arguments. ``auth``: e.g. an :class:`~mcp_elicit.transports.http_auth.OAuth`."""
    transport = HttpTransport(url, headers=headers, client=http_client, trace=trace, auth=auth)
    async with Client(transport, answerer=answerer, **options) as client:
        yield client
