"""``serve --http HOST:PORT``: reading the address, the public URL it gives the page links,
and binding it.

Rules: PORT is 1-65535 (0 would bind some free port that neither we nor the page links
know); a wildcard host reads as its family's loopback address in a URL (127.0.0.1,
``[::1]``). The address is bound before the server starts (``listen_on``), as uvicorn
would bind it through asyncio (``SO_REUSEADDR`` on POSIX only, every address the host
resolves to, an IPv6 one for IPv6 alone, and, as from Python 3.12, an address this machine
does not have skipped when another is bound: ``localhost``'s ``::1`` in a container
without IPv6), so that an address that cannot be bound stops ``serve`` before anything of
the server's runs (its lifespan: a database pool opened for a server that will not
serve), with one line saying why and what to do: another program holds it (give another
port), the host is not one of this machine's, its name does not resolve.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import re
import socket
import sys
from urllib.parse import urlsplit

from mcp_elicit.errors import CliError

__all__ = ["default_public_url", "listen_on", "split_address"]


def split_address(value: str) -> tuple[str, int]:
    """``(host, port)`` of ``--http HOST:PORT``; ``CliError`` (exit 2) saying what to give
    instead for anything else: a URL or a path (the address it names, when it names one), a
    port alone or a host alone (the address with the other filled in), a host that is
    neither a name nor an address (``a:b``, which no URL could write)."""
    if "/" in value:  # a URL, or HOST:PORT/PATH: the path is --path's, the scheme is http
        raise CliError(f"--http takes HOST:PORT, not a URL or a path: {_meant(value)}", exit_code=2)
    host, sep, port = value.rpartition(":")
    if not sep and value.isascii() and value.isdigit():  # a port alone
        _port(value)  # 0 or 70000 alone is refused as such, not offered back as 127.0.0.1:0
        raise CliError(
            f"--http needs HOST:PORT, not {value!r}: give 127.0.0.1:{value} (this machine only) "
            f"or 0.0.0.0:{value} (every interface)",
            exit_code=2,
        )
    alone = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    if _ipv6(alone) and not (sep and _ipv6(host.strip("[]")) and port.isascii() and port.isdigit()):
        # ::1, [::1] or fe80::1 alone: its last group is no port (::1:8000 reads as ::1 port 8000)
        raise CliError(
            f"--http needs HOST:PORT, not {value!r}, an IPv6 address alone: give [{alone}]:8000, say",
            exit_code=2,
        )
    if not sep or not (port.isascii() and port.isdigit()):
        hint = f": give {value}:8000, say" if not sep and _HOST.fullmatch(value) else ""
        raise CliError(f"--http needs HOST:PORT, not {value!r}{hint}", exit_code=2)
    number = _port(port)
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in host and not _ipv6(host):  # the public URL would put it in brackets, unreadable
        raise CliError(
            f"--http: {host!r} is neither a host name nor an address; give HOST:PORT "
            "(an IPv6 address in brackets: [::1]:8000)",
            exit_code=2,
        )
    return host or "127.0.0.1", number


def _port(text: str) -> int:
    """``text``, ASCII digits, as a port; ``CliError`` when it is not in 1-65535."""
    number = int(text) if len(text) <= 12 else 0  # int() refuses thousands of digits
    if not 0 < number <= 65535:  # 0 would bind some free port that neither we nor the page links know
        shown = text if len(text) <= 12 else f"{text[:12]}..."
        raise CliError(f"--http: port {shown} is not in 1-65535", exit_code=2)
    return number


#: A host name or IPv4 address alone, which a port would make an address.
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")


def _ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False


def _meant(value: str) -> str:
    """What to give for a URL or ``HOST:PORT/PATH`` given to ``--http``."""
    try:
        parts = urlsplit(value if "//" in value else f"//{value}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        return "give the address to listen on, such as 127.0.0.1:8000 (the path is --path)"
    shown = f"[{host}]" if ":" in host else host
    path = parts.path.rstrip("/")
    if path and path != "/mcp":
        return f"give {shown}:{port}, and --path {path}"
    return f"give {shown}:{port} (the server answers at http://{shown}:{port}/mcp)"


def default_public_url(host: str, port: int) -> str:
    """``http://HOST:PORT`` of a bound address; a wildcard address reads as its family's
    loopback address: 127.0.0.1 for 0.0.0.0, ``[::1]`` for ``::`` (bound for IPv6 alone, as
    uvicorn binds it, which 127.0.0.1 does not reach)."""
    try:
        wildcard = ipaddress.ip_address(host).is_unspecified
    except ValueError:  # a name
        wildcard = host == ""
    if wildcard:
        host = "::1" if ":" in host else "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def listen_on(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to ``host:port`` (not yet listening) as asyncio's ``create_server``
    binds them for uvicorn; ``CliError`` (exit 2) saying why when it cannot be done."""
    shown = f"[{host}]" if ":" in host else host
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:  # socket.gaierror: the name does not resolve
        raise CliError(
            f"cannot listen on {shown}:{port}: the host {host!r} is not found ({exc.strerror or exc}): "
            "give one of this machine's names or addresses (--http 0.0.0.0:PORT listens on all)",
            exit_code=2,
        ) from None
    bound: list[socket.socket] = []
    missing: OSError | None = None  # an address the name gave that this machine does not have
    try:
        for family, kind, proto, _, where in dict.fromkeys(found):
            try:
                sock = socket.socket(family, kind, proto)
            except OSError:  # a family this machine does not have, as asyncio skips it
                continue
            bound.append(sock)
            if _reuses_address():
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as uvicorn binds it: [::] alone, not 0.0.0.0 too
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(where)
            except OSError as exc:
                if exc.errno != errno.EADDRNOTAVAIL:
                    raise CliError(_cannot_bind(shown, port, exc), exit_code=2) from None
                bound.pop().close()  # localhost's ::1 where IPv6 is off (a container): the others serve
                missing = exc
    except BaseException:
        for sock in bound:
            sock.close()
        raise
    if missing is not None and not bound:
        raise CliError(_cannot_bind(shown, port, missing), exit_code=2)
    if not bound:
        raise CliError(f"cannot listen on {shown}:{port}: no socket could be made for it", exit_code=2)
    return bound


def _reuses_address() -> bool:
    """Whether a listening socket takes ``SO_REUSEADDR``, as asyncio decides it: on POSIX it
    lets a restarted server bind over its last run's connections (TIME_WAIT); on Windows it
    would let another program bind the same port while this one listens (and hide that it
    is in use)."""
    return os.name == "posix" and sys.platform != "cygwin"


def _cannot_bind(shown: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"{shown}:{port} is in use by another program: give another port "
            f"(--http {shown}:PORT), or stop what listens there"
        )
    why = (exc.strerror or str(exc)).lower()
    if exc.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {shown}:{port}: {why}: {shown} is not an address of this machine "
            "(give one of its own, or 0.0.0.0 to listen on all)"
        )
    if exc.errno == errno.EACCES and port < 1024:
        return (
            f"cannot listen on {shown}:{port}: {why}: ports below 1024 need privileges; give "
            "a port from 1024, with a proxy in front if clients must use this one"
        )
    return f"cannot listen on {shown}:{port}: {why}"
