"""``serve --http HOST:PORT``: reading the address, the public URL it gives the page links,
and, when serving could not start, whether another program holds the address.

Rules: PORT is 1-65535 (0 would bind some free port that neither we nor the page links
know); a wildcard host reads as 127.0.0.1 in a URL. An address found taken after the
server failed to start is said as such, with what to do (another port); the check binds
as the server does (``SO_REUSEADDR``, every address the host resolves to) and closes at once.
"""

from __future__ import annotations

import contextlib
import errno
import socket

from mcp_elicit.errors import CliError

__all__ = ["default_public_url", "split_address", "taken"]


def split_address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()):
        raise CliError(f"--http needs HOST:PORT, not {value!r}", exit_code=2)
    number = int(port) if len(port) <= 12 else 0  # int() refuses thousands of digits
    if not 0 < number <= 65535:  # 0 would bind some free port that neither we nor the page links know
        shown = port if len(port) <= 12 else f"{port[:12]}..."
        raise CliError(f"--http: port {shown} is not in 1-65535", exit_code=2)
    return host.strip("[]") or "127.0.0.1", number


def default_public_url(host: str, port: int) -> str:
    """``http://HOST:PORT`` of a bound address; a wildcard address reads as 127.0.0.1."""
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def taken(host: str, port: int) -> str:
    """What to say when another program holds ``host:port``, or "" (free, or unknown)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return ""
    for family, kind, proto, _, where in found:
        with contextlib.closing(socket.socket(family, kind, proto)) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as uvicorn binds it: [::] alone, not 0.0.0.0 too
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(where)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    shown = f"[{host}]" if ":" in host else host
                    return (
                        f"{shown}:{port} is in use by another program: give another port "
                        f"(--http {shown}:PORT), or stop what listens there"
                    )
    return ""
