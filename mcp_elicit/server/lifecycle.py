"""A ``Server``'s start and stop: what a transport awaits before it serves and once it
stops (the store checked and closed, the relay, the tasks, the ``lifespan``).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from mcp_elicit.server.lifespan import Lifespan
from mcp_elicit.stores.base import Store

if TYPE_CHECKING:
    from mcp_elicit.server.auth import TokenVerifier
    from mcp_elicit.server.relay import Relay
    from mcp_elicit.server.sessions import Sessions
    from mcp_elicit.server.subscriptions import Subscriptions
    from mcp_elicit.server.tasks import Tasks
    from mcp_elicit.server.url_mode import UrlMode

__all__ = ["Lifecycle"]


class Lifecycle:
    """How a ``Server`` starts and stops (a mixin: the server sets the attributes)."""

    url_mode: UrlMode
    tasks: Tasks
    relay: Relay
    sessions: Sessions
    subscriptions: Subscriptions
    auth: TokenVerifier | None
    _lifespan: Lifespan
    #: Starts not yet stopped: each holds the lifespan once, and only a stop matching
    #: one lets go (a second stop must not release what another holder holds).
    _starts: int

    if TYPE_CHECKING:

        def _check_state_keys(self) -> None: ...  # StateKeys's

    async def start(self) -> None:
        """What a transport awaits before it serves: checks the configured store (see
        :meth:`UrlMode.check_store`), says what seals state (reading the default store's key
        file when there is one), then enters the ``lifespan`` (unless another transport holds
        it) and hears other instances' resource updates on the store. Raises
        :class:`ConfigError` with a message to show, having undone what it did: a store or a
        key file that cannot be used fails it before the ``lifespan`` is entered, so what
        that opens (a database pool) is never opened for a server that does not start. A
        start cancelled meanwhile (a stop signal while a store or the lifespan does not
        answer) undoes it too."""
        entered = False
        try:
            await self.url_mode.check_store()
            self._check_state_keys()
            self.tasks.reopen()
            self.url_mode.warn_at_start(several_users=self.auth is not None)
            await self._lifespan.enter()
            entered = True
            if self.url_mode.shared_store is not None:
                self.relay.start(self.url_mode.shared_store)
        except BaseException:
            if entered:
                await self._lifespan.exit()
            if not self._starts:  # what the store check opened, unless a running start uses it
                await self.url_mode.close()
            raise
        self._starts += 1

    async def stop(self) -> None:
        """What a transport awaits once it stops serving: sessions and subscriptions end,
        tasks are cancelled, other instances are no longer heard, and a store the server
        opened itself (from a URL, or the default file) is closed; a store object passed as
        ``store=`` stays open, for its owner to close. Then the ``lifespan`` is exited (when
        no other transport holds it). A later :meth:`start` opens it all again."""
        try:
            self.sessions.close_all()
            self.subscriptions.close_all()
            async with contextlib.AsyncExitStack() as then:  # each runs, whatever the one before did
                then.push_async_callback(self.url_mode.close)  # the stores: closed last, always
                then.push_async_callback(self.relay.stop)
                await self.tasks.close()
        finally:
            if self._starts:  # a stop with no start of its own (twice, or a start that failed) holds nothing
                self._starts -= 1
                await self._lifespan.exit()

    def configure_url_mode(self, *, store: str | Store | None = None, public_url: str | None = None) -> None:
        """Where URL mode keeps its state and where its pages are, set before serving
        (``mcp-elicit serve --store/--public-url``); None leaves a setting as it is.

        ``store`` replaces the one given to the constructor (a URL is checked now, opened on
        first use). ``public_url`` is the base the page links start with
        (``http(s)://host[:port]``). ``ConfigError`` for a bad value, or for a store
        replaced after URL mode has started using the old one."""
        self.url_mode.configure(store=store, public_url=public_url)
