"""Streamable HTTP, 2025-11-25 sessions: request streams a client can resume.

Rules:

* A session request's response that becomes an SSE stream gives every event an id,
  ``<stream>-<n>``, unique in the session; on a 2025-11-25 session it starts with a
  priming event (an id and a ``retry`` hint, no data) so that the client can come back
  even before the first message; so does each resume, so that a client cut off again
  before the next event still knows where to come back from (the TypeScript SDK's clients
  forget it otherwise, and come back without ``Last-Event-ID``, losing the request). A
  priming event's id says where it stands, after event ``<n>``, and is unique in the
  session as the spec asks of every event id: ``<stream>-0`` for a stream's first (no
  event is numbered 0), ``<stream>-<n>.<k>`` for the ``k``-th connection after (a resume,
  a new ``GET``). A ``Last-Event-ID`` naming one resumes after event ``<n>``; one never
  sent (a ``<k>`` still to come, an ``<n>`` that connection did not stand after, a number
  with a leading zero) is as unknown as any other id. The events are kept until the
  stream is forgotten.
* When the connection drops, or the server ends it (:meth:`ResumableExchange.close_stream`), the
  request keeps running for ``resume_within`` seconds: a ``GET`` with ``Last-Event-ID``
  naming one of the stream's events gets every later event, then the rest as it comes,
  the final response last. If nobody comes back in time the request is cancelled, as a
  dropped request always is. The last 1,000 events are kept while the request runs, and
  still once it has answered while the client was away (so that the client coming back
  gets all it missed, the answer with them); the last 16 once the answer was written to
  a connection. A ``Last-Event-ID`` older than those is refused (400) rather than
  answered with a gap. A stream is written to one connection at a time: a
  resume while another connection still has it (the POST's, or an earlier resume's,
  that the client gave up on but the server did not see close) ends that one, as a
  complete response. A stream whose request the client cancelled is forgotten as it ends:
  no answer is due, and a client that resumes any stream ended without one (the
  TypeScript SDK's) would otherwise come back for ever; its resume is refused (400).
* Only the session that owns a stream can resume it, and it gets only that stream's
  events. A finished stream is forgotten ``resume_within`` seconds after its answer, or
  sooner once ``KEEP_FINISHED_STREAMS`` (100) of the session's streams finished after it
  the same way: written to their connection to the end, or (counted apart, so that a busy
  session's answered requests never push out an answer the client has yet to fetch)
  with the connection gone; what it keeps meanwhile is its last events, not its request.
* A response that stays JSON is never kept. 2026-07-28 removed resumption: its responses
  never carry ids.
* A session's standalone stream (``GET``, :class:`StandaloneStream`) is one stream written
  to one connection at a time: a new ``GET`` takes it over, and the connection it had ends
  (a complete, empty response) rather than compete for messages with the new one. Its events
  carry ids like a request stream's (with a priming event on 2025-11-25); a message taken
  for a connection that was replaced, or closed, before it was written goes to the next
  connection, and one written to a connection the client lost comes again on a ``GET``
  with the ``Last-Event-ID`` of the last one it got (the last ``KEEP_STANDALONE`` are kept,
  for the session's life).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import secrets
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from mcp_elicit.transports.http_exchange import SSE_HEADERS, Exchange, Message, Receive, Send, no_answer_start
from mcp_elicit.wire.headers import OWS
from mcp_elicit.wire.sse import KEEPALIVE, encode_event
from mcp_elicit.wire.versions import REV_2025_11_25

if TYPE_CHECKING:
    from mcp_elicit.server.sessions import Session

__all__ = ["RETRY_MS", "ResumableExchange", "StandaloneStream", "parse_event_id"]

#: How long a client should wait before reconnecting (the SSE ``retry`` field), ms.
RETRY_MS: Final = 1000
#: Events kept per stream for a resume: while the request runs (and once it answered with
#: nobody there to read it), and once its answer was written to a connection.
KEEP_EVENTS: Final = 1000
KEEP_FINISHED: Final = 16
#: Finished streams a session keeps for a resume (the most recently finished), of each
#: kind: answered on their connection, and answered with nobody there.
KEEP_FINISHED_STREAMS: Final = 100
#: Events of a session's standalone stream kept for a resume.
KEEP_STANDALONE: Final = 100
#: How many priming events' ids a stream knows (its connections': see ``_Primings``).
KEEP_PRIMINGS: Final = 100
#: Revisions with SEP-1699: priming events, and servers ending a stream to be resumed.
_POLLING: Final = frozenset({REV_2025_11_25})


async def _answered(message: Message) -> None:
    """The ``send`` of a finished stream: its POST's connection was written to the end."""


