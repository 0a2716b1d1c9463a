"""Newline-delimited JSON framing for stdio.

Rules: each message is one line of UTF-8 JSON ended by ``\\n`` (a ``\\r`` before it is
dropped); messages never contain a raw newline. Input may arrive split anywhere. Blank
lines are skipped. A line longer than ``max_line`` is an error for that line only: the
framer discards up to the next newline and reports it with its first bytes (where
``leading_id`` finds its id, if it comes first), so one bad message cannot wedge the
stream or grow memory without bound. At the end of the input, a last line with no
newline after it is still a line (``finish``): a writer that ends without one loses
nothing, and a message cut off there is seen, and reported, as what it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import orjson

__all__ = ["LineFramer", "Oversized", "leading_id"]

#: How much of an oversized line is kept, to find its id (``leading_id``).
HEAD = 4096


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line was longer than the limit and was discarded; ``head`` is its start."""

    size: int
    head: bytes = field(default=b"", compare=False, repr=False)


_TOKEN = re.compile(
    rb'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)'
    rb"|(?P<lit>true|false|null)|(?P<punct>[{}\[\]:,]))"
)


def leading_id(head: bytes) -> str | int | None:
    """The ``id`` member of the JSON object that ``head`` begins, when ``head`` holds it
    whole (a string, or an integer followed by more): how an oversized message's answer
    can name its request. Members nested deeper are not the message's id."""
    pos, depth, key, expect_key, after_colon = 0, 0, None, False, False
    value: str | int | None = None
    found = False
    while True:
        match = _TOKEN.match(head, pos)
        if match is None or match.end() == pos:
            return None
        pos = match.end()
        kind, token = match.lastgroup, match.group(match.lastgroup or "punct")
        text = None
        if kind == "str":
            try:
                text = orjson.loads(token)
            except orjson.JSONDecodeError:
                return None
        if found:  # the id's value was followed by more: it was whole
            return value
        if depth == 0:
            if token != b"{":
                return None
            depth, expect_key = 1, True
            continue
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth == 0:
                return None
        elif depth == 1 and token == b",":
            expect_key, after_colon = True, False
        elif depth == 1 and token == b":":
            after_colon = True
        elif depth == 1 and expect_key and kind == "str":
            key, expect_key = text, False
        elif depth == 1 and after_colon and key == "id":
            if kind == "str":
                value = text
            elif kind == "num" and re.fullmatch(rb"-?\d+", token):
                value = int(token)
            else:
                return None
            found = True


class LineFramer:
    def __init__(self, max_line: int = 4 * 1024 * 1024) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._discarding = False
        self._head = b""

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        """Return the complete lines (or ``Oversized`` markers) that ``data`` finishes."""
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._append(data[start:], out)
                return out
            self._append(data[start:nl], out)
            if self._discarding:
                out.append(Oversized(self._size, self._head))
                self._discarding = False
                self._head = b""
            else:
                line = b"".join(self._parts)
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line.strip():
                    out.append(line)
            self._parts = []
            self._size = 0
            start = nl + 1

    def finish(self) -> list[bytes | Oversized]:
        """At the end of the input: the last line, if one was left without a newline."""
        return self.feed(b"\n") if self._size else []

    def _append(self, piece: bytes, out: list[bytes | Oversized]) -> None:
        if not piece:
            return
        self._size += len(piece)
        if self._discarding:
            return
        if self._size > self.max_line:
            self._discarding = True
            self._head = b"".join([*self._parts, piece[:HEAD]])[:HEAD]
            self._parts = []
            return
        self._parts.append(piece)

    @property
    def pending(self) -> int:
        """Bytes held for a line not yet ended."""
        return 0 if self._discarding else self._size
