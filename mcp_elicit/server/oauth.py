"""Third-party sign-in: the server as an OAuth 2.1 client of another service
(authorization code with PKCE and ``state``), holding the tokens for the principal who
signed in.

Rules:

* A provider is registered once (``Server.oauth_provider``). ``await ctx.connect(name)``
  gives a ``Connection`` at once when the principal holds tokens for it (refreshed first
  when expired); otherwise a URL-mode flow of kind ``"oauth"`` sends the person to the
  server's page, from there to the provider, and back to the server's callback.
* Each "Continue" click starts one authorization request: a fresh PKCE verifier (S256)
  and a random ``state``. The state maps, once, to the flow, the verifier and the redirect
  URI: sealed, added to the store under ``oauth`` and *taken* at the callback, so a state
  works once. The verifier leaves the server only in the token request. Of two requests of
  one flow coming back at once (its link opened twice), the pages keep one's tokens
  (``transports/page_save``); the other's are not stored.
* Tokens are sealed in the vault under kind ``tokens``, bound to (provider, principal),
  with their expiry. An expired access token is refreshed through the ``TokenExchange``
  (one refresh at a time per connection in this process; revoking what it narrowed comes
  after, outside that lock), and so is one the provider's
  API refuses (401) before its expiry (``Connection.refused``; dropped when there is no
  refresh token). A refresh the provider refuses drops the tokens, so the next
  ``ctx.connect`` asks again; a provider that cannot be reached keeps them and the call
  fails with ``OAuthError``.
* Tokens thrown away (a sign-in not kept, a grant too narrow, a connection forgotten) are
  revoked at the provider's ``revocation_url``, when it has one (``oauth_revoke.py``).
* Tokens granting fewer scopes than the provider's ``scopes`` are no connection
  (``oauth_scopes.py``, which also says how names written otherwise match): a narrower
  grant is not kept and ``ctx.connect`` raises ``OAuthError`` naming the missing scopes;
  stored tokens that lack a scope asked now (or narrowed by a refresh) count as absent, so
  the person is asked again. ``check_granted_scopes=False`` turns this off for a provider.
* No access or refresh token, code, verifier or state ever goes into an MCP message, a
  log line or an exception message; ``Connection`` and ``Tokens`` never show them.
* This module does no HTTP: the token requests go through ``TokenExchange``, which a
  transport installs (``transports/oauth_client.py``). authlib (the ``mcp-elicit[oauth]``
  extra) builds the authorization URL and the PKCE challenge. A provider's registration,
  checked as it is made, is ``oauth_provider.py``'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import secrets
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import orjson

from mcp_elicit.errors import ConfigError, InvalidRequestState, OAuthError, StoreUnavailable
from mcp_elicit.sealing import Binding
from mcp_elicit.server.oauth_connection import ConnectAnswer, Connection
from mcp_elicit.server.oauth_provider import OAuthProvider
from mcp_elicit.server.oauth_provider import authlib as authlib  # also the transport's (oauth_client)
from mcp_elicit.server.oauth_revoke import REVOKE_WAIT, revoke
from mcp_elicit.server.oauth_scopes import (
    INSUFFICIENT,
    described,
    missing_for_flow,
    missing_scopes,
    note_missing,
    shortfall,
    switch_off,
)
from mcp_elicit.server.oauth_tokens import Tokens
from mcp_elicit.server.vault import Vault
from mcp_elicit.stores.base import Store

if TYPE_CHECKING:
    from mcp_elicit.sealing import StateSealer
    from mcp_elicit.server.flows import Flow

__all__ = [
    "ConnectAnswer",
    "Connection",
    "OAuthConnections",
    "OAuthProvider",
    "PendingAuthorization",
    "TokenExchange",
    "Tokens",
]

log = logging.getLogger("mcp_elicit.oauth")

NAMESPACE: Final = "oauth"
TOKENS: Final = "tokens"
_STATE_ARGS: Final = hashlib.sha256(b"oauth/state").digest()


class TokenExchange(Protocol):
    """The HTTP side of the OAuth client, installed by a transport.

    ``exchange`` and ``refresh`` return the token endpoint's JSON answer (with
    ``access_token``); they raise ``OAuthError`` (``refused`` when the provider said no).
    ``client`` makes an HTTP client whose requests carry the connection's access token.
    """

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]: ...

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Mapping[str, Any]: ...

    def client(self, connection: Connection, **options: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class PendingAuthorization:
    """One authorization request in flight: what its ``state`` stands for."""

    flow_id: str
    verifier: str = field(repr=False)
    redirect_uri: str


class OAuthConnections:
    """Providers, authorization requests and stored tokens of one server."""

    def __init__(
        self,
        *,
        store: Store,
        vault: Vault,
        sealer: Callable[[], StateSealer],
        exchange: Callable[[], TokenExchange | None],
        providers: Mapping[str, OAuthProvider],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.vault = vault
        self.providers = providers
        self.clock = clock
        self._sealer = sealer
        self._exchange = exchange
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        #: Seconds the revocation of tokens thrown away may take, at most (``discard``).
        self.revoke_wait = REVOKE_WAIT

    @property
    def exchange(self) -> TokenExchange:
        exchange = self._exchange()
        if exchange is None:
            raise ConfigError(
                "third-party sign-in needs a token exchange: serve the server with mcp-elicit serve "
                "(HTTP or stdio), or set server.url_mode.token_exchange"
            )
        return exchange

    def provider(self, name: str) -> OAuthProvider:
        found = self.providers.get(name)
        if found is None:
            known = ", ".join(sorted(self.providers)) or "none"
            raise ConfigError(
                f"no OAuth provider named {name!r} (registered: {known}); add it with Server.oauth_provider"
            )
        return found

    # ---- stored tokens ----------------------------------------------------------------

    async def stored(self, provider: str, principal: str | None) -> Tokens | None:
        """The stored tokens; None when there are none, or when they lack a scope the
        provider's configuration now asks for (``oauth_scopes``: asked again)."""
        tokens = await self._kept(provider, principal)
        if tokens is not None and self._refused(provider, tokens, "lacks scopes now asked"):
            return None
        return tokens

    async def _kept(self, name: str, principal: str | None) -> Tokens | None:
        """The stored tokens as they are (scopes not checked)."""
        raw = await self.vault.get(TOKENS, name, principal)
        return Tokens.loads(raw) if raw is not None else None

    def _refused(self, name: str, tokens: Tokens, what: str) -> bool:
        """Whether ``tokens`` lack a scope the provider ``name`` is asked for (logged so);
        never when its granted scopes are not checked."""
        found = self.providers.get(name)
        if found is None or not found.check_granted_scopes:
            return False
        missing = missing_scopes(found.scopes, tokens.scope, refresh_token=tokens.refresh_token is not None)
        if missing:
            said = described(found.scopes, tokens.scope, missing)
            log.info(
                "connection to %s %s (%s): it will be asked again; %s", name, what, said, switch_off(name)
            )
        return bool(missing)

    async def save(self, provider: str, principal: str | None, tokens: Tokens) -> None:
        await self.vault.put(TOKENS, provider, principal, tokens.dumps())

    async def forget(self, provider: str, principal: str | None) -> bool:
        return await self.vault.forget(TOKENS, provider, principal)

    async def disconnect(self, name: str, principal: str | None) -> bool:
        """Forget the stored tokens, and revoke them (``discard``); after a refresh in flight
        (its lock), so that it neither saves its tokens again nor leaves them unrevoked."""
        async with self._lock(name, principal):
            tokens = await self._kept(name, principal)
            forgotten = await self.forget(name, principal)
        if tokens is not None:
            await self.discard(name, principal, tokens, "the connection was forgotten")
        return forgotten

    async def discard(self, name: str, principal: str | None, tokens: Tokens, why: str) -> None:
        """Revoke ``tokens``, thrown away because ``why``, best effort (``oauth_revoke``);
        never while a connection to ``name`` is stored for ``principal``: RFC 7009 lets a
        provider end the whole grant with any one of its tokens (Google does), which would
        end the kept connection too."""
        provider = self.providers.get(name)
        if provider is None or provider.revocation_url is None:
            return
        try:
            kept = await self._kept(name, principal)
        except StoreUnavailable:  # revoking could end a kept connection: leave them be
            log.warning(
                "tokens of %s thrown away (%s) are not revoked: the store could not say whether a "
                "connection to it is kept for this user",
                name,
                why,
            )
            return
        if kept is None:
            await revoke(self._exchange(), provider, tokens, why, self.revoke_wait)
        elif not secrets.compare_digest(kept.access_token.encode(), tokens.access_token.encode()):
            log.info(
                "tokens of %s thrown away (%s) are not revoked: a connection to it is kept for "
                "this user, and the provider may end the whole grant with them",
                name,
                why,
            )

    async def usable(self, name: str, principal: str | None) -> Tokens | None:
        """The stored tokens, refreshed first when expired; None when there are none, or
        when they expired and cannot be refreshed (then they are dropped)."""
        provider = self.provider(name)
        tokens = await self.stored(name, principal)
        if tokens is None or not tokens.expired(self.clock(), provider.leeway):
            return tokens
        async with self._lock(name, principal):
            tokens = await self.stored(name, principal)  # refreshed meanwhile?
            if tokens is None or not tokens.expired(self.clock(), provider.leeway):
                return tokens
            fresh, narrowed = await self._refresh(provider, principal, tokens)
        await self._revoke_narrowed(name, principal, narrowed)
        return fresh

    async def refused(self, name: str, principal: str | None, access_token: str) -> Tokens | None:
        """The provider refused ``access_token`` (a 401) before its expiry: the tokens
        refreshed, or None when they cannot be (then they are dropped, so the next
        ``ctx.connect`` asks again). Tokens refreshed meanwhile are returned as they are."""
        provider = self.provider(name)
        async with self._lock(name, principal):
            tokens = await self.stored(name, principal)
            if tokens is None or not secrets.compare_digest(
                tokens.access_token.encode(), access_token.encode()
            ):
                return tokens
            fresh, narrowed = await self._refresh(provider, principal, tokens)
        await self._revoke_narrowed(name, principal, narrowed)
        return fresh

    def _lock(self, name: str, principal: str | None) -> asyncio.Lock:
        key = hashlib.sha256(f"{name}\0{principal}".encode()).hexdigest()
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def _refresh(
        self, provider: OAuthProvider, principal: str | None, tokens: Tokens
    ) -> tuple[Tokens | None, Tokens | None]:
        """Refresh ``tokens`` (under the connection's lock): the tokens kept (None: dropped),
        and those the refresh brought but narrowed, for ``_revoke_narrowed`` once the lock
        is let go."""
        name = provider.name
        if tokens.refresh_token is None:
            log.info("connection to %s has no refresh token: it will be asked again", name)
            await self.forget(name, principal)
            return None, None
        try:
            answer = await self.exchange.refresh(provider, tokens.refresh_token)
            fresh = Tokens.from_response(answer, now=self.clock(), previous=tokens)
        except OAuthError as exc:
            if not exc.refused:
                raise
            log.info("%s refused to refresh a connection (%s): it will be asked again", name, exc.error)
            await self.forget(name, principal)
            return None, None
        if self._refused(name, fresh, "was narrowed by a refresh"):
            await self.forget(name, principal)
            return None, fresh
        await self.save(name, principal, fresh)
        log.info("connection to %s refreshed", name)
        return fresh, None

    async def _revoke_narrowed(self, name: str, principal: str | None, narrowed: Tokens | None) -> None:
        """Revoke the tokens a refresh narrowed (``discard``), after its lock is let go: that
        may take ``revoke_wait``, which no other request for the connection waits out."""
        if narrowed is not None:
            await self.discard(name, principal, narrowed, "narrowed by a refresh")

    # ---- authorization requests ---------------------------------------------------------

    async def authorization_url(self, flow: Flow, redirect_uri: str) -> str:
        """Start one authorization request for ``flow``: the provider's URL to send the
        browser to, with a new PKCE challenge and a new single-use ``state``."""
        provider = self.provider(flow.name)
        parameters, pkce = authlib("oauth2.rfc6749.parameters"), authlib("oauth2.rfc7636")
        verifier = secrets.token_urlsafe(48)
        state = secrets.token_urlsafe(24)
        pending = orjson.dumps({"flow": flow.id, "verifier": verifier, "redirect_uri": redirect_uri})
        ttl = max(flow.expires - self.clock(), 1.0)
        sealed = self._sealer().seal(pending, _state_binding(state), now=self.clock(), ttl=ttl)
        added = await self.store.add(NAMESPACE, _state_key(state), sealed.encode("ascii"), ttl=ttl)
        if not added:  # 192 random bits collided: never in practice
            raise RuntimeError("could not record the authorization request")
        url: str = parameters.prepare_grant_uri(
            provider.authorize_url,
            provider.client_id,
            "code",
            redirect_uri=redirect_uri,
            scope=list(provider.scopes) or None,
            state=state,
            code_challenge=pkce.create_s256_code_challenge(verifier),
            code_challenge_method="S256",
            **dict(provider.extra_params),
        )
        return url

    async def pending(self, state: str) -> PendingAuthorization | None:
        """What ``state`` stands for, without using it up."""
        if not _state_ok(state):
            return None
        return self._open(state, await self.store.get(NAMESPACE, _state_key(state)))

    async def take(self, state: str) -> PendingAuthorization | None:
        """Use ``state`` up (atomically): None when it was used, expired or never issued."""
        if not _state_ok(state):
            return None
        return self._open(state, await self.store.take(NAMESPACE, _state_key(state)))

    def _open(self, state: str, raw: bytes | None) -> PendingAuthorization | None:
        if raw is None:
            return None
        try:
            data = orjson.loads(
                self._sealer().open(raw.decode("ascii"), _state_binding(state), now=self.clock())
            )
            return PendingAuthorization(str(data["flow"]), str(data["verifier"]), str(data["redirect_uri"]))
        except (InvalidRequestState, UnicodeDecodeError, orjson.JSONDecodeError, KeyError, TypeError):
            return None

    async def redeem(self, flow: Flow, pending: PendingAuthorization, code: str) -> Tokens:
        """Exchange ``code`` (with the request's verifier) for tokens, not yet kept: the
        caller keeps them (``save``) only if the flow is still open once they arrive, else
        throws them away (``discard``). Raises ``OAuthError`` when the provider refuses, or
        grants fewer scopes than asked (``insufficient_scope``: noted for ``check_grant``,
        the tokens revoked), unless the provider's granted scopes are not checked (then the
        tokens are given, and what lacks is logged)."""
        provider = self.provider(flow.name)
        answer = await self.exchange.exchange(provider, code, pending.verifier, pending.redirect_uri)
        tokens = Tokens.from_response(answer, now=self.clock())
        if tokens.scope is None and provider.scopes:  # no scope in the answer: as asked
            tokens = dataclasses.replace(tokens, scope=" ".join(provider.scopes))
        missing = missing_scopes(
            provider.scopes, tokens.scope, refresh_token=tokens.refresh_token is not None
        )
        if missing and not provider.check_granted_scopes:
            log.info(
                "flow %s: connection to %s kept though it lacks scopes asked: check_granted_scopes is off (%s)",
                flow.id[:6],
                provider.name,
                described(provider.scopes, tokens.scope, missing),
            )
        elif missing:
            await note_missing(self.store, flow.id, missing, tokens.scope, flow.expires - self.clock())
            await self.discard(provider.name, flow.principal, tokens, INSUFFICIENT)
            raise shortfall(provider.name, provider.scopes, tokens.scope, missing)
        return tokens

    async def check_grant(self, flow_id: str, name: str) -> None:
        """Raise ``OAuthError`` naming the scopes missing when the flow ``flow_id`` failed
        for a grant narrower than asked (``redeem``)."""
        missing, granted = await missing_for_flow(self.store, flow_id)
        if missing:
            found = self.providers.get(name)
            raise shortfall(name, found.scopes if found is not None else (), granted, missing)


def _state_ok(state: str) -> bool:
    return 0 < len(state) <= 128


def _state_key(state: str) -> str:
    return "state:" + hashlib.sha256(state.encode("utf-8", "replace")).hexdigest()


def _state_binding(state: str) -> Binding:
    return Binding(method="oauth/state", target=_state_key(state), arguments=_STATE_ARGS)
