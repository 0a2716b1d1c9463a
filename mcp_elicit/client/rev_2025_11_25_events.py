"""The event stream of a handshake-era session over HTTP (2025-11-25, 2025-06-18,
2025-03-26): the GET a server sends its own requests and notifications on, outside any
request of the client's.

Rules:

* It is opened after the handshake, and open before ``initialize`` returns, so nothing
  sent to it afterwards is lost; a server may send its requests there (some SDKs send
  every one there). A 405, or any error, just means the server has none. Over stdio
  everything arrives on stdout anyway: there is nothing to open.
* Whenever the server ends it, it is opened again from its last event id (whichever
  connection brought it) after the ``retry`` it gave; after a connection that brought
  nothing new, no sooner than a second, so a server ending it at once cannot make this
  spin. A stream without ids, or a GET refused, ends the listening; but one whose
  connection broke before its first id came (a proxy or the network cut it, as the
  priming event was on its way) is opened again, without an id, up to
  ``REOPEN_UNHEARD`` times in a row (a connection that brought a message starts the count
  again), or the session would never again hear its server's
  notices (``notifications/elicitation/complete``) nor the requests sent there.
* A 404 to a GET (this one, or one resuming a request's stream) means the session it went
  in is gone: a new session is opened (:func:`renewed`), whose ``initialize`` opens the
  event stream again.
* What arrives on it goes to the session (``on_unsolicited``), each notification inside
  its span.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Final, Protocol

from mcp_elicit.client.connection import Connection
from mcp_elicit.client.reaping import reap
from mcp_elicit.client.transport import Ended, Exchange
from mcp_elicit.log_labels import peer_text
from mcp_elicit.wire.jsonrpc import Message, Notification

__all__ = ["DEFAULT_RETRY_MS", "EventStream", "ListeningSession", "renewed"]

log = logging.getLogger("mcp_elicit.client")

#: How long to wait before a stream is opened again when the server gave no ``retry``.
DEFAULT_RETRY_MS: Final = 1000
#: How many times in a row a stream whose connection broke before it gave an id is opened again.
REOPEN_UNHEARD: Final = 3


class ListeningSession(Protocol):
    """What the event stream needs of its session: the connection, the headers a GET goes
    with, where what arrives goes, and a new session when the old one is gone."""

    @property
    def conn(self) -> Connection: ...

    @property
    def revision(self) -> str: ...

    @property
    def session_id(self) -> str | None: ...

    def headers(self, message: Mapping[str, Any]) -> dict[str, str]: ...

    async def on_unsolicited(self, message: Message) -> None: ...

    async def renew(self, expired: str) -> None: ...


class EventStream:
    """The event stream of one handshake-era session, read by a task of its own."""

    def __init__(self, session: ListeningSession) -> None:
        self.session = session
        self._listener: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Open the event stream (HTTP), and read it until the session ends; the one
        opened before (a session renewed) is reaped first."""
        conn = self.session.conn
        if not conn.transport.http:
            return
        if self._listener is not None and not self._listener.done():
            await reap(self._listener)
        stream = await conn.transport.listen(self.session.headers({}))
        if stream is None or isinstance(stream, Ended):
            log.debug("%s offers no event stream", conn.server)
            return
        self._listener = asyncio.ensure_future(self._listen_loop(stream))

    def stop(self) -> asyncio.Task[None] | None:
        """Cancel the reading task; that task, for the caller to reap (None: none ran)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
        return listener

    async def _listen_loop(self, stream: Exchange) -> None:
        """Read the event stream while the session lasts (see the module docstring)."""
        session = self.session
        last_event_id: str | None = None
        unheard = 0  # connections in a row that broke before any id came
        while True:
            try:
                ended, brought = await self._pump(stream)
            finally:
                await stream.aclose()
            if brought:
                unheard = 0  # it was heard: only breaks in a row that brought nothing count
            news = ended.last_event_id is not None and ended.last_event_id != last_event_id
            last_event_id = ended.last_event_id or last_event_id
            if last_event_id is None:
                if ended.reason is None or unheard >= REOPEN_UNHEARD:  # a server without ids
                    if ended.reason is not None:
                        log.warning(
                            "the event stream of %s: %s; not opened again, so what the server sends "
                            "outside a request will not arrive (a page's completion notice): "
                            "reconnect to hear it again",
                            session.conn.server,
                            ended.reason,
                        )
                    return
                unheard += 1
            delay = ended.retry_ms if ended.retry_ms is not None else DEFAULT_RETRY_MS
            await asyncio.sleep((delay if news else max(delay, DEFAULT_RETRY_MS)) / 1000)
            sent_with = session.headers({})
            resumed = await session.conn.transport.listen(sent_with, last_event_id)
            if isinstance(resumed, Ended) and await renewed(session, resumed, sent_with):
                return  # listening again in the new session (``initialize`` opened it)
            if resumed is None or isinstance(resumed, Ended):
                return
            stream = resumed

    async def _pump(self, stream: Exchange) -> tuple[Ended, bool]:
        """Read ``stream`` to its end; how it ended, and whether it brought any message."""
        session = self.session
        brought = False
        while True:
            item = await stream.receive()
            if isinstance(item, Ended):
                return item, brought
            brought = True
            if isinstance(item, Notification):
                with session.conn.receiving(item, session.revision, session.session_id):
                    await session.on_unsolicited(item)
            else:
                await session.on_unsolicited(item)


async def renewed(session: ListeningSession, refused: Ended, sent_with: Mapping[str, str]) -> bool:
    """Whether a GET the server refused (``refused``) met the end of the session it went
    in; if so a new session is opened, whose ``initialize`` opens the event stream again
    (and ends the task that asked, when it is the listener)."""
    expired = sent_with.get("Mcp-Session-Id")
    if refused.status != 404 or expired is None:
        return False
    try:
        await session.renew(expired)
    except Exception as exc:  # the next request tries again, and says why it cannot
        log.warning(
            "the session with %s expired, and a new one could not be opened: %s",
            session.conn.server,
            peer_text(str(exc)),  # it may be the server's words: cut, inert
        )
    return True
