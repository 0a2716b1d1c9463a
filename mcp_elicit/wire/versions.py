"""The registry of protocol revisions.

Rules: revisions are an enumerated set, never compared as date strings. A revision is
either *modern* (per-request ``_meta``, stateless: 2026-07-28) or *handshake*
(``initialize`` and sessions: 2025-11-25 and earlier). Code specific to one revision lives
in a module named after it; this module only says which revisions exist and which we speak.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mcp_elicit.errors import UnsupportedProtocolVersion

# The revisions of mcp_types.version, spelled out (importing mcp_types builds every wire
# model); tests/wire/test_versions.py checks they agree.
HANDSHAKE_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)

__all__ = [
    "HANDSHAKE",
    "LATEST_HANDSHAKE",
    "LATEST_MODERN",
    "MODERN",
    "REV_2025_06_18",
    "REV_2025_11_25",
    "REV_2026_07_28",
    "SUPPORTED",
    "is_handshake",
    "is_modern",
    "latest",
    "negotiate_handshake",
    "unsupported",
]

REV_2025_06_18: Final = "2025-06-18"
REV_2025_11_25: Final = "2025-11-25"
REV_2026_07_28: Final = "2026-07-28"

#: Modern revisions we serve, newest first.
MODERN: Final[tuple[str, ...]] = tuple(v for v in reversed(MODERN_PROTOCOL_VERSIONS) if v == REV_2026_07_28)
#: Handshake revisions we negotiate in ``initialize``, newest first.
HANDSHAKE: Final[tuple[str, ...]] = tuple(
    v for v in reversed(HANDSHAKE_PROTOCOL_VERSIONS) if v in ("2025-11-25", "2025-06-18", "2025-03-26")
)
#: Every revision we speak, newest first: what ``supportedVersions`` lists.
SUPPORTED: Final[tuple[str, ...]] = MODERN + HANDSHAKE
LATEST_MODERN: Final = MODERN[0]
LATEST_HANDSHAKE: Final = HANDSHAKE[0]
#: Every revision of the registry, oldest first: the order ``latest`` reads.
_ORDER: Final[tuple[str, ...]] = HANDSHAKE_PROTOCOL_VERSIONS + MODERN_PROTOCOL_VERSIONS


def is_modern(version: object) -> bool:
    """True for a modern revision we speak."""
    return version in MODERN


def is_handshake(version: object) -> bool:
    """True for a handshake revision we speak."""
    return version in HANDSHAKE


def negotiate_handshake(requested: object) -> str:
    """The revision to answer an ``initialize`` with: the client's if we speak it, else our latest."""
    return requested if isinstance(requested, str) and requested in HANDSHAKE else LATEST_HANDSHAKE


def unsupported(requested: str) -> UnsupportedProtocolVersion:
    """-32022 for a ``requested`` revision we do not speak, naming those we do (``data.supported``)
    and the one asked, quoted cut short (a header can be tens of KB), not echoed whole."""
    if len(requested) > 60:
        requested = requested[:60] + "..."
    return UnsupportedProtocolVersion(
        f"Unsupported protocol version {requested!r}; supported: {', '.join(SUPPORTED)}",
        {"supported": list(SUPPORTED), "requested": requested},
    )


def latest(revisions: Iterable[str]) -> str:
    """The newest of ``revisions``, by the registry's order, not by comparing the strings
    (a revision need not be named by its date); one the registry lacks is a ``ValueError``."""
    named = list(revisions)
    for revision in named:
        if revision not in _ORDER:
            raise ValueError(f"{revision!r} is not a revision of the registry ({', '.join(_ORDER)})")
    return max(named, key=_ORDER.index)
