"""Where an MCP client's ``httpx.AsyncClient`` sends a URL's requests, so that the
authorization flow's own requests (``transports.http_auth``) go the same way: through the
proxy the client is given (``proxy=``, ``mounts=``), through the environment's when it
trusts the environment, or directly.

Rules (httpx's own, as its client picks a transport for a URL):

* The client's mounts are tried first, the most specific first: the one for the URL is the
  way out (``proxy=`` mounts its proxy for every URL), a mount of None is directly. The
  transport there is the client's own (its proxy, its TLS settings), used as it is and
  never closed here: the proxy resolves the name and connects, and its resolution is
  trusted, as the environment's proxy's is (``transports.http_proxy``).
* Only a mount that is a proxy is taken: httpx's transport made with ``proxy=`` (its pool
  an ``httpcore`` HTTP or SOCKS proxy). Any other mount (a transport without a proxy, with
  its own settings; an application in process; a transport of one's own, which may
  connect anywhere) is directly for the flow: its names looked up and checked as they are
  connected to, never sent over a transport that would connect unchecked.
* A URL no mount is for goes through the proxy the environment names for it
  (``transports.http_proxy_env``) when the client trusts the environment (``trust_env``,
  httpx's default); with ``trust_env=False``, directly. (httpx mounts the environment's
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
    """The ways out of one HTTP client: its ``mounts`` (pattern, transport or None; a
    transport that is no proxy taken as None: directly), most specific first, then the ``environment``'s proxies (``environment_mounts()``'s form;
    empty when the client does not trust the environment)."""

    def __init__(
        self,
        mounts: Sequence[tuple[_Pattern, httpx.AsyncBaseTransport | None]] = (),
        environment: Mapping[str, str | None] | None = None,
    ) -> None:
        self.mounts = tuple((pattern, _proxy(transport)) for pattern, transport in mounts)
        self.environment = dict(environment or {})
        self._proxies = ProxyRoutes(self.environment)

    @classmethod
    def of(cls, client: httpx.AsyncClient | None) -> ClientRoutes:
        """``client``'s ways out, the environment read now (None: the environment's only)."""
        if client is None:
            return cls((), environment_mounts())
        mounts: Mapping[_Pattern, httpx.AsyncBaseTransport | None] = getattr(client, "_mounts", {})
        return cls(tuple(mounts.items()), environment_mounts() if client.trust_env else {})

    def same(self, other: ClientRoutes) -> bool:
        """Whether ``other`` sends every URL the way this does (the same transports, the
        same proxies)."""
        return (
            len(self.mounts) == len(other.mounts)
            and all(
                mine[0] == theirs[0] and mine[1] is theirs[1]
                for mine, theirs in zip(self.mounts, other.mounts, strict=True)
            )
            and self.environment == other.environment
        )

    def __bool__(self) -> bool:
        """Whether any URL goes another way than directly."""
        return any(transport is not None for _, transport in self.mounts) or bool(self._proxies)

    def route(self, url: httpx.URL | str) -> httpx.AsyncBaseTransport | ProxyRoute | None:
        """The way out for ``url``: the client's transport mounted for it, the environment's
        proxy for it, or None (directly)."""
        target = url if isinstance(url, httpx.URL) else httpx.URL(url)
        for pattern, transport in self.mounts:
            if pattern.matches(target):
                return transport
        return self._proxies.route(target)


def _proxy(transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncBaseTransport | None:
    """``transport`` when it is a proxy (httpx's, or a pool of this package's, whose pool is
    an ``httpcore`` proxy's), else None: the flow connects itself, checking what it reaches."""
    pool = getattr(transport, "_pool", None)  # httpx.AsyncHTTPTransport's (private)
    return transport if isinstance(pool, (httpcore.AsyncHTTPProxy, httpcore.AsyncSOCKSProxy)) else None
