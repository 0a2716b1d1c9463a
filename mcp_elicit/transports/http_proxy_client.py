"""Where an MCP client's ``httpx.AsyncClient`` sends a URL's requests, so that the
authorization flow's own requests (``transports.http_auth``) go the same way: through the
proxy the client is given (``proxy=``, ``mounts=``), through the environment's when it
trusts the environment, or directly.

Rules (httpx's own, as its client picks a transport for a URL):

* The client's mounts are tried first, the most specific first: the one for the URL is the
  way out (``proxy=`` mounts its proxy for every URL); a mount of None, and a URL no mount
  is for, go over the client's own transport (``transport=``, which may be a proxy's). The
  transport there is the client's own (its proxy, its TLS settings), used as it is and
  never closed here: the proxy resolves the name and connects, and its resolution is
  trusted, as the environment's proxy's is (``transports.http_proxy``).
* Only a transport that is a proxy is taken: httpx's made with ``proxy=`` (its pool an
  ``httpcore`` HTTP or SOCKS proxy). Any other (a transport without a proxy, with its own
  settings; an application in process; a transport of one's own, which may connect
  anywhere) is directly for the flow: its names looked up and checked as they are
  connected to, never sent over a transport that would connect unchecked. The address an
  answer came from over a mounted transport of one's own is not taken for the server's
  either (``hides_the_server``): it may wrap a proxy.
* A URL no mount is for, when the client's own transport is no proxy, goes through the
  proxy the environment names for it (``transports.http_proxy_env``) when the client
  trusts the environment (``trust_env``, httpx's default); with ``trust_env=False``,
  directly. (httpx mounts the environment's
  proxies itself, unless it is given a transport of its own: this rule stands in for
  those mounts then, as ``cli.http_watch``'s transport does.)
* Without a client (an ``OAuth`` used on a client no MCP transport told it of), the
  environment decides, as for a client trusting it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import httpcore
import httpx

from mcp_elicit.transports.http_proxy_env import ProxyRoute, ProxyRoutes, environment_mounts

__all__ = ["ClientRoutes"]


class _Pattern(Protocol):
    """A mount's URL pattern, as httpx keeps it (``httpx._utils.URLPattern``)."""

    def matches(self, other: httpx.URL) -> bool: ...


class ClientRoutes:
    """The ways out of one HTTP client: its ``mounts`` (pattern, transport or None), most
    specific first, then its own ``transport`` (for a mount of None and a URL no mount is
    for, as in httpx), then the ``environment``'s proxies (``environment_mounts()``'s form;
    empty when the client does not trust the environment)."""

    def __init__(
        self,
        mounts: Sequence[tuple[_Pattern, httpx.AsyncBaseTransport | None]] = (),
        environment: Mapping[str, str | None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.mounts = tuple(mounts)
        self.transport = transport
        self.environment = dict(environment or {})
        self._proxies = ProxyRoutes(self.environment)

    @classmethod
    def of(cls, client: httpx.AsyncClient | None) -> ClientRoutes:
        """``client``'s ways out, the environment read now (None: the environment's only)."""
        if client is None:
            return cls((), environment_mounts())
        mounts: Mapping[_Pattern, httpx.AsyncBaseTransport | None] = getattr(client, "_mounts", {})
        environment = environment_mounts() if client.trust_env else {}
        return cls(tuple(mounts.items()), environment, getattr(client, "_transport", None))

    def same(self, other: ClientRoutes) -> bool:
        """Whether ``other`` sends every URL the way this does (the same transports, the
        same proxies)."""
        return (
            len(self.mounts) == len(other.mounts)
            and all(
                mine[0] == theirs[0] and mine[1] is theirs[1]
                for mine, theirs in zip(self.mounts, other.mounts, strict=True)
            )
            and self.transport is other.transport
            and self.environment == other.environment
        )

    def __bool__(self) -> bool:
        """Whether any URL goes another way than directly."""
        transports = [transport for _, transport in self.mounts] + [self.transport]
        return any(_is_proxy(transport) for transport in transports) or bool(self._proxies)

    def route(self, url: httpx.URL | str) -> httpx.AsyncBaseTransport | ProxyRoute | None:
        """The way out for ``url``: the client's proxy for it (a transport of its), the
        environment's proxy for it, or None (directly)."""
        target = url if isinstance(url, httpx.URL) else httpx.URL(url)
        mounted, transport = self._picked(target)
        if _is_proxy(transport):
            return transport
        return None if mounted else self._proxies.route(target)

    def hides_the_server(self, url: httpx.URL | str) -> bool:
        """Whether the address an answer from ``url`` came from may not be the server's:
        through a proxy, or over a transport of the client's own mounted for it whose way
        out is not known (it may wrap a proxy)."""
        target = url if isinstance(url, httpx.URL) else httpx.URL(url)
        if self.route(target) is not None:
            return True
        mounted, transport = self._picked(target)
        return mounted and transport is not None and not _is_direct(transport)

    def _picked(self, url: httpx.URL) -> tuple[bool, httpx.AsyncBaseTransport | None]:
        """Whether a mount is for ``url``, and the transport the client sends it over."""
        for pattern, transport in self.mounts:
            if pattern.matches(url):
                return True, self.transport if transport is None else transport
        return False, self.transport


def _pool(transport: httpx.AsyncBaseTransport | None) -> object:
    return getattr(transport, "_pool", None)  # httpx.AsyncHTTPTransport's (private)


def _is_proxy(transport: httpx.AsyncBaseTransport | None) -> bool:
    """Whether ``transport`` goes through a proxy: httpx's (or a pool of this package's)
    whose pool is an ``httpcore`` HTTP or SOCKS proxy."""
    return isinstance(_pool(transport), (httpcore.AsyncHTTPProxy, httpcore.AsyncSOCKSProxy))


def _is_direct(transport: httpx.AsyncBaseTransport) -> bool:
    """Whether ``transport`` is httpx's own, connecting directly (its pool no proxy's)."""
    return isinstance(transport, httpx.AsyncHTTPTransport) and not _is_proxy(transport)
