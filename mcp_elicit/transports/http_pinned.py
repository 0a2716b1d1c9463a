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
* The addresses are tried in the resolver's order, the next one as soon as the one before
  fails or after 0.25 s without an answer (happy eyeballs, RFC 8305: one dead address does
  not hold the flow up); the first to connect is used. The connect timeout bounds the
  lookup and all the attempts together, as it bounds httpx's own connect, whatever the
  number of addresses. An address written in the URL is judged as it is, not resolved.
* The resolver is a parameter: an async function of the host and port returning its
  addresses, the system's (``getaddrinfo``) by default; tests and a custom DNS give their own.
* It connects directly. Where the MCP requests' HTTP client goes through a proxy for a URL
  (its own, ``proxy=`` or ``mounts=``; or, trusting the environment, ``HTTPS_PROXY``,
  ``HTTP_PROXY``, ``ALL_PROXY``, less ``NO_PROXY``), the flow's request goes through that
  proxy instead (``transports.http_proxy_client``, ``transports.http_proxy``): the proxy
  resolves the name, where no check of this module's reaches, and its resolution is
  trusted. A host no proxy is for is connected to here, checked.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Final

import anyio
import httpcore
import httpx

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_pool import PoolTransport

__all__ = ["PinnedBackend", "PinnedTransport", "Resolver", "system_resolver"]

#: How a host name is looked up: ``(host, port)`` to its addresses, in the order to try them.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
#: Why a host at these addresses may not be connected to, or None (the core's judgment).
Refusal = Callable[[str, Sequence[str]], str | None]
#: Seconds an address has to connect before the next one is tried alongside it (RFC 8305).
_NEXT_AFTER: Final = 0.25


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
        doing = "looking up"
        try:
            with anyio.fail_after(timeout):  # the lookup and every address: one connect timeout
                addresses = [host] if _is_address(host) else await self._resolve(host, port)
                refusal = self._refusal(host, addresses)
                if refusal is not None:
                    raise AuthorizationError(refusal)
                doing = "connecting to"
                return await self._first_to_connect(addresses, port, local_address, socket_options)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"{doing} {host} took longer than {timeout} s") from None

    async def _resolve(self, host: str, port: int) -> list[str]:
        try:
            addresses = list(await self._resolver(host, port))
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot look up {host} ({exc})") from None
        if not addresses:
            raise httpcore.ConnectError(f"{host} has no address")
        return addresses

    async def _first_to_connect(
        self,
        addresses: Sequence[str],
        port: int,
        local_address: str | None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None,
    ) -> httpcore.AsyncNetworkStream:
        """A connection to the first of ``addresses`` (the ones judged, and no others) that
        accepts: each tried in turn, the next as soon as the one before fails or has not
        answered in ``_NEXT_AFTER`` seconds, the rest given up once one connects (happy
        eyeballs, RFC 8305, as httpx's own connect to a name does); when none does, the
        last failure."""
        made: list[httpcore.AsyncNetworkStream] = []
        failed: list[Exception] = []
        options = list(socket_options) if socket_options is not None else None

        async def attempt(address: str, over: anyio.Event) -> None:
            try:
                made.append(await self._inner.connect_tcp(address, port, None, local_address, options))
                attempts.cancel_scope.cancel()
            except Exception as exc:  # kept: raised if no other address connects
                failed.append(exc)
            finally:
                over.set()

        try:
            async with anyio.create_task_group() as attempts:
                for address in addresses:
                    over = anyio.Event()
                    attempts.start_soon(attempt, address, over)
                    with anyio.move_on_after(_NEXT_AFTER):
                        await over.wait()
        except BaseException:  # the connect timeout, or the request cancelled
            with anyio.CancelScope(shield=True):
                for stream in made:
                    await stream.aclose()
            raise
        for stream in made[1:]:  # two connected at the same moment: the first is kept
            await stream.aclose()
        if made:
            return made[0]
        raise failed[-1]

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


class PinnedTransport(PoolTransport):
    """An httpx transport over httpcore's connection pool with ``backend`` as its network,
    TLS as httpx's default (``httpx.create_ssl_context``), HTTP/1.1."""

    def __init__(self, backend: httpcore.AsyncNetworkBackend) -> None:
        super().__init__(
            httpcore.AsyncConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=backend)
        )
