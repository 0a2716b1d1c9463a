"""MCP authorization over HTTP: :class:`OAuth`, an ``httpx.Auth`` that answers an MCP
server's 401 (and 403 ``insufficient_scope``) by running the OAuth 2.1 flow the MCP spec
describes, then sends the request again with the token. The decisions are in
:mod:`mcp_elicit.core.authorization`; this module sends the requests.

Rules:

* A 401 with a ``Bearer`` or ``DPoP`` challenge is answered, and so is one with no
  ``WWW-Authenticate`` at all (its server says nothing, so its metadata is looked for at
  the well-known URLs); one that asks for another scheme only (``Basic``) is not.
* The person's part (opening the authorization URL, signing in, coming back with the
  redirect) is an :class:`Authorizer`: the terminal's opens the system browser and listens
  on a loopback redirect URI; a test's follows the redirect without a browser.
* Discovery runs again on every 401 (cheap; a server may move to another authorization
  server); credentials and tokens belong to the issuer that gave them, never shown to another.
* A token about to expire is refreshed before it is used; a 401 for a token tries one
  refresh (one a request has not tried already), then a new authorization; at most
  ``max_authorizations`` (3) per request, then :class:`AuthorizationError`, never a loop.
* Requests that meet a 401 together wait for the first one's authorization and its token.
* The 401 or 403 answered is read first: its connection goes back to the pool, which drops
  it once idle too long, instead of carrying the request again, after an authorization as
  long as the server's keep-alive, just as the server closes it.
* Requests of the flow itself (metadata, registration, token) go out on their own HTTP
  client, never follow redirects, and read at most 256 KiB of an answer. For a server
  elsewhere (by its URL, and the address its 401 came from when the transport tells and no
  proxy stood between) they connect only to addresses elsewhere, checked as they are
  connected to (``resolver``); or, where the MCP requests' HTTP client goes through a proxy
  for their URL, through that proxy, the proxy's resolution trusted and the URL's checks
  kept: the client's own (``proxy=``, ``mounts=``: ``transports.http_proxy_client``), or the
  one the environment names when the client trusts it (``trust_env``: ``HTTPS_PROXY``,
  ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, as httpx reads them; ``transports.http_proxy``).
  The MCP transport tells the flow its client (``route_like``).
  Which grant and how a token is asked for: ``transports.http_auth_tokens`` (this class's
  base). Which client it is at each authorization server: ``transports.http_registration``.
* Tokens go over TLS (RFC 6750 section 5.3): a plain ``http://`` MCP server off this
  machine (or, with ``plain_http="private"``, off a private network) gets requests without
  one, and its 401 is an :class:`AuthorizationError` saying what to do.
* One ``OAuth`` signs in to one MCP server: the URL of its first request. A request to
  another URL is an :class:`AuthorizationError`, sent nowhere: tokens are for the resource
  they were issued for (RFC 8707) and never presented to another. So is a 401 from another
  origin the request was redirected to (httpx sent no token there): no sign-in can help.
* A ``TokenStore`` (``transports.token_store``) keeps tokens and registrations between
  runs, keyed by the MCP server's URL; a record that does not read back is ignored whole.
* A refresh token is spent once, whoever shares it (``transports.token_record``): a
  refresh holds the store's lock on the record (``TokenStore.locked``, across read,
  refresh and save) and first reads the record again. Tokens another process or client
  saved meanwhile are taken instead: used as they are when fresh, else refreshed. The lock
  is waited for ``lock_timeout`` seconds at most; then the request ends in an
  :class:`AuthorizationError` saying so.
* DPoP (RFC 9449, the MCP ``auth/dpop`` extension): where the authorization server offers
  ES256 proofs (or ``dpop=True``), every token request carries a proof, and a ``DPoP``
  token is presented with the ``DPoP`` scheme and a fresh proof per request
  (``transports.http_dpop``). A server's ``use_dpop_nonce`` gets one retry with its nonce.
  The key is stored with the tokens it binds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace

import httpx

from mcp_elicit.client.transport import person_at_work
from mcp_elicit.core import authorization as oauth
from mcp_elicit.core.authorization import AuthorizationServer
from mcp_elicit.core.authorization_urls import PLAIN_HTTP, cleartext_refusal, far_server
from mcp_elicit.core.token_endpoint import Tokens
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.telemetry import redact_urls
from mcp_elicit.transports.http_auth_tokens import Authorizer, TokenGrants
from mcp_elicit.transports.http_documents import discover
from mcp_elicit.transports.http_dpop import DpopProver
from mcp_elicit.transports.http_grants import AssertionSource
from mcp_elicit.transports.http_pinned import Resolver
from mcp_elicit.transports.http_registration import ClientIdentity
from mcp_elicit.transports.token_record import SharedRecord, usable_tokens
from mcp_elicit.transports.token_store import FileTokenStore, MemoryTokenStore, Stored, TokenStore

__all__ = ["Authorizer", "FileTokenStore", "MemoryTokenStore", "OAuth", "TokenStore"]

log = logging.getLogger(__name__)


class OAuth(TokenGrants):
    """Authorization for the MCP server an ``httpx.AsyncClient`` talks to.

    ``authorizer``: the person's part; None for a machine acting as itself (the
    ``client_credentials`` grant, no person: ``client_id`` with ``client_secret``, or with
    ``private_key``, a PEM key for ``private_key_jwt``; or, for a workload holding a JWT
    from its platform or an ID-JAG from the person's company (``transports.http_grants``),
    ``assertion``: the JWT, or a function of the ``Audience`` returning a current one, for
    the JWT-bearer grant, with or without client credentials).
    ``client_id``/``client_secret``: credentials registered beforehand (used first), at
    ``client_issuer`` (default: the first authorization server they are used with, remembered
    in ``store`` for the next run; they are never presented to another).
    ``client_metadata_url``: an https URL with a path, where the client's metadata document
    is published, used as its ``client_id`` where the authorization server supports that.
    Otherwise the client registers itself (``client_name``, ``application_type``).
    ``refresh``: ask for refresh tokens (``offline_access`` where offered). ``dpop``: ask for
    DPoP-bound tokens (RFC 9449) where the authorization server offers ES256 proofs (None,
    the default), always and refusing any other token (True), or never (False).
    ``lock_timeout``: how long a refresh waits for another one sharing the store (default:
    twice ``timeout``, plus 10 s). ``plain_http``: which MCP servers over plain ``http://``
    it signs in to and sends tokens to: ``"loopback"`` (the default: this machine only) or
    ``"private"`` (also private-network addresses and names, for a network you trust).
    ``resolver``: how the flow looks up host names, an async function of ``(host, port)``
    returning addresses (default: the system's for a server elsewhere, whose flow connects
    only to the addresses it checked; httpx's own for a server at home). Where the HTTP
    client of the MCP requests goes through a proxy for a URL, the flow's request does too
    and no resolver is asked: the client's proxy (``proxy=``, ``mounts=``, its own transport
    used), or, when the client trusts the environment (``trust_env``, httpx's default), the
    one the environment names (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, less the hosts
    of ``NO_PROXY``, as httpx reads them). The proxy resolves the name, and its resolution
    is trusted; the checks of the URL itself (a scheme, an address written in it, a
    ``.local`` or ``.internal`` name) still apply. ``transport``: the flow's own HTTP
    transport, used as it is (no proxy but its own, nothing resolved nor checked by the flow).
    """

    requires_request_body = True  # a DPoP proof digests the body it goes with

    def __init__(
        self,
        authorizer: Authorizer | None,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        private_key: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcp-elicit",
        application_type: str = "native",
        refresh: bool = True,
        max_authorizations: int = 3,
        client_issuer: str | None = None,
        dpop: bool | None = None,
        assertion: AssertionSource | None = None,
        store: TokenStore | None = None,
        plain_http: str = "loopback",
        timeout: float = 15.0,
        lock_timeout: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        resolver: Resolver | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (client_secret is not None or private_key is not None) and client_id is None:
            raise ValueError("client_secret and private_key need client_id")
        if client_secret is not None and private_key is not None:
            raise ValueError("pass client_secret or private_key, not both")
        if assertion is not None and authorizer is not None:
            raise ValueError("an assertion is for a workload acting as itself: pass authorizer=None")
        if (
            authorizer is None
            and assertion is None
            and (client_id is None or (client_secret is None and private_key is None))
        ):
            raise ValueError(
                "without an authorizer pass client_id and a client_secret or private_key (client "
                "credentials), or a workload's JWT as assertion"
            )
        if application_type not in ("native", "web"):
            raise ValueError("application_type is 'native' or 'web'")
        if dpop not in (None, True, False):
            raise ValueError("dpop is None (where offered), True or False")
        if plain_http not in PLAIN_HTTP:
            raise ValueError(f"plain_http is 'loopback' or 'private', not {plain_http!r}")
        self.plain_http = plain_http
        self.authorizer = authorizer
        self.identity = ClientIdentity(
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            client_issuer=client_issuer,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            application_type=application_type,
            refresh=refresh,
            clock=clock,
        )
        self.refresh = refresh
        self.max_authorizations = max_authorizations
        self.dpop = dpop
        self.assertion = assertion
        self._prover = DpopProver(clock)
        self._clock = clock
        self._timeout = timeout
        self._lock_timeout = 2 * timeout + 10 if lock_timeout is None else lock_timeout
        self._transport = transport
        self._resolver = resolver
        self._routes = None
        self._far: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._lock = asyncio.Lock()
        self._tokens: Tokens | None = None
        self._issuer: str | None = None  # who gave self._tokens
        self._legacy = False  # the server publishes no metadata: its origin authorizes (2025-03-26)
        self._scope: str | None = None  # what was asked for them
        self._server: AuthorizationServer | None = None
        self._resource = ""
        self._dpop_required = False  # the resource takes DPoP-bound tokens only
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self._key: str | None = None  # the server URL the stored record is under
        self._record: SharedRecord | None = None

    @property
    def issuer(self) -> str | None:
        """The authorization server whose token is held (None: none is)."""
        return self._issuer if self._tokens is not None else None

    @property
    def client_issuer(self) -> str | None:
        """The authorization server the ``client_id`` given is registered at (None: not used yet)."""
        return self.identity.client_issuer

    @property
    def token_type(self) -> str | None:
        """How the token held is presented: ``Bearer`` or ``DPoP`` (None: no token)."""
        return self._tokens.token_type if self._tokens is not None else None

    async def _flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        target = str(request.url.copy_with(query=None, fragment=None))
        if self._key is None:
            await self._load(target)
        if target != self._key:  # its tokens are that server's (RFC 8707): never shown to another
            raise AuthorizationError(
                f"this OAuth signs in to {self._key}, and {target} is another server: "
                "use one OAuth per MCP server"
            )
        cleartext = cleartext_refusal(target, self.plain_http)  # sent bare: it may want no token
        tokens, refreshed = await self._current() if cleartext is None else (None, False)
        if tokens is not None:
            self._present(request, tokens)
        response = yield request
        authorizations = 0
        nonces = 0
        while response.status_code in (401, 403):
            peer = self._peer(response, target)  # read before the answer is, while its connection is open
            challenges = oauth.token_challenges(response.headers.get_list("www-authenticate"))
            if response.status_code == 401 and "www-authenticate" not in response.headers:
                challenges = [oauth.Challenge("Bearer", {})]  # names no metadata: the well-known URLs
            if _origin(response.url) != _origin(request.url):  # redirected: no token went there
                if response.status_code == 403 and all(c.error != "insufficient_scope" for c in challenges):
                    return  # forbidden there, whatever the token: the caller sees the answer
                final = response.url.copy_with(query=None, fragment=None)
                raise AuthorizationError(
                    f"{target} redirected to {final.scheme}://{final.netloc.decode()}, which asks for "
                    f"authorization; mcp-elicit does not send tokens across origins: use {final} directly"
                )
            if (
                tokens is not None
                and tokens.token_type == "DPoP"
                and any(c.error == "use_dpop_nonce" for c in challenges)
                and self._prover.heard(str(request.url), response.headers)
                and nonces < 2
            ):
                nonces += 1  # the server wants its nonce in the proof: sign again with it
                await response.aread()  # released before the request goes again (below)
                self._present(request, tokens)
                response = yield request
                continue
            challenge = challenges[0] if challenges else None
            step_up = response.status_code == 403
            if challenge is None or (step_up and challenge.error != "insufficient_scope"):
                return  # no Bearer or DPoP challenge we can answer: the caller sees the answer
            if cleartext is not None:
                raise AuthorizationError(cleartext)
            if authorizations >= self.max_authorizations:
                what = f"HTTP {response.status_code}" + (f" ({challenge.error})" if challenge.error else "")
                raise AuthorizationError(
                    f"{target} still answers {what} after {authorizations} authorizations"
                    + (f" (scope asked: {self._scope})" if self._scope else "")
                    + "; giving up"
                )
            # Sent again, the request goes on this answer's connection if the pool holds it
            # idle still. Read (so released) now, not after the authorization: an unread
            # answer's connection is not idle, so after an authorization that took about
            # the server's keep-alive it went out as the server closed it ("broken").
            await response.aread()
            with person_at_work():  # the flow under way may be waiting for one
                await self._lock.acquire()
            try:
                if (
                    self._tokens is not tokens
                    and self._tokens is not None
                    and (not step_up or _asked(self._scope, challenge.scope))
                ):
                    # another request authorized meanwhile (for a 403: asking already for
                    # what this challenge names, as concurrent calls of one scoped tool do)
                    tokens = self._tokens
                else:
                    # ``target``: the URL without its query, the canonical URI, which is a
                    # 2025-03-26 server's resource (RFC 8707 section 2)
                    await self._guard(target if far_server(target, peer) else None)
                    tokens, did_refresh = await self._recover(
                        target, challenge, step_up=step_up, may_refresh=not refreshed
                    )
                    refreshed = refreshed or did_refresh
                    authorizations += 0 if did_refresh else 1
            except AuthorizationError as exc:
                if not self._legacy:
                    raise
                raise AuthorizationError(
                    f"{exc} (the server publishes no protected resource metadata, so its origin was "
                    "taken for its authorization server, as MCP 2025-03-26 says)"
                ) from None
            finally:
                self._lock.release()
            self._present(request, tokens)
            response = yield request
        if tokens is not None and tokens.token_type == "DPoP":
            self._prover.heard(str(request.url), response.headers)  # a nonce for the next proof

    def _present(self, request: httpx.Request, tokens: Tokens) -> None:
        if tokens.token_type == "DPoP":
            self._prover.sign(request, tokens.access_token)
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"

    # ---- the flow ----------------------------------------------------------------------

    async def _current(self) -> tuple[Tokens | None, bool]:
        """The tokens to send, refreshed first when they are about to expire; and whether
        a refresh was tried (a refused one is not tried again after the 401)."""
        tokens = self._tokens
        if tokens is None or tokens.fresh(self._clock()) or tokens.refresh_token is None:
            return tokens, False
        async with self._lock:
            if self._tokens is not tokens or self._server is None:
                return self._tokens, False  # another request refreshed it meanwhile
            async with self._holding():
                if await self._newer(tokens) is not None:
                    return self._tokens, False  # another process refreshed it meanwhile
                try:
                    await self._refresh(self._server)
                except AuthorizationError as exc:
                    log.info(
                        "refreshing the access token failed (%s); it is sent as it is", redact_urls(str(exc))
                    )
            return self._tokens, True

    async def _recover(
        self, server_url: str, challenge: oauth.Challenge, *, step_up: bool, may_refresh: bool
    ) -> tuple[Tokens, bool]:
        """New tokens after a 401 or a 403 step-up: refreshed when that may do, else
        authorized anew. Returns them and whether it was a refresh."""
        self._legacy = False
        resource, server = await discover(self._http, server_url, challenge)
        issuer, self._legacy = server.issuer, resource.legacy
        if self._issuer is not None and issuer != self._issuer:
            log.info(
                "%s now uses authorization server %s (was %s)",
                *map(redact_urls, (self._key or "", issuer, self._issuer)),
            )
            self._tokens = None
            self._scope = None
        self._server, self._issuer, self._resource = server, issuer, resource.resource
        self._dpop_required = resource.dpop_required
        if not step_up and may_refresh and self._tokens is not None and self._tokens.refresh_token:
            async with self._holding():
                newer = await self._newer(self._tokens)
                if newer is not None:  # another process refreshed it meanwhile
                    return newer, True
                try:
                    return await self._refresh(server), True
                except AuthorizationError as exc:
                    log.info("refreshing the access token failed (%s); authorizing again", exc)
        scope = oauth.select_scope(
            challenge.scope,
            resource,
            server,
            previous=self._scope,  # asked of this issuer before: kept, whether 401 or 403
            refresh=self.refresh and self.authorizer is not None,
        )
        tokens = await self._grant(server, resource.resource, scope)
        self._tokens, self._scope = tokens, scope
        await self._save()
        return tokens, False

    # ---- the store -----------------------------------------------------------------------

    async def _load(self, key: str) -> None:
        async with self._lock:
            if self._key is not None:
                return
            self._key = key
            self._record = SharedRecord(self.store, key, lock_timeout=self._lock_timeout)
            stored = await self._record.read()
            if stored is not None:
                self._take(stored)

    def _take(self, stored: Stored) -> None:
        self.identity.clients.update(stored.clients)
        self.identity.given.update(stored.given)
        if self.identity.client_id is not None and self.identity.client_issuer is None:
            self.identity.client_issuer = stored.given.get(self.identity.client_id)  # an earlier run's
        tokens = usable_tokens(stored, self._prover, self._key or "")
        self._tokens, self._issuer, self._scope = tokens, stored.issuer, stored.scope

    def _holding(self) -> contextlib.AbstractAsyncContextManager[None]:
        assert self._record is not None  # loaded before any refresh
        return self._record.holding()

    async def _newer(self, held: Tokens) -> Tokens | None:
        """Under the store's lock, before ``held`` is refreshed: tokens saved meanwhile are
        taken instead (refreshed when stale); returned when fresh, so no refresh is needed."""
        assert self._record is not None
        stored = await self._record.newer(held, self._issuer)
        if stored is not None:
            self._take(stored)
        tokens = self._tokens if stored is not None else None
        return tokens if tokens is not None and tokens.fresh(self._clock()) else None

    async def _save(self) -> None:
        if self._record is not None:
            key = self._prover.key.private_pem() if self._prover.has_key else None
            given = self.identity.given
            if self.identity.client_id is not None and self.identity.client_issuer is not None:
                given[self.identity.client_id] = self.identity.client_issuer
            await self._record.write(
                Stored(self._issuer, self._scope, self._tokens, self.identity.clients, key, given)
            )

    async def _refresh(self, server: AuthorizationServer) -> Tokens:
        tokens = self._tokens
        credentials = self.identity.known(server)
        if tokens is None or tokens.refresh_token is None or credentials is None:
            raise AuthorizationError("no refresh token, or no client to use it")
        fields = {"refresh_token": tokens.refresh_token}
        fresh = await self._token(server, credentials, "refresh_token", fields, self._resource)
        if fresh.refresh_token is None:  # the server keeps the old one valid
            fresh = replace(fresh, refresh_token=tokens.refresh_token)
        self._tokens = fresh
        await self._save()
        return fresh

    def _peer(self, response: httpx.Response, target: str) -> str | None:
        """The address ``response`` (from the MCP server at ``target``) came from, when its
        transport tells (httpcore's does: the connection's ``server_addr``); None when it does
        not (an application in process), and when a proxy may stand between (the MCP client's,
        the environment's it takes, or a transport of its own mounted for ``target``, which may
        wrap one: ``ClientRoutes.hides_the_server``): through one, the address is the
        proxy's, which says nothing of where the server is (a proxy on this machine would make
        every server look at home, its sign-in unguarded)."""
        if self._ways_out().hides_the_server(target):
            return None
        stream = response.extensions.get("network_stream")
        try:
            address = stream.get_extra_info("server_addr") if stream is not None else None
        except OSError:  # closed already: unknown, so the URL alone decides
            return None
        return str(address[0]) if isinstance(address, tuple) and address else None


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


def _asked(scope: str | None, challenged: str | None) -> bool:
    """Whether ``scope`` (the last authorization's request) names every scope of
    ``challenged`` (a 403's)."""
    return set((challenged or "").split()) <= set((scope or "").split())