def parse_event_id(value: str) -> tuple[str, int, int] | None:
    """``<stream>-<n>`` (an event's id) or ``<stream>-<n>.<k>`` (a priming event's after
    event ``<n>``) as sent here: the stream, ``<n>`` and ``<k>`` (0 for the first form);
    None for anything else (a number with a leading zero, ``<k>`` 0: never sent)."""
    stream, sep, seq = value.strip(OWS).rpartition("-")
    seq, dot, k = seq.partition(".")
    if not sep or not stream or not _number(seq) or (dot and (not _number(k) or k == "0")):
        return None
    return stream, int(seq), int(k) if dot else 0


def _number(text: str) -> bool:
    """A number as written here: ASCII digits, at most 9, no leading zero."""
    return text.isascii() and text.isdigit() and len(text) <= 9 and (text == "0" or text[0] != "0")


class _Primings:
    """The priming events a stream sent, by connection number ``k`` (0: a request stream's
    first), each with the event it stood after: only an id sent resumes (the last
    ``KEEP_PRIMINGS`` are known)."""

    __slots__ = ("_after",)

    def __init__(self) -> None:
        self._after: dict[int, int] = {}

    def event(self, stream_id: str, after: int, k: int) -> bytes:
        """The priming event of the ``k``-th connection, standing after event ``after``."""
        self._after[k] = after
        if len(self._after) > KEEP_PRIMINGS:
            del self._after[next(iter(self._after))]
        event_id = f"{stream_id}-{after}" if k == 0 else f"{stream_id}-{after}.{k}"
        return encode_event(b"", event_id=event_id, retry=RETRY_MS)

    def sent(self, after: int, k: int) -> bool:
        """Whether ``<stream>-<after>.<k>`` (``<stream>-<after>`` for ``k`` 0) is a priming
        event sent; a message's id (``k`` 0, ``after`` from 1) the stream checks itself."""
        return self._after.get(k) == after if k or not after else True


