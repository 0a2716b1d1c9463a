"""How a message to a person quotes what a peer sent: a value as its short ``repr``, a
name or URI cut short, a text made inert. No I/O.

Rules:

* A value (``quoted``) is its ``repr``, at most three levels deep and 80 characters a
  string or other value: a peer's JSON can nest a thousand deep or weigh a megabyte, and
  the message quoting it must stay one line a person reads.
* A name or URI a request gave (``shown_name``) is cut at ``QUOTED`` characters, its
  length said, then made inert.
* A text (``shown_text``) is kept as it is but for each character a terminal could act
  on, written as ``repr`` writes it: the package's one rule for inert text
  (``inert_text.inert``), with its spaces kept.
"""

from __future__ import annotations

import reprlib
from typing import Final

from mcp_elicit.inert_text import inert

__all__ = ["QUOTED", "quoted", "shown_name", "shown_text"]

_QUOTE: Final = reprlib.Repr()
_QUOTE.maxlevel, _QUOTE.maxstring, _QUOTE.maxother = 3, 80, 80


def quoted(value: object) -> str:
    """A server's value as an error message quotes it: its repr, at most three levels deep
    and cut short (``repr`` itself recurses, past Python's limit for JSON nested about a
    thousand deep, which a JSON reader takes, and quotes a megabyte whole)."""
    return _QUOTE.repr(value)


#: How much of a name or URI a request gave an error message repeats.
QUOTED: Final = 200


def shown_name(name: str) -> str:
    """A name (a tool's, a prompt's) or URI a request gave, as an error message repeats it:
    cut at ``QUOTED`` characters (its length said), then inert (``shown_text``)."""
    return shown_text(name if len(name) <= QUOTED else f"{name[:QUOTED]}… ({len(name)} characters)")


def shown_text(text: str) -> str:
    """A server's text (its name, a command, a method) as a message says it: as it is, but
    each character a terminal could act on (a control character, an escape, a line or
    direction mark: not printable) written as ``repr`` writes it (``\\x1b``), without
    quotes. A space is a space (a no-break or ideographic one is not printable to
    ``str.isprintable``, but a terminal only shows it: Japanese names hold them): the
    package's one rule for inert text, ``inert_text.inert``, with its spaces kept."""
    return inert(text, spaces=True)
