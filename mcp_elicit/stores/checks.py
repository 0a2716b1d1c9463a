"""The argument rules every store enforces, in one place, before any backend sees a call.

Rules:

* A namespace is a short lowercase word: a letter, then letters, digits, ``_`` or ``-``;
  at most 32 characters (``flow``, ``vault``, ``tokens``, ``used``). It never holds
  ``:``, so the Redis key ``{prefix}:{namespace}:{key}`` is unambiguous.
* A key or a channel is 1 to 512 characters of printable ASCII (space to ``~``).
* A value or a message is ``bytes`` (not ``bytearray`` or ``str``); empty is allowed and
  reads back as ``b""``, never as None.
* A time to live is None (forever) or a finite number of seconds greater than zero; one
  past ``MAX_TTL`` (an ``int`` too large for a float, say) is taken as ``MAX_TTL``.
* A ``next`` timeout is a number of seconds; zero or less only polls, ``math.inf``
  waits for as long as it takes; NaN is refused.

A breach is a programming error: ``ValueError`` (``TypeError`` for a non-bytes value),
raised synchronously by the call, before any I/O.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "MAX_KEY_LENGTH",
    "MAX_TTL",
    "check_channel",
    "check_key",
    "check_timeout",
    "check_ttl",
    "check_value",
]

MAX_KEY_LENGTH = 512
#: The longest time to live kept as given (some 3e292 years); a longer one means the same.
MAX_TTL = 1e300
_NAMESPACE = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_PRINTABLE = re.compile(rf"[ -~]{{1,{MAX_KEY_LENGTH}}}")


def check_key(namespace: str, key: str) -> None:
    if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
        raise ValueError(
            f"store namespace {namespace!r}: expected a lowercase word "
            "(a letter, then letters, digits, '_' or '-'; at most 32 characters)"
        )
    if not isinstance(key, str) or not _PRINTABLE.fullmatch(key):
        raise ValueError(
            f"store key {_preview(key)}: expected 1 to {MAX_KEY_LENGTH} printable ASCII characters"
        )


def check_channel(channel: str) -> None:
    if not isinstance(channel, str) or not _PRINTABLE.fullmatch(channel):
        raise ValueError(
            f"store channel {_preview(channel)}: expected 1 to {MAX_KEY_LENGTH} printable ASCII characters"
        )


def check_value(value: bytes) -> None:
    if not isinstance(value, bytes):
        raise TypeError(f"store values are bytes, not {type(value).__name__}")


def check_ttl(ttl: float | None) -> float | None:
    """``ttl`` as the float seconds a backend adds to its clock, at most ``MAX_TTL``."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
        raise ValueError(f"store ttl {_preview(ttl)}: expected None or a finite number of seconds above zero")
    if isinstance(ttl, float) and not math.isfinite(ttl):
        raise ValueError(f"store ttl {ttl!r}: expected None or a finite number of seconds above zero")
    return float(min(ttl, MAX_TTL))  # an int past float's range compares exactly, never overflows


def check_timeout(timeout: float) -> float | None:
    """``timeout`` for ``asyncio.timeout``: None when infinite, at least 0 otherwise."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or math.isnan(timeout):
        raise ValueError(f"subscription timeout {timeout!r}: expected a number of seconds")
    return None if math.isinf(timeout) and timeout > 0 else max(0.0, float(timeout))


def _preview(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."
