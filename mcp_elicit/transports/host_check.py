"""Which ``Host`` and ``Origin`` the HTTP server answers: its DNS-rebinding protection.

Rules:

* An allow-list entry is ``*`` (no check at all) or a name as clients send it in ``Host``: a
  host name (letters, digits, ``-``, ``_``, dots), an IPv4 address or a bracketed IPv6 one,
  with or without a port (any port of an allowed name is allowed). An entry that could
  never match a ``Host`` (a URL, a path, a wildcard other than ``*`` alone, several names
  in one, a non-ASCII name clients send in its ``xn--`` form, an IPv6 address without its
  brackets) is a ``ConfigError`` when the list is made, saying what to give instead:
  accepted, it would answer every request 421.
* A ``Host`` not allowed is 421, an ``Origin`` not allowed 403, ``Origin: null`` included
  (a sandboxed frame, a page after a cross-site redirect), except on a hosted page, whose
  own form is posted with it (``pages.PAGE_NULL_ORIGIN``).
* Each name refused is logged once, as a warning naming the option that would allow it
  (``_WARNED_NAMES`` names at most, each quoted no longer than a DNS name can be, so a
  flood of made-up names cannot fill the log): a
  proxy that does not pass on the ``Host`` clients used shows in the server's log, not only
  at the client.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Final

from mcp_elicit.errors import ConfigError
from mcp_elicit.telemetry import redact_urls
from mcp_elicit.transports.http_exchange import host_only
from mcp_elicit.transports.pages import PAGE_NULL_ORIGIN

__all__ = ["HostCheck", "allowed_host"]

log = logging.getLogger("mcp_elicit.http")

#: Names refused that are logged (each once); refusals beyond are not.
_WARNED_NAMES: Final = 32
_NAME: Final = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*)(?:\.[a-z0-9_-]+)*\.?")
_IPV6: Final = re.compile(r"\[[0-9a-f:.]+\]")
#: The longest DNS name (253 characters and its final dot): a longer Host names nothing.
_LONGEST: Final = 254


def allowed_host(entry: str) -> str:
    """``entry`` as the allow-list keeps it (``*``, or the name lower-cased without its
    port); a ``ConfigError`` saying what to give instead when no ``Host`` could match it."""
    text = entry.strip()
    if text == "*":
        return text
    if not text:
        raise ConfigError("expected a host name (or '*'), not an empty one")
    if "://" in text:
        netloc = urllib.parse.urlsplit(text).netloc.rpartition("@")[2]
        raise ConfigError(f"{entry!r} is a URL: give the host name alone, {netloc.lower()!r}")
    if "," in text or any(c.isspace() for c in text):
        raise ConfigError(f"{entry!r} holds several names: give one name per entry (repeat the option)")
    if "*" in text:
        raise ConfigError(
            f"{entry!r}: a wildcard matches nothing here; list each name, or give '*' alone to turn "
            "the check off"
        )
    if "/" in text:
        name = text.split("/", 1)[0]
        raise ConfigError(f"{entry!r}: give the host name without a path, {name.lower()!r}")
    name = host_only(text)
    if not name.isascii():
        form = _as_clients_send(name)
        if form:
            raise ConfigError(f"{entry!r}: give the name as clients send it, {form!r}")
    address = _ipv6(name)
    if address is not None:
        raise ConfigError(f"{entry!r}: give an IPv6 address in brackets, as clients send it, '[{address}]'")
    if not _is_name(name):
        raise ConfigError(
            f"{entry!r} is not a host name (letters, digits, '-', '_' and dots, or an IP "
            "address, optionally with :PORT)"
        )
    return name


def _is_name(name: str) -> bool:
    return bool(_NAME.fullmatch(name) or _IPV6.fullmatch(name))


def _as_clients_send(name: str) -> str | None:
    """A non-ASCII name in the ASCII form browsers send (UTS 46, non-transitional: "faß"
    is "xn--fa-hia", not IDNA 2003's "fass"); None when it is no name."""
    import idna

    try:
        return idna.encode(name, uts46=True, transitional=False).decode("ascii")
    except UnicodeError:  # idna.IDNAError is one
        return None


def _ipv6(name: str) -> ipaddress.IPv6Address | None:
    """``name`` as an IPv6 address written without its brackets, else None."""
    try:
        return ipaddress.IPv6Address(name)
    except ValueError:
        return None


class HostCheck:
    """The allow-list of one app: ``refusal(headers)`` is the status and message for a
    request it refuses (None for one it serves)."""

    def __init__(self, hosts: Iterable[str]) -> None:
        if isinstance(hosts, str | bytes):
            raise ConfigError(f"allowed_hosts: a list of host names, not a string ({hosts!r})")
        names: set[str] = set()
        for entry in hosts:
            try:
                names.add(allowed_host(entry))
            except ConfigError as exc:
                raise ConfigError(f"allowed_hosts: {exc}") from None
        self._any = "*" in names
        self._names = frozenset(names)
        self._warned: set[str] = set()
        self._quiet = False  # past _WARNED_NAMES names: no more warnings

    def refusal(self, headers: Mapping[str, str], *, page: bool = False) -> tuple[int, str] | None:
        """421 for a Host not allowed, 403 for an Origin not allowed (``null`` too, except on
        a ``page``)."""
        if self._any:
            return None
        host = headers.get("host")
        if host is None or host_only(host) not in self._names:
            self._warn("Host", host, 421)
            return 421, f"Misdirected request: host {host!r} is not allowed (DNS-rebinding protection)"
        origin = headers.get("origin")
        if origin is None or (page and origin == PAGE_NULL_ORIGIN):
            return None
        if host_only(origin.split("://", 1)[-1]) not in self._names:
            self._warn("Origin", origin, 403)
            return 403, f"Forbidden: origin {origin!r} is not allowed (DNS-rebinding protection)"
        return None

    def _warn(self, header: str, value: str | None, status: int) -> None:
        # kept (and said) no longer than a name can be: a Host is as long as the parser lets it
        name = host_only(value.split("://", 1)[-1])[: _LONGEST + 1] if value is not None else ""
        if name in self._warned or self._quiet:
            return
        if len(self._warned) >= _WARNED_NAMES:  # said once, so that silence is not read as none
            self._quiet = True
            log.warning(
                "refused requests naming %d different hosts or origins; further ones are refused "
                "without a log line",
                _WARNED_NAMES,
            )
            return
        self._warned.add(name)
        if value is None or len(name) > _LONGEST or name == "null" or not _is_name(name):
            log.warning(
                "refused a request with %s %r (%d); logged once", header, _shown(header, value), status
            )
            return
        allow = f"serve --allow-host {name}, or StreamableHTTP(allowed_hosts=[...])"
        if header == "Host":
            log.warning(
                "refused a request for Host %r (%d): not an allowed host name (DNS-rebinding "
                "protection). If clients reach this server by that name, allow it (%s); behind a "
                "proxy, pass on the Host clients used (nginx: proxy_set_header Host $http_host). "
                "Logged once per name",
                value[:200],
                status,
                allow,
            )
        else:
            log.warning(
                "refused a request from a page at Origin %r (%d): not an allowed host name "
                "(DNS-rebinding protection). If that site's pages may call this server, allow "
                "it (%s). Logged once per name",
                _shown(header, value),
                status,
                allow,
            )


def _shown(header: str, value: str | None) -> str | None:
    """A refused Host or Origin as a line names it, cut to 200 characters: an Origin (the
    client's to write, any URL when no browser wrote it) without its user name and
    password, query or fragment (``redact_urls``, before the cut)."""
    if value is None:
        return None
    return (redact_urls(value) if header == "Origin" else value)[:200]