class ResumableExchange(Exchange):
    """A session request's response whose SSE events survive a dropped connection."""

    __slots__ = (
        "_done",
        "_events",
        "_link",
        "_primings",
        "_seq",
        "_timer",
        "_waited",
        "attached",
        "cancelled",
        "finished",
        "resume_within",
        "session",
        "stream_id",
        "task",
    )

    def __init__(
        self, send: Send, sse_ok: bool, session: Session, *, resume_within: float, json_ok: bool = True
    ) -> None:
        super().__init__(send, sse_ok, json_ok)
        self.session = session
        self.resume_within = resume_within
        self.stream_id = ""  # drawn when the response becomes a stream
        self._waited = False  # given up after resume_within with no resume
        #: The task answering the request: cancelled when nobody resumes in time.
        self.task = asyncio.current_task()
        self.attached = True  # a connection is there to write to
        self.finished = False  # the final answer has been written, or kept for a resume
        self.cancelled = False  # it finished with no answer: the client cancelled it
        self._link = 0  # which connection writes go to: 0 the POST, then each resume
        self._events: deque[tuple[int, bytes]] = deque(maxlen=KEEP_EVENTS)
        self._seq = 0
        self._primings = _Primings()
        self._done = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None

    # ---- writing ---------------------------------------------------------------------

    def _keep(self, data: bytes) -> bytes:
        self._seq += 1
        chunk = encode_event(data, event_id=f"{self.stream_id}-{self._seq}")
        self._events.append((self._seq, chunk))
        return chunk

    async def _start_stream(self) -> None:
        if self.streaming:
            return
        await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        self.streaming = True
        self.stream_id = secrets.token_urlsafe(12)
        self.session.streams[self.stream_id] = self
        if self.session.version in _POLLING:
            await self.send(
                {
                    "type": "http.response.body",
                    "body": self._primings.event(self.stream_id, 0, 0),
                    "more_body": True,
                }
            )

    async def _event(self, data: bytes) -> None:
        async with self._guard():
            if not self.attached:
                self._keep(data)
                return
            await self._start_stream()
            await self.send({"type": "http.response.body", "body": self._keep(data), "more_body": True})

    async def ping(self) -> bool:
        if self.closed or not self.sse_ok:
            return False
        if not self.attached:
            return True  # nothing to keep alive until the client is back
        return await super().ping()

    async def reply(self, payload: bytes, status: int = 200) -> None:
        await self._last(payload, status)

    async def end(self) -> None:
        await self._last(None, 200)

    async def _last(self, payload: bytes | None, status: int) -> None:
        """The response's last write: the answer, or none (None: the client cancelled).
        Kept for a resume when the response is a stream; written if a connection is there."""
        if self.closed:
            return
        self.closed = True
        self.cancelled = payload is None
        written = False  # the answer went to a connection
        async with self._guard():
            try:
                if not self.streaming and not self.json_ok and payload is not None and status == 200:
                    await self._start_stream()  # the client takes SSE only
                if not self.streaming:
                    if payload is None:  # cancelled: no event, no priming, nothing to resume
                        await self.send(no_answer_start(self.sse_ok))
                        await self.send({"type": "http.response.body", "body": b""})
                    else:
                        await self._send_json(payload, status)
                    return
                chunk = b"" if payload is None else self._keep(payload)
                if self.attached:
                    self.attached = False
                    await self.send({"type": "http.response.body", "body": chunk, "more_body": False})
                    written = True
            finally:
                self._finish(written)

    def _finish(self, written: bool) -> None:
        self.finished = True
        self._done.set()
        if written:  # else the client comes back for all it missed, the answer with them
            self._trim()
        self._set_timer(self.forget if self.streaming and not self.cancelled else None)
        if self.streaming:  # kept for a resume: its events, not the request
            self.task = None
            self.send = _answered
            if self.cancelled:  # no answer to come back for: a resume is refused at once
                self.forget()
                return
            # a client that lost its connection comes back for the answer: other requests
            # answered meanwhile must not push it out
            kept = self.session.finished_streams if written else self.session.unanswered_streams
            kept.append(self.stream_id)
            while len(kept) > KEEP_FINISHED_STREAMS:
                older = self.session.streams.get(kept.popleft())
                if older is not None and older.finished:
                    older.forget()

    def _trim(self) -> None:
        """Keep the last ``KEEP_FINISHED`` events of an answer written: enough to fetch it again."""
        while len(self._events) > KEEP_FINISHED:
            self._events.popleft()

    def _set_timer(self, action: Callable[[], None] | None) -> None:
        """Run ``action`` in ``resume_within`` seconds, instead of what was due (None: nothing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if action is not None:  # in a context of its own: the request's would live as long
            self._timer = asyncio.get_running_loop().call_later(
                self.resume_within, action, context=contextvars.Context()
            )

    def forget(self) -> None:
        """Drop the stream's events: it can no longer be resumed."""
        self._set_timer(None)
        if self.session.streams.get(self.stream_id) is self:
            del self.session.streams[self.stream_id]
        self._events.clear()

    # ---- losing and regaining the connection -----------------------------------------

    def dropped(self, task: asyncio.Task[object]) -> None:
        """The POST's connection closed."""
        self._lost(0, task)

    def _lost(self, link: int, task: asyncio.Task[object] | None) -> None:
        if link != self._link or self.finished:
            return  # an older connection, or nothing left to wait for
        if not self.streaming or self.session.closed:
            # the client has no event id to come back with, or nowhere to come back to
            self.forget()
            if task is not None:
                super().dropped(task)
            return
        self.attached = False
        self._set_timer(self._nobody_came_back)

    def _nobody_came_back(self) -> None:
        self._timer = None
        if not self.attached and not self.finished:
            self.forget()
            if self.task is not None:
                self._waited = True
                super().dropped(self.task)

    def gone_reason(self) -> str:
        if self._waited:
            return f"the client closed the connection and did not resume it within {self.resume_within:g} s"
        return super().gone_reason()

    async def close_stream(self) -> bool:
        """End the response now (SEP-1699 polling): the client reconnects with
        ``Last-Event-ID`` and gets the rest. False where that is not possible: the
        client does not take SSE, the session predates 2025-11-25, or the request is
        over."""
        if self.closed or not self.sse_ok or self.session.version not in _POLLING:
            return False
        async with self._guard():
            if self.closed:
                return False
            if self.attached:
                await self._start_stream()
                self.attached = False
                await self.send({"type": "http.response.body", "body": b"", "more_body": False})
                self._set_timer(self._nobody_came_back)
        return True

    def can_resume(self, after: int, k: int = 0) -> bool:
        """Whether ``<stream>-<after>.<k>`` (see :func:`parse_event_id`) was sent and every
        event after it is still kept."""
        oldest = self._events[0][0] if self._events else self._seq + 1
        return self._primings.sent(after, k) and 0 <= after <= self._seq and after >= oldest - 1

    async def resume(self, after: int, send: Send) -> int:
        """Take over the stream for a ``GET`` with ``Last-Event-ID`` ``<stream>-<after>``
        (see :meth:`can_resume`): write the events after it, then let the request write
        the rest. Returns the link number of this connection (for :meth:`lost`)."""
        async with self._guard():
            self._set_timer(None)
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            if self.session.version in _POLLING:  # where to come back from, should this one be cut too
                priming = self._primings.event(self.stream_id, after, self._link + 1)  # this link's number
                await send({"type": "http.response.body", "body": priming, "more_body": True})
            for seq, chunk in list(self._events):
                if seq > after:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            self._link += 1
            if self.finished:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                self._trim()  # the answer was written now
                self._set_timer(self.forget)
                return self._link
            taken_over, self.send = (self.send if self.attached else None), send
            self.attached = True
            link = self._link
        if taken_over is not None:  # one connection per stream: the one it replaces ends
            # outside the lock, and briefly: a stalled connection must not hold up the stream
            with contextlib.suppress(OSError, TimeoutError):
                async with asyncio.timeout(1.0):
                    await taken_over({"type": "http.response.body", "body": b"", "more_body": False})
        return link

    async def wait_done(self) -> None:
        await self._done.wait()

    def lost(self, link: int) -> None:
        """The connection of resume ``link`` closed: wait for the client once more."""
        self._lost(link, self.task)


class StandaloneStream:
    """A session's standalone (``GET``) stream: one connection at a time, the newest."""

    __slots__ = ("_connections", "_events", "_lock", "_primings", "_seq", "_task", "_written", "stream_id")

    def __init__(self) -> None:
        self.stream_id = secrets.token_urlsafe(12)
        self._events: deque[tuple[int, bytes]] = deque(maxlen=KEEP_STANDALONE)
        self._seq = 0
        #: The last event handed to a connection; the ones after it go to the next one.
        self._written = 0
        #: The task serving the connection written to now.
        self._task: asyncio.Task[object] | None = None
        self._lock = asyncio.Lock()  # one write at a time
        self._connections = 0  # how many there were: numbers each one's priming event
        self._primings = _Primings()

    @classmethod
    def of(cls, session: Session) -> StandaloneStream:
        """``session``'s standalone stream (made on its first ``GET``)."""
        for stream in session.streams.values():
            if isinstance(stream, cls):
                return stream
        stream = cls()
        session.streams[stream.stream_id] = stream
        return stream

    def can_resume(self, after: int, k: int = 0) -> bool:
        """Whether ``<stream>-<after>.<k>`` (see :func:`parse_event_id`) was sent and every
        event after it is still kept."""
        oldest = self._events[0][0] if self._events else self._seq + 1
        return self._primings.sent(after, k) and 0 <= after <= self._seq and after >= oldest - 1

    async def serve(
        self, session: Session, receive: Receive, send: Send, *, after: int | None, keepalive: float | None
    ) -> None:
        """Write the stream to this ``GET``'s connection (``after``: from its ``Last-Event-ID``)
        until the session ends, the client goes away or another ``GET`` takes over."""
        task = asyncio.current_task()
        assert task is not None
        previous, self._task = self._task, task
        if previous is not None:
            # it waits for a message (and then has taken none) or writes one (kept already)
            previous.cancel()

        async def watch() -> None:
            await disconnected(receive)
            task.cancel()

        watcher = asyncio.ensure_future(watch())
        started = False
        try:
            async with self._lock:
                start = self._written if after is None else after
                await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                started = True
                if session.version in _POLLING:
                    self._connections += 1
                    priming = self._primings.event(self.stream_id, start, self._connections)
                    await send({"type": "http.response.body", "body": priming, "more_body": True})
                for seq, chunk in list(self._events):
                    if seq > start:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._written = self._seq
            while not session.closed and self._task is task:
                try:
                    # not next_pushed(keepalive): Python 3.11's wait_for can take a message
                    # and drop the cancellation that was to stop this connection's writing
                    async with asyncio.timeout(keepalive):
                        data = await session.next_pushed(None)
                except TimeoutError:
                    data = None
                if session.closed:
                    break
                if data is None:
                    async with self._lock:
                        await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
                    continue
                seq, chunk = self._keep(data)  # at once: a connection replaced from here loses nothing
                async with self._lock:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    self._written = seq  # a write cut short is not counted: the next one has it
        except asyncio.CancelledError:
            if self._task is task and not watcher.done():
                raise  # neither replaced nor gone: the server is stopping
            while task.cancelling():
                task.uncancel()
        finally:
            watcher.cancel()
            if self._task is task:
                self._task = None
        if watcher.done() and not watcher.cancelled():
            return  # the client went away: nobody to end the response for
        # the session ended, or another connection took over: this response ends
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(1.0):
                if not started:
                    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _keep(self, data: bytes) -> tuple[int, bytes]:
        self._seq += 1
        chunk = encode_event(data, event_id=f"{self.stream_id}-{self._seq}")
        self._events.append((self._seq, chunk))
        return self._seq, chunk


async def disconnected(receive: Receive) -> None:
    """Return once the client has closed the connection (its request body read and ignored)."""
    while (await receive())["type"] != "http.disconnect":
        pass
