"""Checks of a server's configured options: durations, counts, choices and addresses.

Rules: a value that is not what its option means is a ``ConfigError`` naming the option
and the value when it is configured, never a crash or a silent misbehaviour on first use
(a NaN timeout that never fires, a page size of 0 that lists nothing, ``True`` read as
1). ``bool`` is never a number here. A limit for one principal is a share of its
server-wide limit: above it is a ``ConfigError`` naming both (one principal could take
every slot); not given, it is a tenth of it (at least one). Durations are finite seconds; counts are whole
numbers; text is a string (a name or version a non-empty one); an object option has the
methods it is called by; wire integers stay within I-JSON's exact range. A loopback host is a loopback
IP address or ``localhost``; a URL is in cleartext when it is plain ``http://`` to any
other host (where pages taking secrets, or an OAuth provider, must use https).
"""

from __future__ import annotations

import ipaddress
import math
import urllib.parse
from collections.abc import Collection
from typing import Final

from mcp_elicit.errors import ConfigError

__all__ = [
    "MOST_MS",
    "cleartext",
    "expect",
    "http_meant",
    "loopback_host",
    "milliseconds",
    "one_of",
    "per_minute",
    "seconds",
    "share",
    "text",
    "whole",
]

#: The largest integer every JSON reader keeps exact (RFC 7493): the bound of wire integers.
MOST_MS = 2**53 - 1


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def seconds(option: str, value: object, *, zero: bool = False) -> float:
    """``value`` as seconds: a finite number above zero (``zero``: or zero itself)."""
    if _number(value) and (value >= 0 if zero else value > 0):  # type: ignore[operator]
        return float(value)  # type: ignore[arg-type]
    least = "0 or more" if zero else "above 0"
    raise ConfigError(f"{option} {value!r}: expected a finite number of seconds, {least}")


#: The fewest of something a minute an option takes (one in about 1,900 years): the wait
#: between two, in whole seconds, stays a number every JSON reader holds exactly.
LEAST_PER_MINUTE: Final = 1e-9
#: The most of something a minute an option takes (sixteen million a second), and the
#: most at once: a limit above holds no caller, and thirty times it (the completions'
#: budget) still steps more than the core's nanosecond of rounding, with every product a
#: finite float.
MOST_PER_MINUTE: Final = 10**9


def per_minute(option: str, value: object) -> float:
    """``value``, how many of something a minute: a finite number from ``LEAST_PER_MINUTE``
    to ``MOST_PER_MINUTE``."""
    if _number(value) and LEAST_PER_MINUTE <= value <= MOST_PER_MINUTE:  # type: ignore[operator]
        return float(value)  # type: ignore[arg-type]
    raise ConfigError(
        f"{option} {value!r}: expected None (no limit) or a finite number from "
        f"{LEAST_PER_MINUTE:g} to {MOST_PER_MINUTE:,} (a minute)"
    )


def milliseconds(option: str, value: object, *, nullable: bool = False) -> int:
    """A duration configured in seconds (``task_ttl``, ``task_poll``) as the whole
    milliseconds the wire carries; ``ConfigError`` naming ``option`` unless it is a finite
    number making 1 to ``MOST_MS`` of them (``nullable``: the message says None is valid)."""
    if _number(value):
        ms = round(value * 1000)  # type: ignore[operator]
        if 1 <= ms <= MOST_MS:
            return ms
    none = "None (kept for good) or " if nullable else ""
    raise ConfigError(
        f"{option} {value!r}: expected {none}a number of seconds from 0.001 to {MOST_MS // 1000:,}"
    )


def whole(
    option: str, value: object, *, least: int = 1, most: int | None = None, nullable: bool = False
) -> int:
    """``value``, a whole number from ``least`` (to ``most``); ``ConfigError`` naming
    ``option`` otherwise (``nullable``: the message says None is valid)."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= least
        and (most is None or value <= most)
    ):
        return value
    none = "None (kept for good) or " if nullable else ""
    if most is not None:
        bound = f"from {least:,} to {most:,}"
    else:
        bound = "above zero" if least == 1 else f"from {least:,}"
    raise ConfigError(f"{option} {value!r}: expected {none}a whole number {bound}")


def share(option: str, value: int | None, of: str, limit: int) -> int:
    """The per-principal limit ``option`` (``value``, a whole number above zero, or None)
    of the server-wide limit ``of`` (``limit``): ``value``, or a tenth of ``limit`` (at least
    one) when it is None; ``ConfigError`` naming both when ``value`` is above ``limit``."""
    if value is None:
        return max(1, limit // 10)
    if value > limit:
        raise ConfigError(
            f"{option} {value!r} is above {of} {limit!r}: one principal could hold all of them; "
            f"give {option} at most {limit!r}"
        )
    return value


def one_of(option: str, value: object, choices: Collection[str]) -> str:
    """``value``, one of ``choices``; ``ConfigError`` naming ``option`` otherwise."""
    if isinstance(value, str) and value in choices:
        return value
    raise ConfigError(f"{option} {value!r}: expected one of {', '.join(repr(c) for c in sorted(choices))}")


def text(option: str, value: object, *, nullable: bool = False) -> str | None:
    """``value``, a string (``nullable``: or None; otherwise not empty); ``ConfigError``
    naming ``option`` otherwise."""
    if (isinstance(value, str) and (value or nullable)) or (nullable and value is None):
        return value
    raise ConfigError(
        f"{option} {value!r}: expected {'None or a string' if nullable else 'a non-empty string'}"
    )


def expect(option: str, value: object, fits: bool, expected: str) -> None:
    """``ConfigError`` naming ``option``, ``value`` and what is ``expected`` unless it ``fits``."""
    if not fits:
        raise ConfigError(f"{option} {value!r}: expected {expected}")


def loopback_host(host: str | None) -> bool:
    """True for a loopback IP address (``127.0.0.1``, ``::1``...) or ``localhost``."""
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def cleartext(url: str) -> bool:
    """True for a plain ``http://`` URL whose host is not loopback."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower() == "http" and not loopback_host(parts.hostname)


def http_meant(text: str) -> str:
    """For a URL given without its scheme (``mcp.example.com/tools``): ": give https://..."
    (http:// for a loopback host), the URL it reads as; "" when it reads as no host."""
    if "://" in text:
        return ""
    host = text.split("/")[0].rsplit(":", 1)[0]
    if host in ("localhost", "127.0.0.1", "[::1]"):
        return f": give http://{text}"
    return f": give https://{text}" if "." in host else ""
