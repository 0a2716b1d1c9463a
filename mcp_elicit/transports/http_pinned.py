"""The authorization flow's connections for an MCP server elsewhere (neither this machine
nor a private network): each host name resolved once, its addresses judged, and the
connection made to an address that was judged, never to a second lookup's answer (DNS
rebinding). The judgment is the core's (``core.authorization_urls.resolution_refusal``);
this module resolves and connects.

Rules:

* Hooked in where httpcore connects (an ``AsyncNetworkBackend``'s ``connect_tcp``), under
  an httpx transport of its own (:class:`PinnedTransport`): httpx's own transport takes
  no network backend. Above the TCP connection nothing changes: TLS is verified against
  the host name (httpcore sends it as SNI and checks the certificate for it), and the
  ``Host`` header is the name.
* A refused host is an :class:`AuthorizationError` naming the host and the address, raised
  before any connection is made; a name that does not resolve, or no address of which
  accepts, is a connect error naming the host.
* The addresses are tried in the resolver's order; an address written in the URL is
  judged as it is, not resolved.
* The resolver is a parameter: an async function of the host and port returning its
  addresses, the system's (``getaddrinfo``) by default; tests and a custom DNS give their own.
* No proxy from the environment is used here: a proxy would resolve the names itself, where
  no check reaches.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Final

import anyio
import httpcore
import httpx

from mcp_elicit.errors import AuthorizationError

__all__ = ["PinnedBackend", "PinnedTransport", "Resolver", "system_resolver"]

#: How a host name is looked up: ``(host, port)`` to its addresses, in the order to try them.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
#: Why a host at these addresses may not be connected to, or None (the core's judgment).
Refusal = Callable[[str, Sequence[str]], str | None]


async def system_resolver(host: str, port: int) -> list[str]:
    """The system's answer for ``host`` (``getaddrinfo``), each address once, in its order."""
    found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in found))


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to ``host`` at an address ``resolver`` gave for it, once ``refusal`` let
    every address it gave through."""

    def __init__(self, refusal: Refusal, resolver: Resolver = system_resolver) -> None:
        self._refusal = refusal
        self._resolver = resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = [host] if _is_address(host) else await self._resolve(host, port, timeout)
        refusal = self._refusal(host, addresses)
        if refusal is not None:
            raise AuthorizationError(refusal)
        failed: Exception | None = None
        for address in addresses:  # the ones judged, and no others
            try:
                return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failed = exc
        assert failed is not None  # addresses is never empty
        raise failed

    async def _resolve(self, host: str, port: int, timeout: float | None) -> list[str]:
        try:
            with anyio.fail_after(timeout):
                addresses = list(await self._resolver(host, port))
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"looking up {host} took longer than {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot look up {host} ({exc})") from None
        if not addresses:
            raise httpcore.ConnectError(f"{host} has no address")
        return addresses

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("the authorization flow connects over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over httpcore's connection pool with ``backend`` as its network,
    TLS as httpx's default (``httpx.create_ssl_context``), HTTP/1.1."""

    def __init__(self, backend: httpcore.AsyncNetworkBackend) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(), network_backend=backend
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        url = request.url
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            answer = await self._pool.handle_async_request(sent)
        assert isinstance(answer.stream, AsyncIterable)
        return httpx.Response(
            answer.status, headers=answer.headers, stream=_Body(answer.stream), extensions=answer.extensions
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _Body(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterable[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._chunks:
                yield chunk

    async def aclose(self) -> None:
        close = getattr(self._chunks, "aclose", None)
        if close is not None:
            await close()


#: httpcore's errors as httpx's, the more specific first (what httpx's own transport does).
_ERRORS: Final[tuple[tuple[type[Exception], type[httpx.HTTPError]], ...]] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _ERRORS:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise
