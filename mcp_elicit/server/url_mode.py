"""URL mode, hosted by the server: a secret typed into the server's own page, or a
third-party sign-in, asked for in one line from a handler.

Rules:

* ``await ctx.secret("openai_api_key", message=...)`` returns at once when the principal
  already stored that secret (even to a client that did not declare URL mode); otherwise
  it starts a flow and waits for its page: asking, waiting, declining, quotas and two
  requests asking at once follow the rules of ``server/url_asking.py``.
* The value never travels in an MCP message: the client only ever sees the URL.
* ``await ctx.connect("github", message=...)`` is the same for a third-party sign-in
  (``server/oauth.py``): at once when the principal holds tokens for the provider, else a
  flow of kind ``"oauth"`` whose page sends the person to the provider.
* A page the handler names itself (``ctx.require_url`` with an ``elicitation_id``) is
  waited for the same way at 2026-07-28, until ``complete_elicitation`` says it is done
  (``server/url_steps.py``; recorded in the store by ``step_completed``, through
  ``server/step_records.py``).
* ``close`` (the server stopping) closes every store URL mode opened itself (from a URL,
  or the default file), whatever fails or is cancelled on the way; a store object the
  server was given stays open, for its owner to close. A completion made when the server
  holds no store open (never started, or stopped) opens one for its write and closes it.
* Pages are served by a transport (next to ``/mcp`` over HTTP; a loopback server started
  on demand for stdio); this module only knows where they are (``PageHost``; a public
  base URL is checked by ``server/page_links.py``). A configured store is tried at
  start-up by ``server/store_check.py``. Token
  requests to providers go through the ``TokenExchange`` a transport installs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.flows import Flow, FlowQuota, Flows, FlowStatus
from mcp_elicit.server.oauth import ConnectAnswer, Connection, OAuthConnections, OAuthProvider, TokenExchange
from mcp_elicit.server.options import cleartext
from mcp_elicit.server.page_links import PAGES_PATH, public_base
from mcp_elicit.server.step_line import Told
from mcp_elicit.server.step_records import StepRecords
from mcp_elicit.server.store_check import check_store
from mcp_elicit.server.url_asking import end_flow, run_flow
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.server.vault import Secret, Vault
from mcp_elicit.stores.base import Store

if TYPE_CHECKING:
    from mcp_elicit.sealing import StateSealer
    from mcp_elicit.server.context import Context
    from mcp_elicit.stores.guarded import Guarded

__all__ = ["ConnectAnswer", "OAuthProvider", "PageAuth", "PageHost", "SecretAnswer", "UrlMode", "PAGES_PATH"]

T = TypeVar("T")
log = logging.getLogger("mcp_elicit.server")


class PageHost(Protocol):
    """Where the flow pages are served; gives the base URL (scheme://host:port)."""

    async def base_url(self) -> str: ...


class PageAuth(Protocol):
    """Who is using the browser: the subject of the browser's session with the server
    (its own sign-in, e.g. a session cookie), or None when not signed in."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None: ...


@dataclass(frozen=True, slots=True)
class SecretAnswer:
    action: Literal["accept", "decline", "cancel"]
    secret: Secret | None = None


class UrlMode:
    """The server's URL-mode machinery: store, flows, vault, pages, providers."""

    def __init__(
        self,
        *,
        store: str | Store | None,
        sealer: Callable[[], StateSealer],
        public_url: str | None = None,
        page_auth: PageAuth | None = None,
        flow_ttl: float = 600.0,
        flow_wait: float = 20.0,
        ask_timeout: float = 600.0,
        max_flows_per_principal: int = 100,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ask_timeout = ask_timeout
        #: How many flows one principal has open at once (unauthenticated callers are one).
        self.quota = FlowQuota(max_flows_per_principal, clock=clock)
        self._store_spec = store
        self._store: Store | None = store if store is not None and not isinstance(store, str) else None
        self._sealer = sealer
        self.public_url = public_base(public_url) if public_url else None
        self.page_auth = page_auth
        self.flow_ttl = flow_ttl
        self.flow_wait = flow_wait
        #: How often a wait looks at the flow besides being woken (SQLite across processes).
        self.flow_recheck = 1.0
        self.clock = clock
        self.providers: dict[str, OAuthProvider] = {}
        self.page_host: PageHost | None = None
        #: How token requests reach providers (installed by the HTTP or stdio transport).
        self.token_exchange: TokenExchange | None = None
        #: Called with a flow's id and principal when its page finishes (2025-11-25
        #: completion notices).
        self.on_finish: Callable[[str, str | None], object] | None = None
        #: Called with a flow's id and principal when a request waiting in place gives its
        #: page up unfinished (no notice is due; its session stops waiting on the id).
        self.on_abandon: Callable[[str, str | None], object] | None = None
        #: Called just before the default store is opened (not a configured one): the
        #: server then makes sure a persisted key seals what goes into it.
        self.on_default_store: Callable[[], object] | None = None
        self._markers: Store | None = None
        self._guarded: Guarded | None = None  # one per store: it counts an outage's failures
        self._flows: Flows | None = None
        self._vault: Vault | None = None
        self._oauth: OAuthConnections | None = None
        self._steps: StepCompletions | None = None
        self._retired: list[Store] = []  # opened here, replaced by configure: closed by close
        #: Completions being written (``step_completed``).
        self._records = StepRecords(self._held_steps, self._completion_url, ttl=ask_timeout)
        self._stopping = False
        self._stop_waiters: set[asyncio.Future[None]] = set()  # futures, not an Event: no loop binding
        #: Whether a transport serves the server (a start is held): the store stays as it is.
        self.serving = False

    @property
    def max_flows_per_principal(self) -> int:
        return self.quota.limit

    def stop_waiting(self, stopping: bool = True) -> None:
        """The server is stopping: a 2026-07-28 retry waiting for a page ends its round now
        (state only), so that the client retries elsewhere instead of waiting here. False:
        it serves again (a start after a stop), and retries wait again."""
        self._stopping = stopping
        if not stopping:
            return
        for waiter in self._stop_waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_for(self, flow_id: str) -> Flow | None:
        """The flow once it finished or ``flow_wait`` passed; at once when stopping."""
        flows = self.flows
        return await self.unless_stopping(
            lambda: flows.wait(flow_id, self.flow_wait), lambda: flows.get(flow_id)
        )

    async def unless_stopping(self, wait: Callable[[], Awaitable[T]], look: Callable[[], Awaitable[T]]) -> T:
        """What ``wait()`` (a 2026-07-28 round's bounded wait) gives; cut short when the
        server stops (``stop_waiting``), or made at once when it is stopping: then ``look()``."""
        if not self._stopping:
            stop: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._stop_waiters.add(stop)
            waiting = asyncio.ensure_future(wait())
            try:
                await asyncio.wait((waiting, stop), return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._stop_waiters.discard(stop)
                stop.cancel()
                if not waiting.done():
                    waiting.cancel()
            if waiting.done() and not waiting.cancelled():
                return waiting.result()
        return await look()

    def configure(
        self, *, store: str | Store | None = None, public_url: str | None = None, from_address: bool = False
    ) -> None:
        """Replace the store (before it is used) or the pages' public base URL.
        ``from_address``: the URL is not given but derived from the address the server
        bound (``serve --http``), so plain http off loopback is warned about at start-up
        (a test on a LAN) rather than refused. All or nothing: a value refused
        (``ConfigError``) changes nothing, and the old store stays open and in use."""
        base = self.public_url if public_url is None else public_base(public_url, from_address=from_address)
        if store is not None:
            used = any(part is not None for part in (self._flows, self._vault, self._oauth, self._steps))
            if used or self.serving:  # serving: the relay listens on the store the start checked
                raise ConfigError("the URL-mode store is already in use; configure it before serving")
            from mcp_elicit.stores import open_store

            replacing = open_store(store) if isinstance(store, str) else store  # before anything changes
            if self._store is not None and (self._store_spec is None or isinstance(self._store_spec, str)):
                self._retired.append(self._store)  # opened here (it may hold a connection)
            self._store_spec = store
            self._store = replacing
        self.public_url = base

    def warn_at_start(self, *, several_users: bool) -> None:
        """Log what, in this configuration, exposes the pages that take secrets.
        ``several_users``: requests carry a principal (the server has ``auth=``)."""
        if several_users and self.page_auth is None:
            log.warning(
                "the server authenticates its users (auth=) but has no page_auth=: if its tools ask for "
                "secrets or sign-ins (ctx.secret, ctx.connect), only the single-use link ties a page to "
                "the person who asked (whoever opens it first gets it), since the pages' loopback-only "
                "check holds nothing behind a proxy on this host. Give Server(page_auth=...), which says "
                "who is signed in to your site in the browser, so each page serves only its own user"
            )
        if self.public_url is not None and cleartext(self.public_url):
            log.warning(
                "URL-mode page links start with %s, plain http on a host that is not loopback: a secret "
                "typed on those pages, their one-time link and their cookie cross the network in "
                "cleartext. Pages that take secrets need https except on loopback: serve behind TLS and "
                "give --public-url https://... (Server(public_url=...))",
                self.public_url,
            )

    async def check_store(self) -> None:
        """Try the configured store once, at start-up (``server/store_check.py``); nothing
        for the default file, which is opened when first needed."""
        if self._store_spec is None:
            return
        try:
            await check_store(self.store, self._store_spec)
        except ConfigError:
            if isinstance(self._store_spec, str):  # closed there: opened again when next needed
                self._store = None
            raise

    async def close(self) -> None:
        """The server stopped: close the store if it opened it itself (from a URL, or the
        default file), releasing its connections or thread; a later start opens it again. A
        store object the server was given stays open: its owner closes it. Completions being
        recorded on this event loop (``step_completed``) are written first; one made while the
        stores close, or after, opens its store for the write and closes it once written
        (``server/step_records.py``), and the ones made while closing are waited for too
        (even when a close fails; not when the stop is cancelled, which ends at once).
        Every store opened here is closed even when waiting, or closing another, fails or
        is cancelled; the first such error is raised after."""
        settled = False
        try:
            await self._records.settle()
            settled = True
        finally:
            closing, self._retired = self._retired, []
            store = self._store
            if store is not None and (self._store_spec is None or isinstance(self._store_spec, str)):
                self._store = self._flows = self._vault = self._oauth = self._steps = None
                closing.append(store)
            failed: BaseException | None = None
            cancelled = not settled
            for opened in closing:
                try:
                    await opened.close()
                except BaseException as exc:  # the rest are closed all the same
                    failed = failed or exc
                    cancelled = cancelled or isinstance(exc, asyncio.CancelledError)
            if not cancelled:  # a cancelled stop ends now; those writes close their own stores
                try:
                    await self._records.settle()  # completions made while the stores closed
                except BaseException as exc:
                    failed = failed or exc
            if failed is not None:
                raise failed

    @property
    def store(self) -> Store:
        if self._store is None:
            from mcp_elicit.stores import default_store_url, open_store

            if isinstance(self._store_spec, str):
                spec = self._store_spec
            else:
                if self.on_default_store is not None:
                    self.on_default_store()
                spec = default_store_url()
            self._store = open_store(spec)
        return self._store

    @property
    def store_spec(self) -> str | Store | None:
        """The store as configured (a URL or an object); None for the default file."""
        return self._store_spec

    @property
    def shared_store(self) -> Store | None:
        """The store that was configured, which instances may share; None on the default."""
        return self.store if self._store_spec is not None else None

    @property
    def markers(self) -> Store:
        """Where short-lived per-request markers go (DPoP proofs already used): the configured
        store, which instances share; without one, this process's memory, so that the default
        SQLite file is neither created nor written for every request."""
        if self.shared_store is not None:
            return self.shared_store
        if self._markers is None:
            from mcp_elicit.stores.memory import MemoryStore

            self._markers = MemoryStore()
        return self._markers

    @property
    def guarded(self) -> Store:
        """The store as requests use it: a backend's failure is ``StoreUnavailable``
        (-32603, HTTP 503, try again); one view per store, which logs an outage once."""
        from mcp_elicit.stores.guarded import Guarded

        store = self.store
        if self._guarded is None or self._guarded.inner is not store:
            self._guarded = Guarded(store, repr(store))
        return self._guarded

    async def issue_state(self, token: str) -> None:
        """Record a single-use ``requestState`` as issued, for its lifetime: ``spend_state``
        takes the record, so a state is redeemable only while its record is in the store."""
        await self.guarded.put("issued", _state_marker(token), b"1", ttl=self._sealer().ttl + 60.0)

    async def spend_state(self, token: str) -> bool:
        """Take a single-use ``requestState``'s issued record from the store; False when it
        is not there: redeemed already (on any instance sharing the store), or lost with the
        store's data (a restart without persistence, a flush), which cannot be told from a
        redemption, so the state is refused rather than accepted twice. A store that fails
        refuses it too (``StoreUnavailable``)."""
        return await self.guarded.take("issued", _state_marker(token)) is not None

    async def spend_proof(self, marker: str, ttl: float) -> bool:
        """Remember a DPoP proof for ``ttl`` seconds; False when it was already seen (a
        replay). In the configured store, so instances sharing it see each other's proofs."""
        return await self.markers.add("used", marker, b"1", ttl=ttl)

    @property
    def flows(self) -> Flows:
        if self._flows is None:
            self._flows = Flows(self.guarded, ttl=self.flow_ttl, recheck=self.flow_recheck, clock=self.clock)
        return self._flows

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            self._vault = Vault(self.guarded, self._sealer, clock=self.clock)
        return self._vault

    @property
    def oauth(self) -> OAuthConnections:
        if self._oauth is None:
            self._oauth = OAuthConnections(
                store=self.guarded,
                vault=self.vault,
                sealer=self._sealer,
                exchange=lambda: self.token_exchange,
                providers=self.providers,
                clock=self.clock,
            )
        return self._oauth

    @property
    def steps(self) -> StepCompletions:
        """Completions of the handlers' own URL steps (``server.url_steps``)."""
        if self._steps is None:
            self._steps = StepCompletions(
                self.guarded, ttl=self.ask_timeout, recheck=self.flow_recheck, clock=self.clock
            )
        return self._steps

    def step_completed(self, elicitation_id: str, principal: str | None, told: Told = None) -> None:
        """Record, without waiting, that ``principal``'s step ``elicitation_id`` is done, for
        the 2026-07-28 requests held on it on any instance sharing the store
        (``complete_elicitation``; ``server/step_records.py``). ``told`` makes a channel and
        message, published once it is recorded (the relay's, for the sessions of other
        instances). A failure is logged; ``close`` writes what is under way first."""
        self._records.record(elicitation_id, principal, told)

    def _held_steps(self) -> StepCompletions | None:
        """The server's completions while it holds its store open (it started, or a request
        used it; a store object given to it, always); None otherwise."""
        return self.steps if self._store is not None else None

    def _completion_url(self) -> str | None:
        """The store a completion opens for its write when the server holds none open: the
        configured URL, or the default file once a process made it; None: nowhere."""
        if isinstance(self._store_spec, str):
            return self._store_spec
        from mcp_elicit.server.url_steps import default_store_made

        if self._store_spec is None and default_store_made():
            from mcp_elicit.stores import default_store_url

            return default_store_url()
        return None

    def add_provider(self, provider: OAuthProvider) -> None:
        if provider.name in self.providers:
            raise ConfigError(f"an OAuth provider named {provider.name!r} is already registered")
        self.providers[provider.name] = provider

    async def base_url(self) -> str:
        if self.public_url:
            return self.public_url
        if self.page_host is None:
            raise ConfigError(
                "URL mode needs to know where its pages are: set Server(public_url=...) or serve the "
                "server with mcp-elicit serve (HTTP mounts the pages next to /mcp; stdio starts a loopback page server)"
            )
        return (await self.page_host.base_url()).rstrip("/")

    async def link(self, flow: Flow, token: str) -> str:
        return f"{await self.base_url()}{PAGES_PATH}/flows/{flow.id}?t={token}"

    async def finished(self, flow: Flow) -> None:
        if self.on_finish is not None:
            self.on_finish(flow.id, flow.principal)

    # ---- what handlers call (through Context) -----------------------------------------

    async def secret(self, ctx: Context, name: str, message: str | None) -> SecretAnswer:
        principal = ctx.principal.subject if ctx.principal else None
        if await self.vault.get("vault", name, principal) is not None:
            return SecretAnswer("accept", Secret(self.vault, name, principal))
        action = await run_flow(
            self, ctx, "secret", name, message or f"Please enter your {name} on this secure page."
        )
        if action == "accept":
            return SecretAnswer("accept", Secret(self.vault, name, principal))
        return SecretAnswer(action)

    async def connect(self, ctx: Context, provider: str, message: str | None) -> ConnectAnswer:
        oauth = self.oauth
        oauth.provider(provider)  # unknown: ConfigError, before anything is asked
        principal = ctx.principal.subject if ctx.principal else None
        connection = Connection(oauth, provider, principal)
        if await oauth.usable(provider, principal) is not None:
            return ConnectAnswer("accept", connection)
        action = await run_flow(
            self, ctx, "oauth", provider, message or f"Please connect your {provider} account on this page."
        )
        if action == "accept":
            return ConnectAnswer("accept", connection)
        return ConnectAnswer(action)

    async def _end(self, flow_id: str, status: FlowStatus) -> None:
        """End the flow with ``status`` unless it already ended (its page then says so)."""
        await end_flow(self.flows, flow_id, status)


def _state_marker(token: str) -> str:
    """The store key of a single-use ``requestState``: a hash, never the state itself."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:40]
