"""Requests through the proxy the environment names for their URL, as httpx's client sends
them (``transports.http_proxy_env`` reads which), for connections httpx does not make
itself: the authorization flow's for a server elsewhere (pinned, ``transports.http_pinned``)
and the command line's (watched). The rest go over the direct transport they were given.

Rules:

* An https URL goes through a tunnel (``CONNECT host:port``), its TLS verified against the
  host name inside it; an http URL is sent to the proxy whole (absolute form); a SOCKS5
  proxy (``socks5://``, ``socks5h://``) needs the ``socksio`` package, as in httpx.
  Credentials in the proxy's URL (``http://user:password@host:port``) go to it as
  ``Proxy-Authorization`` (Basic). Connection limits and keep-alive are httpx's defaults.
* The proxy resolves the host name and connects: no address is checked on this side.
  Whoever relies on a proxy trusts its resolution; what the URL says (a scheme, an address
  written in it, a name that says where it is) is checked before the request is made, by
  whoever makes it.
* What the proxy stands in the way with is an ``httpx.ProxyError`` naming it (its scheme,
  host and port: no credentials, path or query of its URL) and the variable that names it:
  no connection to it (refused, no answer within the connect timeout), no answer to a
  tunnel request within the connect timeout (part of connecting, whatever the read
  timeout) or the connection closed instead of one, a tunnel it refuses, a 407
  (credentials wanted, or not taken; as the answer to an http request sent to it whole:
  through a tunnel, a 407 is the server's, passed on as it is), a proxy URL httpx cannot
  use. A proxy the caller's HTTP client is given (``Routes`` naming its transport) is that
  transport's: its refusal is said as the client's proxy's. Nothing in it comes from the
  original error's chain: the failure is the proxy's, not the server's, and a diagnosis
  reading causes must not take it for the server refusing a connection.
* A request cut short (its caller's own timeout, shorter than or equal to the connect
  timeout) while it waits for the proxy (a connection to it, or its answer to a tunnel
  request) leaves that said in the ``ProxyWait`` of ``waiting_on_the_proxy()`` it ran in,
  so that whoever cut it can blame the proxy rather than the server.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import ssl
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol

import httpcore
import httpx

from mcp_elicit.transports.http_pool import PoolTransport
from mcp_elicit.transports.http_proxy_env import ProxyRoute, ProxyRoutes

__all__ = [
    "ProxyTransport",
    "ProxyWait",
    "RoutedTransport",
    "Routes",
    "through_environment",
    "waiting_on_the_proxy",
]

#: httpx's default connection limits (``httpx.Limits()``).
_MAX_CONNECTIONS: Final = 100
_MAX_KEEPALIVE: Final = 20
_KEEPALIVE_EXPIRY: Final = 5.0
_STATUS: Final = re.compile(r"(\d{3})\s*(.*)")


@dataclass(eq=False)
class ProxyWait:
    """What a request waits for from a proxy while it does: ``proxy`` (named with its
    variable: ``the proxy http://host:3128 (HTTPS_PROXY)``) and ``what`` it has not done yet
    (``answered the request for a tunnel to host:443``); None once the wait is over. Left
    set by a request cut short while waiting."""

    proxy: str | None = None
    what: str | None = None


_WAIT: ContextVar[ProxyWait | None] = ContextVar("mcp_elicit_proxy_wait", default=None)


@contextlib.contextmanager
def waiting_on_the_proxy() -> Iterator[ProxyWait]:
    """A ``ProxyWait`` that the requests made within the block (in this task) keep up to date."""
    wait = ProxyWait()
    token = _WAIT.set(wait)
    try:
        yield wait
    finally:
        _WAIT.reset(token)


@contextlib.contextmanager
def _waiting(proxy: str, what: str) -> Iterator[None]:
    """Said in the current ``ProxyWait`` while the block runs; still said when it is cut
    short (cancelled: not an ``Exception``), as what it was waiting for."""
    wait = _WAIT.get()
    if wait is None:
        yield
        return
    wait.proxy, wait.what = proxy, what
    try:
        yield
    except Exception:
        wait.proxy = wait.what = None
        raise
    wait.proxy = wait.what = None


def through_environment(direct: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
    """``direct`` for requests no proxy of the environment's is for; when the environment
    names one, a ``RoutedTransport`` sending the others through it."""
    routes = ProxyRoutes.from_environment()
    return RoutedTransport(routes, direct) if routes else direct


class Routes(Protocol):
    """Which way each URL goes out: a proxy the environment names (``ProxyRoutes``), a
    transport of the caller's (``transports.http_proxy_client``), or None: directly."""

    def __bool__(self) -> bool: ...

    def route(self, url: httpx.URL) -> httpx.AsyncBaseTransport | ProxyRoute | None: ...


class RoutedTransport(httpx.AsyncBaseTransport):
    """Each request through the proxy ``routes`` names for its URL, over the caller's
    transport it names (used, never closed here), or over ``direct``."""

    def __init__(self, routes: Routes, direct: httpx.AsyncBaseTransport) -> None:
        self.routes = routes
        self._direct = direct
        self._proxies: dict[ProxyRoute, ProxyTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        route = self.routes.route(request.url)
        if route is None:
            return await self._direct.handle_async_request(request)
        if isinstance(route, httpx.AsyncBaseTransport):  # the caller's: its proxy, its words
            try:
                return await route.handle_async_request(request)
            except httpx.ProxyError as exc:
                said = str(exc) or type(exc).__name__
            raise httpx.ProxyError(  # outside the except: the proxy's failure, no other's
                f"the HTTP client's proxy (its proxy= or mounts=, or the environment's it took) "
                f"refused {_where(request.url)} ({said})",
                request=request,
            )
        transport = self._proxies.get(route)
        if transport is None:
            transport = self._proxies[route] = ProxyTransport(route, request)
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        proxies, self._proxies = list(self._proxies.values()), {}
        for transport in proxies:
            await transport.aclose()
        await self._direct.aclose()


class ProxyTransport(PoolTransport):
    """Requests through the proxy of ``route`` (``request``: the one it is made for, named
    in an error about the proxy's URL)."""

    def __init__(self, route: ProxyRoute, request: httpx.Request | None = None) -> None:
        self.variable = route.variable
        try:
            proxy = httpx.Proxy(route.proxy)
        except (ValueError, httpx.InvalidURL) as exc:
            raise httpx.ProxyError(
                f"{route.variable} names no proxy httpx can use (http://, https://, socks5:// or "
                f"socks5h://, then host and port): {_reason(exc)}",
                request=request,
            ) from None
        self.shown = _shown(proxy.url)
        self._credentials = proxy.auth is not None
        self._sends_whole = proxy.url.scheme in ("http", "https")  # an http URL, in absolute form
        backend = _ToTheProxy(f"the proxy {self.shown} ({self.variable})")
        url = httpcore.URL(
            scheme=proxy.url.raw_scheme,
            host=proxy.url.raw_host,
            port=proxy.url.port,
            target=proxy.url.raw_path,
        )
        pool: httpcore.AsyncConnectionPool
        if proxy.url.scheme in ("http", "https"):
            pool = httpcore.AsyncHTTPProxy(
                proxy_url=url,
                proxy_auth=proxy.raw_auth,
                proxy_headers=proxy.headers.raw,
                ssl_context=httpx.create_ssl_context(),
                max_connections=_MAX_CONNECTIONS,
                max_keepalive_connections=_MAX_KEEPALIVE,
                keepalive_expiry=_KEEPALIVE_EXPIRY,
                network_backend=backend,
            )
        elif importlib.util.find_spec("socksio") is None:
            raise httpx.ProxyError(
                f"{self.variable} names a SOCKS proxy ({self.shown}), which needs the socksio "
                "package: pip install 'httpx[socks]'",
                request=request,
            )
        else:
            pool = httpcore.AsyncSOCKSProxy(
                proxy_url=url,
                proxy_auth=proxy.raw_auth,
                ssl_context=httpx.create_ssl_context(),
                max_connections=_MAX_CONNECTIONS,
                max_keepalive_connections=_MAX_KEEPALIVE,
                keepalive_expiry=_KEEPALIVE_EXPIRY,
                network_backend=backend,
            )
        super().__init__(pool)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except httpx.ProxyError as exc:
            message = self._failure(request.url, exc)
        else:
            # 407 to a request sent to the proxy whole is its own answer; through a tunnel
            # (https) or a SOCKS proxy, whatever comes back is the server's
            if response.status_code != 407 or request.url.scheme != "http" or not self._sends_whole:
                return response
            await response.aclose()
            reason = response.extensions.get("reason_phrase", b"").decode("ascii", "replace")
            message = self._refused("forward the request to", request.url, 407, reason)
        raise httpx.ProxyError(message, request=request)  # outside the except: no chain

    def _failure(self, url: httpx.URL, exc: httpx.ProxyError) -> str:
        if isinstance(exc.__cause__, _Unreachable):
            return str(exc)
        status = _STATUS.fullmatch(str(exc))  # httpcore's "407 Proxy Authentication Required"
        if status is None:  # a SOCKS proxy's refusal
            return f"the proxy {self.shown} ({self.variable}) refused the connection to {_where(url)} ({exc})"
        return self._refused("open a tunnel to", url, int(status[1]), status[2])

    def _refused(self, what: str, url: httpx.URL, status: int, reason: str) -> str:
        said = f"the proxy {self.shown} ({self.variable}) refused to {what} {_where(url)}"
        said += f" (HTTP {status} {reason}".rstrip() + "): "
        if status >= 500:
            return said + "it could not reach that host, or failed"
        if status != 407:
            return said + "it may not let that host through; list it in NO_PROXY to reach it directly"
        if self._credentials:
            return said + f"it did not take the user name and password in {self.variable}"
        return said + (
            f"it asks for a user name and password: give them in {self.variable}, as user:password@ before the host"
        )


def _shown(url: httpx.URL) -> str:
    """A proxy's URL as messages name it: scheme, host and port, nothing of its
    credentials, path or query (a key or a route may be written there)."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{url.scheme}://{host}" + (f":{url.port}" if url.port is not None else "")


def _where(url: httpx.URL) -> str:
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{port}"


def _reason(exc: Exception) -> str:
    """Why httpx refused a proxy URL, without the URL (its credentials)."""
    text = str(exc)
    return "an unknown scheme" if "Unknown scheme" in text else "not a valid URL"


class _Unreachable(httpcore.ProxyError):
    """No connection to the proxy, or no answer from it to a tunnel request: its message
    says so, naming it."""


class _ToTheProxy(httpcore.AsyncNetworkBackend):
    """httpcore's own network, its failures to connect (always to the proxy, for a proxy's
    pool) said as the proxy's."""

    def __init__(self, named: str) -> None:
        self._named = named
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            with _waiting(self._named, "taken the connection"):
                stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        except httpcore.ConnectTimeout:
            failure = f"{self._named} took no connection within the connect timeout ({timeout or 0:g} s)"
        except (httpcore.ConnectError, OSError) as exc:
            failure = f"cannot connect to {self._named}: {str(exc) or type(exc).__name__}"
        else:
            return _Handshake(stream, self._named, timeout)
        raise _Unreachable(failure)  # outside the except: the proxy's failure, no other's

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("a proxy is reached over TCP")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Handshake(httpcore.AsyncNetworkStream):
    """A connection to the proxy whose answer to a tunnel request (``CONNECT``, its first
    write) is part of connecting: waited for within the connect timeout (and the read
    timeout, when shorter), and when it does not come, or the proxy closes the connection
    instead, the failure is the proxy's. The rest of the connection is the stream's own:
    the tunnel's TLS and what goes through it, or a request sent whole and its answer."""

    def __init__(self, stream: httpcore.AsyncNetworkStream, named: str, connect: float | None) -> None:
        self._stream = stream
        self._named = named
        self._connect = connect
        self._written = False
        self._tunnel: str | None = None  # "host:port" while its CONNECT waits for an answer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        tunnel = self._tunnel
        if tunnel is None:
            return await self._stream.read(max_bytes, timeout)
        bound = min((t for t in (timeout, self._connect) if t is not None), default=None)
        asked = f"the request for a tunnel to {tunnel}"
        try:
            with _waiting(self._named, f"answered {asked}"):
                data = await self._stream.read(max_bytes, bound)
        except httpcore.ReadTimeout:
            failure = f"{self._named} did not answer {asked} within {bound or 0:g} s"
        except httpcore.ReadError as exc:
            failure = f"the connection to {self._named} broke before it answered {asked} ({exc})"
        else:
            if data:
                return data
            failure = f"{self._named} closed the connection without answering {asked}"
        raise _Unreachable(failure)  # outside the except: the proxy's failure, no other's

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not self._written:  # httpcore writes a request's head at once
            self._written = True
            if buffer.startswith(b"CONNECT "):
                self._tunnel = buffer.split(b" ", 2)[1].decode("ascii", "replace")
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        if self._written:  # the tunnel's TLS, to the server: the proxy has answered
            self._tunnel = None
            return stream
        return _Handshake(stream, self._named, self._connect)  # TLS to an https:// proxy first

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)
