"""Newline-delimited JSON framing for stdio.

Rules: each message is one line of UTF-8 JSON ended by ``\\n`` (a ``\\r`` before it is
dropped); messages never contain a raw newline. Input may arrive split anywhere. Blank
lines are skipped. A line longer than ``max_line`` is an error for that line only: the
framer discards up to the next newline and reports it, so one bad message cannot wedge
the stream or grow memory without bound. At the end of the input, a last line with no
newline after it is still a line (``finish``): a writer that ends without one loses
nothing, and a message cut off there is seen, and reported, as what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LineFramer", "Oversized"]


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line was longer than the limit and was discarded."""

    size: int


class LineFramer:
    def __init__(self, max_line: int = 4 * 1024 * 1024) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._discarding = False

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
                out.append(Oversized(self._size))
                self._discarding = False
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
            self._parts = []
            return
        self._parts.append(piece)

    @property
    def pending(self) -> int:
        """Bytes held for a line not yet ended."""
        return 0 if self._discarding else self._size
