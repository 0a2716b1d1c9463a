"""The proxies the environment names, as httpx's client takes them with ``trust_env``: which
proxy, if any, a URL's request goes through. Read here so that connections httpx does not
make itself (the authorization flow's pinned ones, the command line's watched ones) go
where httpx would send them, the same way for the same URL.

Rules (httpx's, which follow curl's):

* The environment is what ``urllib.request.getproxies`` reads: ``HTTP_PROXY``,
  ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` in upper or lower case (the lower case
  one when both are set; ``HTTP_PROXY`` not at all under CGI, where ``REQUEST_METHOD`` is
  set), else the system's settings (macOS, Windows). A proxy written without a scheme is
  ``http://``.
* ``HTTP_PROXY`` is for http URLs, ``HTTPS_PROXY`` for https ones, ``ALL_PROXY`` for any
  the other does not cover.
* ``NO_PROXY``, comma-separated, names what goes directly: ``*`` everything; a name, that
  name and every name under it (``example.com``: ``example.com`` and ``www.example.com``),
  or with a leading dot the names under it only; an address (IPv4 or IPv6), that address
  only (as httpx reads ``10.0.0.0/8``: the address before the slash, not the network); an
  entry with a scheme (``http://intranet``), for that scheme only; with a port
  (``example.com:8443``), for that port only.
* The most specific entry decides: one with a port before one without, then the longer
  host, then the one with a scheme. Names match case-insensitively, an entry that is no
  URL matches nothing.
"""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import httpx

__all__ = ["ProxyRoute", "ProxyRoutes", "environment_mounts"]

#: The variable that names each scheme's proxy, for messages.
_VARIABLES: Final = {"http": "HTTP_PROXY", "https": "HTTPS_PROXY", "all": "ALL_PROXY"}


def environment_mounts() -> dict[str, str | None]:
    """httpx's mounts for the environment's proxies: a URL pattern (``https://``,
    ``all://*example.com``) to the proxy's URL, or to None where none is used; ``{}`` when
    the environment names none or ``NO_PROXY`` is ``*``."""
    found = urllib.request.getproxies()
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            proxy = found[scheme]
            mounts[f"{scheme}://"] = proxy if "://" in proxy else f"http://{proxy}"
    for entry in (entry.strip() for entry in found.get("no", "").split(",")):
        if entry == "*":
            return {}
        if not entry:
            continue
        if "://" in entry:
            mounts[entry] = None
        elif _is_address(entry, ipaddress.IPv4Address) or entry.lower() == "localhost":
            mounts[f"all://{entry}"] = None
        elif _is_address(entry, ipaddress.IPv6Address):
            mounts[f"all://[{entry}]"] = None
        else:
            mounts[f"all://*{entry}"] = None
    return mounts


def _is_address(entry: str, kind: type[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> bool:
    try:
        kind(entry.split("/")[0])
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ProxyRoute:
    """A URL's way out: through ``proxy`` (its URL, credentials and all), which the
    environment names in ``variable`` (``HTTPS_PROXY``; the name in the case it is set in).
    Its repr leaves the URL out (its password with it): an error reporter that records the
    variables of a failing request's frames shows the variable's name only."""

    proxy: str = field(repr=False)
    variable: str


@dataclass(frozen=True)
class _Pattern:
    """One mount's URL pattern, matched as httpx matches it."""

    scheme: str  # "" for any
    host: str  # "" for any
    port: int | None
    host_regex: re.Pattern[str] | None

    @classmethod
    def parse(cls, pattern: str) -> _Pattern:
        url = httpx.URL(pattern)
        host = "" if url.host == "*" else url.host
        if not host:
            regex = None
        elif host.startswith("*."):
            regex = re.compile(rf"^.+\.{re.escape(host[2:])}$")
        elif host.startswith("*"):
            regex = re.compile(rf"^(.+\.)?{re.escape(host[1:])}$")
        else:
            regex = re.compile(rf"^{re.escape(host)}$")
        return cls("" if url.scheme == "all" else url.scheme, host, url.port, regex)

    def matches(self, url: httpx.URL) -> bool:
        return (
            (not self.scheme or self.scheme == url.scheme)
            and (self.host_regex is None or self.host_regex.match(url.host) is not None)
            and (self.port is None or self.port == url.port)
        )

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))


class ProxyRoutes:
    """Which proxy each URL goes through, from ``mounts`` (``environment_mounts()``'s form)."""

    def __init__(self, mounts: Mapping[str, str | None]) -> None:
        routes: list[tuple[_Pattern, ProxyRoute | None]] = []
        for pattern, proxy in mounts.items():
            try:
                parsed = _Pattern.parse(pattern)
            except httpx.InvalidURL:
                continue  # matches no URL
            routes.append((parsed, None if proxy is None else ProxyRoute(proxy, _variable(parsed.scheme))))
        self._routes = sorted(routes, key=lambda route: route[0].priority)  # stable, as httpx's sort

    @classmethod
    def from_environment(cls) -> ProxyRoutes:
        return cls(environment_mounts())

    def __bool__(self) -> bool:
        """Whether any URL goes through a proxy."""
        return any(route is not None for _, route in self._routes)

    def route(self, url: httpx.URL | str) -> ProxyRoute | None:
        """The proxy ``url``'s request goes through; None: it goes directly."""
        target = url if isinstance(url, httpx.URL) else httpx.URL(url)
        for pattern, route in self._routes:
            if pattern.matches(target):
                return route
        return None


def _variable(scheme: str) -> str:
    """The variable naming the proxy for ``scheme`` (``""``: any), in the case it is set in."""
    name = _VARIABLES[scheme or "all"]
    for variant in (name.lower(), name):
        if os.environ.get(variant):
            return variant
    return name  # from the system's settings
