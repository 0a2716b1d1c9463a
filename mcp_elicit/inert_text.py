"""Text made inert for display: a peer's text (a name, a method, an error's message) as a
log line, a span or a message to a person repeats it, on one line that nothing acts on.

Rules:

* Each character that is not printable (``str.isprintable``: a control character, a line
  break, an escape, a bidirectional override or other format character, a lone
  surrogate, NUL) is written as ``repr`` writes it (``\\x1b``, ``\\u202e``), without
  quotes; every other character stays as it is. Text that is all printable is returned
  as is (no copy).
* A space is a space when asked (``spaces=True``): a no-break or ideographic space (any
  of Unicode's space separators, ``Zs``) is not printable to ``str.isprintable``, but a
  terminal only shows it (Japanese names hold them). Otherwise it is escaped too, as a
  trace or log line has it.
* The result is bounded by its input: at most ten characters for each one of it (the
  longest escape, ``\\U000e0001``). Cutting to a length is the caller's, before: each
  says in its own way where it cut.

A leaf: it imports nothing of the package, so every layer may use it (the telemetry
attributes and ``core`` alike, which may not import each other).
"""

from __future__ import annotations

import unicodedata

__all__ = ["inert"]


def inert(text: str, *, spaces: bool = False) -> str:
    """``text`` with each character that is not printable written as its escape (a space
    separator kept as is when ``spaces``): one inert line."""
    if text.isprintable():
        return text
    if spaces:
        return "".join(_shown_spaced(ch) for ch in text)
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _shown_spaced(ch: str) -> str:
    if ch.isprintable() or unicodedata.category(ch) == "Zs":
        return ch
    return repr(ch)[1:-1]
