"""A ``Server``'s start and stop, when one or several transports serve it at once (stdio and
Streamable HTTP, two HTTP apps): each is a user of the server of its own, and one
stopping leaves the others serving (``docs/design/several-transports.md``).

Rules:

* A transport awaits ``start(transport=itself)`` before it serves and ``stop(transport=
  itself)`` once it stops; each start not yet stopped is held by the transport named
  (None: a caller that names none, counted as one more user).
* What belongs to one transport ends with that transport's stop: the 2025-11-25 sessions
  it opened (``Server.open_session(..., transport=)``: each ``Session`` carries the
  transport that opened it) and the ``subscriptions/listen`` requests it carries (the
  request's channel names its transport). What the transports share (the tasks, the
  relay to other instances, the URL-mode stores, the ``lifespan``) is released by the
  last stop only: the one after which no start is held, when every session and
  subscription left ends too. A 2026-07-28 request needs no session, so none is ended
  for it; what a client of the stopping transport began (a task, a URL step) goes on.
* A stop with no start of its own (a second stop, or one after a start that failed)
  lets go of nothing another transport holds: it ends its own sessions and subscriptions,
  and releases the shared parts only when no start is held at all (a server never
  started whose store a request opened).
* ``begin_stop`` is the part of a stop a transport does as soon as it is told to stop
  (``StreamableHTTP.begin_shutdown``), before its connections close: its own sessions and
  subscriptions end, and, when no other transport holds a start, the tasks are cancelled
  and the 2026-07-28 retries waiting for a page end their round. A transport whose
  ``begin_stop`` came is stopping: once every one holding a start is (two apps told to
  stop together; one begun, the other stopped), that is done then too.
* While a start is held, the URL-mode store cannot be replaced (``configure_url_mode``:
  the relay and the running requests use the one that was checked at the start).
* A start and the release of the shared parts by the last stop run one at a time: a
  start during that release waits for it, then opens them again (the relay included); a
  stop finding a start under way waits for it, then releases nothing if it succeeded.
* A stop's release (the shared parts, its share of the ``lifespan``) runs in a task of
  its own, which the stop awaits: a stop cancelled part way raises at once and the
  release goes on to its end, in order (the tasks waited for, then the relay, the stores,
  the ``lifespan``), a start coming meanwhile waiting for it as above. Nothing is left
  for a later stop to find, and nothing leaks when none comes.
* A transport still holding a start (the same object started twice) keeps its sessions.
* A subclass overriding ``start``/``stop`` without the ``transport`` keyword (written
  before it existed) keeps working: the transports call it through :func:`start_for` and
  :func:`stop_for`, which name the transport to ``Lifecycle.start``/``stop`` another way.
  One overriding ``open_session`` so keeps working too: the transports call it through
  :func:`open_session_for`, which tags the session it returns with the transport.
* A server's starts belong to the event loop they were made on. One whose loop ended
  with starts held (a test that failed part way, an ``asyncio.run`` that ended without
  the stop) lets go of what that loop held at its next start, stop or ``begin_stop`` on
  another loop, and starts there as the first time; one whose loop still runs, on
  another thread, refuses them with a ``RuntimeError`` (``server/left_loops.py``).
* Nothing here runs per request: a transport is named once per session, per
  subscription, per start and per stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from mcp_elicit.server.left_loops import drop, ended, let_go_of_package
from mcp_elicit.server.lifespan import Lifespan
from mcp_elicit.stores.base import Store

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.auth import Principal, TokenVerifier
    from mcp_elicit.server.relay import Relay
    from mcp_elicit.server.sessions import Session, Sessions
    from mcp_elicit.server.subscriptions import Subscriptions
    from mcp_elicit.server.tasks import Tasks
    from mcp_elicit.server.url_mode import UrlMode
    from mcp_elicit.wire import jsonrpc

__all__ = ["Lifecycle", "open_session_for", "start_for", "stop_for"]

log = logging.getLogger("mcp_elicit.server")

#: The transport an override of ``start``/``stop`` without the keyword is called for.
_CALLING: ContextVar[object] = ContextVar("mcp_elicit_transport", default=None)


class Lifecycle:
    """How a ``Server`` starts and stops for each transport serving it (a mixin: the
    server sets the attributes)."""

    name: str
    url_mode: UrlMode
    tasks: Tasks
    relay: Relay
    sessions: Sessions
    subscriptions: Subscriptions
    auth: TokenVerifier | None
    _lifespan: Lifespan
    #: Starts not yet stopped, by the transport that holds them: each holds the lifespan
    #: once, and only a stop of the same transport lets go of one.
    _starts: Counter[object]
    #: The lock a start and a last stop's release take (per event loop: none is bound early).
    _order: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
    #: The transports holding a start whose ``begin_stop`` came (their stop has not yet).
    _begun: set[object]
    #: The stops' releases under way (each in a task of its own, which a cancelled stop
    #: leaves running).
    _releases: set[asyncio.Task[None]]
    #: The event loop the starts are held on (the last start's).
    _loop: asyncio.AbstractEventLoop | None = None

    if TYPE_CHECKING:

        def _check_state_keys(self) -> None: ...  # StateKeys's

    async def start(self, *, transport: object = None) -> None:
        """What a transport awaits before it serves (``transport``: the transport, which
        names the sessions it opens too; see the module's rules): checks the configured
        store (see :meth:`UrlMode.check_store`), says what seals state (reading the default
        store's key file when there is one) and warns of what exposes the URL-mode pages
        (these two only when no other start is held: the server already serves, and
        neither can have changed), then enters the ``lifespan`` (unless another transport
        holds it) and hears other instances' resource updates on the store.
        Raises :class:`ConfigError` with a message to show, having undone what it did: a
        store or a key file that cannot be used fails it before the ``lifespan`` is
        entered, so what that opens (a database pool) is never opened for a server that
        does not start. A start cancelled meanwhile (a stop signal while a store or the
        lifespan does not answer) undoes it too, to its end (in a task of its own, waited
        for however often it is cancelled: a host's anyio cancel scope cancels every await).
        On another event loop than the one holding its starts, see ``server/left_loops.py``."""
        if transport is None:
            transport = _CALLING.get()
        if self._left_behind():  # what the stores held there is closed here, before the check
            try:
                await self.url_mode.close()
            except Exception as exc:  # what a loop that ended held: dropped
                log.debug("a store its ended event loop held could not be closed: %r", exc)
        async with self._one_at_a_time():
            await self._start(transport)
        self._begun.discard(transport)  # it serves again

    async def _start(self, transport: object) -> None:
        entered = False
        try:
            await self.url_mode.check_store()
            if not self._starts:  # else the server serves: what seals and what is exposed was said
                self._check_state_keys()
                self.url_mode.warn_at_start(several_users=self.auth is not None)
            self.tasks.reopen()
            self.url_mode.stop_waiting(False)  # a begin_stop before: retries wait again
            await self._lifespan.enter()
            entered = True
            if self.url_mode.shared_store is not None:
                self.relay.start(self.url_mode.shared_store)
        except BaseException:
            # to its end, even where every await is cancelled (a host's anyio cancel scope)
            await _to_its_end(self._undo_start(entered=entered))
            raise
        self._starts[transport] += 1
        self._loop = asyncio.get_running_loop()
        self.url_mode.serving = True

    async def _undo_start(self, *, entered: bool) -> None:
        """What a start that failed or was cancelled undoes: its share of the ``lifespan``,
        then what the store check opened, unless a running start uses it."""
        try:
            if entered:
                await self._lifespan.exit()
        finally:
            if not self._starts:
                await self.url_mode.close()

    async def stop(self, *, transport: object = None) -> None:
        """What a transport awaits once it stops serving: the sessions it opened and the
        subscriptions it carries end. When it was the last start held, every other
        session and subscription ends too, tasks are cancelled, other instances are no
        longer heard, and a store the server opened itself (from a URL, or the default
        file) is closed; a store object passed as ``store=`` stays open, for its owner to
        close. Then the ``lifespan`` is exited (when no other transport holds it). A later
        :meth:`start` opens it all again.

        The release runs in a task of its own: a stop cancelled part way (a second
        Ctrl-C, a host's cancel scope, a timeout around it) raises at once, and what it had
        to release is released all the same (the tasks waited for, then the relay, the
        stores, the ``lifespan``); a start coming meanwhile waits for it."""
        if transport is None:
            transport = _CALLING.get()
        self._left_behind()  # then nothing is held: the release closes the stores
        held = self._starts[transport] > 0
        if held:  # a stop with no start of its own (twice, or a start that failed) holds nothing
            self._starts[transport] -= 1
        self._starts = +self._starts  # no transport left at zero: empty once the last stop came
        if not self._starts[transport]:  # still holding a start (started twice): its own go on
            self._begun.discard(transport)
            self._end_own(transport, last=False)
            if self._starts and self._begun.issuperset(self._starts):  # the rest are stopping
                self._stop_serving(transport)
        release = asyncio.ensure_future(self._release(transport, held=held))
        self._releases.add(release)  # held here until it ends: nobody may await it
        release.add_done_callback(self._releases.discard)
        try:
            await asyncio.shield(release)
        except asyncio.CancelledError:
            if not release.done():  # the stop was cancelled, not its release: that goes on
                release.add_done_callback(_log_failure)
            raise

    async def _release(self, transport: object, *, held: bool) -> None:
        """What :meth:`stop` releases: the shared parts, when no start is held (checked
        again once a start under way has ended), then its share of the ``lifespan``."""
        try:
            if not self._starts:
                async with self._one_at_a_time():  # after a start under way: it may hold one now
                    last = not self._starts
                    self.url_mode.serving = not last
                    if last:
                        self._end_own(transport, last=True)
                        # each runs, whatever the one before did
                        async with contextlib.AsyncExitStack() as then:
                            then.push_async_callback(self.url_mode.close)  # the stores: closed last, always
                            then.push_async_callback(self.relay.stop)
                            await self.tasks.close()
        finally:
            if held:
                await self._lifespan.exit()

    def begin_stop(self, *, transport: object = None) -> None:
        """The part of :meth:`stop` a transport does as soon as it is told to stop, before
        its connections close: the sessions it opened and its subscriptions end (answered);
        when no other transport holds a start, every session and subscription, the tasks
        still running are cancelled and the 2026-07-28 retries waiting for a page end their
        round (state only: the client retries elsewhere). A transport whose begin_stop came
        counts as stopping already: when the last of those holding a start begins to stop,
        or the last not stopping stops, what is done here when alone is done then."""
        self._left_behind()
        if self._starts[transport]:
            self._begun.add(transport)
        if all(holder is transport or holder in self._begun for holder in self._starts):
            self._stop_serving(transport)
        else:
            self._end_own(transport, last=False)

    def _stop_serving(self, transport: object) -> None:
        """No transport will serve any more (each holding a start has begun to stop): every
        session and subscription ends, the 2026-07-28 retries waiting for a page end their
        round, the tasks still running are cancelled (a start after opens them again)."""
        self._end_own(transport, last=True)
        self.url_mode.stop_waiting()
        self.tasks.stop()

    def _left_behind(self) -> bool:
        """Whether the starts held (or a stop's release under way) belong to an event loop
        that ended: then what it held is let go of, as a stop would have, but for the
        stores, closed after (``server/left_loops.py``). ``RuntimeError`` when that loop
        still runs."""
        if not (self._starts or self._releases) or not ended(self._loop, self.name):
            return False
        loop, self._loop, self._order = self._loop, None, None
        for release in self._releases:
            drop(release)
        self._releases.clear()
        self._starts.clear()
        self._begun.clear()
        self.url_mode.serving = False
        self.relay.abandon()
        self.subscriptions.forget_all()
        for session in self.sessions.live():
            with contextlib.suppress(RuntimeError):  # a future of the closed loop: dropped
                self.sessions.close(session.id)
        self.tasks.abandon()
        self._lifespan.abandon(loop)
        if loop is not None:
            let_go_of_package(loop)  # the requests it was serving too, once it is closed
        return True

    def _serving_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the server serves on: a start is held there (or a stop's release
        is under way) and it runs; None when the server is not started anywhere. Read from
        any thread (``complete_elicitation`` hands its work to that loop)."""
        loop = self._loop
        if loop is None or not (self._starts or self._releases) or not loop.is_running():
            return None
        return loop

    def _one_at_a_time(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._order is None or self._order[0] is not loop:
            self._order = (loop, asyncio.Lock())
        return self._order[1]

    def _end_own(self, transport: object, *, last: bool) -> None:
        """End the sessions ``transport`` opened and its subscriptions (all of them when
        ``last``)."""
        if last:
            self.sessions.close_all()
            self.subscriptions.close_all()
            return
        for session in self.sessions.live():
            if session.transport is transport:
                self.sessions.close(session.id)
        self.subscriptions.close_from(transport)

    def configure_url_mode(self, *, store: str | Store | None = None, public_url: str | None = None) -> None:
        """Where URL mode keeps its state and where its pages are, set before serving
        (``mcp-elicit serve --store/--public-url``); None leaves a setting as it is.

        ``store`` replaces the one given to the constructor (a URL is checked now, opened on
        first use). ``public_url`` is the base the page links start with
        (``http(s)://host[:port]``). ``ConfigError`` for a bad value, or for a store
        replaced once the server started (a transport serves it) or URL mode has started
        using the old one."""
        self.url_mode.configure(store=store, public_url=public_url)


async def start_for(server: Lifecycle, transport: object) -> None:
    """``server.start(transport=transport)``, as a transport calls it; an override of
    ``start`` in a subclass written before the keyword existed is called without it, and
    ``Lifecycle.start`` still learns the transport."""
    await _call_for(server.start, transport)


async def stop_for(server: Lifecycle, transport: object) -> None:
    """``server.stop(transport=transport)``, as :func:`start_for`."""
    await _call_for(server.stop, transport)


def open_session_for(
    server: Server, message: jsonrpc.Request, principal: Principal | None, transport: object
) -> tuple[bytes, Session | None, int]:
    """``server.open_session(message, principal, transport=transport)``, as a transport
    calls it at ``initialize``; an override of ``open_session`` written before the keyword
    existed is called without it, and the session it returns is tagged with ``transport``
    here (unless it names one), so that it still ends with that transport's stop. No await
    comes between its opening and its tagging: no stop can come between them."""
    open_session = server.open_session
    if _takes_transport(open_session):
        return open_session(message, principal, transport=transport)
    payload, session, status = open_session(message, principal)
    if session is not None and session.transport is None:
        session.transport = transport
    return payload, session, status


async def _call_for(method: Callable[..., Awaitable[None]], transport: object) -> None:
    if _takes_transport(method):
        await method(transport=transport)
        return
    named = _CALLING.set(transport)  # read by Lifecycle's, which the override calls
    try:
        await method()
    finally:
        _CALLING.reset(named)


async def _to_its_end(work: Awaitable[None]) -> None:
    """Run ``work`` in a task of its own and wait for its end, however often the caller is
    cancelled meanwhile (an anyio cancel scope cancels every await, not only the first);
    then the caller's cancellation is raised, if it came (what ``work`` raised is dropped:
    the caller is told it was cancelled, as asked, not of a start that failed), else what
    ``work`` raised."""
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            if not task.done():  # the caller's, not the work's own
                cancelled = exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: never reported as lost
        raise cancelled
    task.result()


def _log_failure(release: asyncio.Task[None]) -> None:
    """A release a cancelled stop left running has ended: its failure, which nobody awaits."""
    if not release.cancelled() and (exc := release.exception()) is not None:
        log.error("the server's stop, cancelled, failed to release what it held", exc_info=exc)


def _takes_transport(method: Callable[..., object]) -> bool:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # no signature to read: call it as Lifecycle's
        return True
    return any(
        p.kind is p.VAR_KEYWORD or (p.name == "transport" and p.kind is not p.POSITIONAL_ONLY)
        for p in parameters
    )
