"""An IPv4 address in every form a browser reads one (the WHATWG URL IPv4 parser; the C
library's ``inet_aton``, behind the system's resolver, reads the same numbers): one to
four parts, each decimal, ``0x`` hex or ``0``-prefixed octal, the last filling the bytes
the others leave (``127.1``, ``2130706433``, ``0x7f.0.0.1``, ``0177.0.0.1``), and a
trailing dot. Pure.

Rules: a host whose last label is not a number is a name (``None``); one whose last label
is a number but which is no valid address is :class:`NotIPv4` (a browser refuses it).
Both the URL consent's host reading and the authorization flow's address checks read
hosts here, so a form one of them knows the other cannot miss.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Final

__all__ = ["IDN_DOTS", "NotIPv4", "read_ipv4"]

#: What a browser takes for the dot between two labels (IDNA: the ideographic, full-width
#: and half-width full stops too).
IDN_DOTS: Final = re.compile("[.\u3002\uff0e\uff61]")
_DIGITS: Final = "0123456789abcdef"


class NotIPv4(ValueError):
    """A host that ends in a number but is no IPv4 address; ``out_of_range`` when its
    parts are numbers, too large for their place."""

    def __init__(self, out_of_range: bool) -> None:
        super().__init__("an IP address out of range" if out_of_range else "not an IP address")
        self.out_of_range = out_of_range


def read_ipv4(labels: Sequence[str]) -> ipaddress.IPv4Address | None:
    """The address of a host split at its dots (lower case, ASCII), or None for a name."""
    parts = list(labels[:-1] if len(labels) > 1 and labels[-1] == "" else labels)
    last = parts[-1] if parts else ""
    if not (last.isascii() and last.isdigit()) and _number(last) is None:  # "08" ends in a number
        return None
    numbers = [_number(p) for p in parts]
    if len(numbers) > 4 or any(n is None for n in numbers):
        raise NotIPv4(out_of_range=False)
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise NotIPv4(out_of_range=True)
    address = values[-1]
    for i, n in enumerate(values[:-1]):
        address += n * 256 ** (3 - i)
    return ipaddress.IPv4Address(address)


def _number(text: str) -> int | None:
    """An IPv4 part as a browser reads it, or None: only the base's ASCII digits count
    (``int`` also takes a sign, underscores, and other scripts' digits)."""
    if text[:2] in ("0x", "0X"):
        digits, base = text[2:], 16
        if not digits:
            return 0
    elif len(text) > 1 and text[0] == "0":
        digits, base = text[1:], 8
    else:
        digits, base = text, 10
    if not digits or any(ch not in _DIGITS[:base] for ch in digits.lower()):
        return None
    digits = digits.lstrip("0") or "0"  # a browser reads any number of leading zeros
    if len(digits) > 12:  # over 2**32 in any base: too large for any place (int() refuses 4,301)
        return 2**32
    return int(digits, base)
