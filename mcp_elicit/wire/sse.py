"""Server-Sent Events: encoding events for a response stream, decoding a stream of bytes.

Rules: an event is ``id``/``event``/``retry``/``data`` lines ended by a blank line; data
with newlines becomes several ``data:`` lines; lines starting with ``:`` are comments
(keep-alives) and carry nothing; an event whose data is empty (a priming event: an id to
resume from, a retry hint) is not handed on, though its id and retry count. The decoder
accepts CRLF, LF or CR line ends, input split anywhere (even inside a multi-byte
character), and yields only complete events. As the HTML standard asks, a byte order
mark at the start of the stream is skipped, a ``retry`` that is not all ASCII digits
is ignored, and one past ``MAX_RETRY_MS`` is read as that. An event id is any text without
NUL; a reconnect names it in ``Last-Event-ID`` as EventSource does (``last_event_id_value``).
A line, or an event's data, longer than ``max_size`` characters (16 MiB, the cap on JSON
bodies and stdio lines) raises ``ValueError`` naming the limit; buffering is linear in the
input, however it is split.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

__all__ = ["Event", "EventDecoder", "encode_event", "last_event_id_value", "KEEPALIVE", "MAX_RETRY_MS"]

KEEPALIVE = b":\n\n"
MAX_SIZE = 16 * 1024 * 1024
#: The longest ``retry`` read, in milliseconds (about 31 years): a longer one means the same.
MAX_RETRY_MS = 10**12
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Event:
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def encode_event(
    data: bytes, *, event_id: str | None = None, event: str | None = None, retry: int | None = None
) -> bytes:
    """One SSE event carrying ``data`` (UTF-8 JSON, normally on one line)."""
    head = b""
    if event_id is not None:
        head += b"id: " + event_id.encode() + b"\n"
    if event is not None:
        head += b"event: " + event.encode() + b"\n"
    if retry is not None:
        head += b"retry: " + str(retry).encode() + b"\n"
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return head + b"data: " + data + b"\n\n"


def last_event_id_value(event_id: str) -> str:
    """The ``Last-Event-ID`` value a reconnect sends after the event ``event_id``, as the
    HTML standard's EventSource sends it: the id with HTTP's white space at either end
    trimmed (a header value cannot start or end with it; an id holds no line break), to go
    as its UTF-8 bytes, whatever characters it has."""
    return event_id.strip(" \t")


class EventDecoder:
    """Feed bytes, get complete events (the SSE parsing algorithm of the HTML standard)."""

    def __init__(self, *, max_size: int = MAX_SIZE) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max_size = max_size
        self._partial: list[str] = []  # the pieces of the line not yet ended
        self._partial_size = 0
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._pending_cr = False
        self._started = False
        #: The last event id seen, for ``Last-Event-ID`` on reconnect.
        self.last_event_id: str | None = None
        #: The last ``retry`` value seen, in milliseconds.
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[Event]:
        text = self._text.decode(chunk)
        if text and not self._started:
            self._started = True
            text = text.removeprefix("\ufeff")
        if not text:
            return []
        if self._pending_cr and text.startswith("\n"):
            text = text[1:]
        self._pending_cr = text.endswith("\r")
        pieces = _LINE_END.split(text)  # only the new text is searched: linear buffering
        self._append_partial(pieces.pop(0))
        events: list[Event] = []
        for piece in pieces:
            line = "".join(self._partial)
            self._partial, self._partial_size = [], 0
            event = self._line(line)
            if event is not None:
                events.append(event)
            self._append_partial(piece)
        return events

    def _append_partial(self, piece: str) -> None:
        if not piece:
            return
        self._partial_size += len(piece)
        if self._partial_size > self._max_size:
            raise ValueError(f"an SSE line is longer than the limit of {self._max_size} characters")
        self._partial.append(piece)

    def _line(self, line: str) -> Event | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_size += len(value) + 1
            if self._data_size > self._max_size:
                raise ValueError(
                    f"an SSE event's data is longer than the limit of {self._max_size} characters"
                )
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            digits = value.lstrip("0") or "0"  # int() refuses over 4300 digits
            self._retry = min(int(digits), MAX_RETRY_MS) if len(digits) <= 13 else MAX_RETRY_MS
            self.retry = self._retry
        return None

    def _dispatch(self) -> Event | None:
        data = "\n".join(self._data)
        self._data, self._data_size = [], 0
        if not data:  # no data, or one empty line of it (a priming event): nothing to hand on
            self._event = ""
            self._retry = None
            return None
        event = Event(data, self._event or "message", self._id, self._retry)
        self._event = ""
        self._retry = None
        return event
