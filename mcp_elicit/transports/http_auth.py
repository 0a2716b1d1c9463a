"""MCP authorization over HTTP: :class:`OAuth`, an ``httpx.Auth`` that answers an MCP
server's 401 (and 403 ``insufficient_scope``) by running the OAuth 2.1 flow the MCP spec
describes, then sends the request again with the token. The decisions are in
:mod:`mcp_elicit.core.authorization`; this module sends the requests.

Rules:

* The person's part (opening the authorization URL, signing in, coming back with the
  redirect) is an :class:`Authorizer`: the terminal's opens the system browser and listens
  on a loopback redirect URI; a test's follows the redirect without a browser.
* Discovery runs again on every 401 (cheap, and a server may move to another
  authorization server); credentials and tokens belong to the issuer that gave them and are
  never presented to another.
* A token about to expire is refreshed before it is used; a 401 for a token tries one
  refresh, then a new authorization. A request gets at most ``max_authorizations``
  authorizations (3): a server that keeps refusing ends in :class:`AuthorizationError`,
  never in a loop.
* One authorization at a time: requests that meet a 401 together wait for the first one's
  flow and use its token.
* Requests of the flow itself (metadata, registration, token) go out on their own HTTP
  client, never follow redirects, and read at most 256 KiB of an answer.
* A ``TokenStore`` (``transports.token_store``) keeps tokens and registrations between
  runs, keyed by the MCP server's URL; a record that does not read back is ignored (and
  replaced), never trusted in part.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from dataclasses import replace
from typing import Any, Final, Protocol

import httpx
import orjson

from mcp_elicit.client.transport import person_at_work
from mcp_elicit.core import authorization as oauth
from mcp_elicit.core import token_endpoint as tokens_at
from mcp_elicit.core.authorization import AuthorizationServer, ProtectedResource
from mcp_elicit.core.token_endpoint import ClientCredentials, Tokens
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.token_store import FileTokenStore, MemoryTokenStore, Stored, TokenStore

__all__ = ["Authorizer", "FileTokenStore", "MemoryTokenStore", "OAuth", "TokenStore"]

log = logging.getLogger(__name__)

MAX_DOCUMENT: Final = 256 * 1024


class Authorizer(Protocol):
    """The person's part of the authorization code flow."""

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the person back."""
        ...

    async def authorize(self, url: str, *, issuer: str) -> str:
        """Have the person open ``url`` (at ``issuer``); return the redirect URL they came
        back with (its query holds ``code``, ``state``, maybe ``iss``)."""
        ...


class OAuth(httpx.Auth):
    """Authorization for the MCP server an ``httpx.AsyncClient`` talks to.

    ``authorizer``: the person's part; None for a machine acting as itself (the
    ``client_credentials`` grant, no person: ``client_id`` with ``client_secret``, or with
    ``private_key``, a PEM key for ``private_key_jwt``).
    ``client_id``/``client_secret``: credentials registered beforehand (used first), at
    ``client_issuer`` (default: the first authorization server they are used with; they are
    never presented to another).
    ``client_metadata_url``: an https URL where the client's metadata document is published,
    used as its ``client_id`` where the authorization server supports that. Otherwise the
    client registers itself (``client_name``, ``application_type``). ``refresh``: ask for
    refresh tokens (``offline_access`` where offered).
    """

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
        store: TokenStore | None = None,
        timeout: float = 15.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (client_secret is not None or private_key is not None) and client_id is None:
            raise ValueError("client_secret and private_key need client_id")
        if client_secret is not None and private_key is not None:
            raise ValueError("pass client_secret or private_key, not both")
        if authorizer is None and (client_id is None or (client_secret is None and private_key is None)):
            raise ValueError(
                "without an authorizer (client credentials) pass client_id and a client_secret or private_key"
            )
        if application_type not in ("native", "web"):
            raise ValueError("application_type is 'native' or 'web'")
        self.authorizer = authorizer
        self.client_id = client_id
        self.client_secret = client_secret
        self.private_key = private_key
        #: The authorization server ``client_id`` is registered at (None: the first one it is
        #: used with); a server that sends the client elsewhere is an error, not a guess.
        self.client_issuer = client_issuer
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.application_type = application_type
        self.refresh = refresh
        self.max_authorizations = max_authorizations
        self._clock = clock
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._lock = asyncio.Lock()
        self._tokens: Tokens | None = None
        self._issuer: str | None = None  # who gave self._tokens
        self._scope: str | None = None  # what was asked for them
        self._server: AuthorizationServer | None = None
        self._resource = ""
        self._clients: dict[str, ClientCredentials] = {}
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self._key: str | None = None  # the server URL the stored record is under

    @property
    def issuer(self) -> str | None:
        """The authorization server whose token is held (None: none is)."""
        return self._issuer if self._tokens is not None else None

    @property
    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self._timeout, follow_redirects=False, transport=self._transport
            )
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client of the flow's own requests (tokens are kept)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("OAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self._key is None:
            await self._load(str(request.url.copy_with(query=None, fragment=None)))
        tokens = await self._current()
        if tokens is not None:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        response = yield request
        authorizations = 0
        refreshed = False
        while response.status_code in (401, 403):
            challenge = oauth.bearer_challenge(response.headers.get_list("www-authenticate"))
            step_up = response.status_code == 403
            if challenge is None or (step_up and challenge.error != "insufficient_scope"):
                return  # not a Bearer challenge we can answer: the caller sees the answer
            if authorizations >= self.max_authorizations:
                what = f"HTTP {response.status_code}" + (f" ({challenge.error})" if challenge.error else "")
                raise AuthorizationError(
                    f"{request.url} still answers {what} after {authorizations} authorizations"
                    + (f" (scope asked: {self._scope})" if self._scope else "")
                    + "; giving up"
                )
            with person_at_work():  # the flow under way may be waiting for one
                await self._lock.acquire()
            try:
                if self._tokens is not tokens and self._tokens is not None and not step_up:
                    tokens = self._tokens  # another request authorized meanwhile
                else:
                    tokens, did_refresh = await self._recover(
                        str(request.url), challenge, step_up=step_up, may_refresh=not refreshed
                    )
                    refreshed = refreshed or did_refresh
                    authorizations += 0 if did_refresh else 1
            finally:
                self._lock.release()
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
            response = yield request

    # ---- the flow ----------------------------------------------------------------------

    async def _current(self) -> Tokens | None:
        """The tokens to send, refreshed first when they are about to expire."""
        tokens = self._tokens
        if tokens is None or tokens.fresh(self._clock()) or tokens.refresh_token is None:
            return tokens
        async with self._lock:
            if self._tokens is tokens and self._server is not None:
                try:
                    await self._refresh(self._server)
                except AuthorizationError as exc:
                    log.info("refreshing the access token failed (%s); it is sent as it is", exc)
            return self._tokens

    async def _recover(
        self, server_url: str, challenge: oauth.Challenge, *, step_up: bool, may_refresh: bool
    ) -> tuple[Tokens, bool]:
        """New tokens after a 401 or a 403 step-up: refreshed when that may do, else
        authorized anew. Returns them and whether it was a refresh."""
        resource = await self._protected_resource(server_url, challenge)
        issuer = resource.authorization_servers[0]
        server = await self._authorization_server(issuer)
        if self._issuer is not None and issuer != self._issuer:
            log.info("%s now uses authorization server %s (was %s)", server_url, issuer, self._issuer)
            self._tokens = None
            self._scope = None
        self._server, self._issuer, self._resource = server, issuer, resource.resource
        if not step_up and may_refresh and self._tokens is not None and self._tokens.refresh_token:
            try:
                return await self._refresh(server), True
            except AuthorizationError as exc:
                log.info("refreshing the access token failed (%s); authorizing again", exc)
        scope = oauth.select_scope(
            challenge.scope,
            resource,
            server,
            previous=self._scope if step_up else None,
            refresh=self.refresh and self.authorizer is not None,
        )
        credentials = await self._credentials(server)
        if self.authorizer is None:
            fields = {"scope": scope} if scope else {}
            tokens = await self._token(server, credentials, "client_credentials", fields, resource.resource)
        else:
            tokens = await self._authorize(self.authorizer, server, credentials, scope, resource.resource)
        self._tokens, self._scope = tokens, scope
        await self._save()
        return tokens, False

    # ---- the store -----------------------------------------------------------------------

    async def _load(self, key: str) -> None:
        async with self._lock:
            if self._key is not None:
                return
            self._key = key
            record = await self.store.load(key)
            try:
                stored = Stored.from_record(record) if record is not None else Stored()
            except ValueError as exc:
                log.warning("ignoring the stored authorization for %s (%s)", key, exc)
                return
            self._clients.update(stored.clients)
            self._tokens, self._issuer, self._scope = stored.tokens, stored.issuer, stored.scope

    async def _save(self) -> None:
        if self._key is None:
            return
        stored = Stored(self._issuer, self._scope, self._tokens, self._clients)
        try:
            await self.store.save(self._key, stored.to_record())
        except OSError as exc:
            log.warning("could not save the authorization for %s: %s", self._key, exc)

    async def _protected_resource(self, server_url: str, challenge: oauth.Challenge) -> ProtectedResource:
        urls = oauth.protected_resource_urls(server_url, challenge.resource_metadata)
        for url in urls:
            found = await self._get_json(url)
            if found is not None:
                return oauth.read_protected_resource(found, server_url, url)
        raise AuthorizationError(
            f"{server_url} asks for authorization but publishes no protected resource metadata "
            f"(tried {', '.join(urls)})"
        )

    async def _authorization_server(self, issuer: str) -> AuthorizationServer:
        urls = oauth.authorization_server_metadata_urls(issuer)
        for url in urls:
            found = await self._get_json(url)
            if found is not None:
                return oauth.read_authorization_server(found, issuer, url)
        raise AuthorizationError(f"no authorization server metadata for {issuer} (tried {', '.join(urls)})")

    def _known_credentials(self, server: AuthorizationServer) -> ClientCredentials | None:
        if self.client_id is not None:  # credentials given are one authorization server's
            if self.client_issuer is None:
                self.client_issuer = server.issuer
            elif server.issuer != self.client_issuer:
                raise AuthorizationError(
                    f"the server sends this client to {server.issuer}, but the client id given is "
                    f"registered at {self.client_issuer}: register it there (or leave it out)"
                )
        if self.client_id is not None and self.private_key is not None:
            assertion = tokens_at.client_assertion(
                self.client_id, server.issuer, self.private_key, now=self._clock()
            )
            return ClientCredentials(self.client_id, None, "private_key_jwt", assertion)
        if self.client_id is not None:  # given: it wins over anything stored
            method = tokens_at.choose_auth_method(server, self.client_secret)
            return ClientCredentials(self.client_id, self.client_secret, method)
        return self._clients.get(server.issuer)

    async def _credentials(self, server: AuthorizationServer) -> ClientCredentials:
        known = self._known_credentials(server)
        if known is not None and (
            known.redirect_uri is None
            or self.authorizer is None
            or known.redirect_uri == self.authorizer.redirect_uri
        ):
            return known
        if known is not None:  # registered for another redirect URI (a loopback port now taken)
            log.info("registering again at %s: the redirect URI changed", server.issuer)
        if self.client_metadata_url is not None and server.client_id_metadata_documents:
            credentials = ClientCredentials(self.client_metadata_url)
        elif server.registration_endpoint is not None:
            credentials = await self._register(server, server.registration_endpoint)
        else:
            raise AuthorizationError(
                f"{server.issuer} takes no registration and this client has no client id for it: "
                "register the client there and pass its client id (and secret)"
            )
        self._clients[server.issuer] = credentials
        return credentials

    async def _register(self, server: AuthorizationServer, endpoint: str) -> ClientCredentials:
        assert self.authorizer is not None  # client credentials always come with a client id
        body = tokens_at.registration_request(
            server,
            client_name=self.client_name,
            redirect_uri=self.authorizer.redirect_uri,
            application_type=self.application_type,
            refresh=self.refresh,
        )
        status, answer = await self._post(endpoint, json=body)
        if status not in (200, 201):
            error = answer.get("error") if isinstance(answer, Mapping) else None
            raise AuthorizationError(
                f"{server.issuer} refused to register this client (HTTP {status}"
                + (f", {error}" if isinstance(error, str) else "")
                + ")"
            )
        return replace(tokens_at.read_registration(answer, server), redirect_uri=body["redirect_uris"][0])

    async def _authorize(
        self,
        authorizer: Authorizer,
        server: AuthorizationServer,
        credentials: ClientCredentials,
        scope: str | None,
        resource: str,
    ) -> Tokens:
        pkce = oauth.Pkce.new()
        state = secrets.token_urlsafe(32)
        redirect_uri = authorizer.redirect_uri
        url = oauth.authorization_url(
            server,
            client_id=credentials.client_id,
            redirect_uri=redirect_uri,
            state=state,
            pkce=pkce,
            scope=scope,
            resource=resource,
        )
        with person_at_work():  # not network time: the request's timeout does not run
            callback = await authorizer.authorize(url, issuer=server.issuer)
        code = oauth.read_callback(callback, state=state, server=server)
        fields = {"code": code, "redirect_uri": redirect_uri, "code_verifier": pkce.verifier}
        return await self._token(server, credentials, "authorization_code", fields, resource)

    async def _refresh(self, server: AuthorizationServer) -> Tokens:
        tokens = self._tokens
        credentials = self._known_credentials(server)
        if tokens is None or tokens.refresh_token is None or credentials is None:
            raise AuthorizationError("no refresh token, or no client to use it")
        fields = {"refresh_token": tokens.refresh_token}
        fresh = await self._token(server, credentials, "refresh_token", fields, self._resource)
        if fresh.refresh_token is None:  # the server keeps the old one valid
            fresh = Tokens(fresh.access_token, tokens.refresh_token, fresh.expires_at, fresh.scope)
        self._tokens = fresh
        await self._save()
        return fresh

    async def _token(
        self,
        server: AuthorizationServer,
        credentials: ClientCredentials,
        grant: str,
        fields: Mapping[str, str],
        resource: str,
    ) -> Tokens:
        headers, form = tokens_at.token_request(grant, credentials, resource=resource, fields=fields)
        status, answer = await self._post(server.token_endpoint, data=form, headers=headers)
        return tokens_at.read_tokens(status, answer, server, now=self._clock())

    # ---- HTTP ----------------------------------------------------------------------------

    async def _get_json(self, url: str) -> object | None:
        """The JSON document at ``url``; None when there is none (4xx, or not JSON)."""
        try:
            async with self._http.stream("GET", url, headers={"Accept": "application/json"}) as response:
                body = await _read_capped(response, url)
                status = response.status_code
        except httpx.HTTPError as exc:
            raise AuthorizationError(f"could not fetch {url} ({type(exc).__name__}: {exc})") from None
        if status != 200:
            if status >= 500:
                raise AuthorizationError(f"{url} answered HTTP {status}")
            return None
        try:
            document: object = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        return document

    async def _post(self, url: str, **options: Any) -> tuple[int, object]:
        try:
            async with self._http.stream("POST", url, **options) as response:
                body = await _read_capped(response, url)
                status = response.status_code
        except httpx.HTTPError as exc:
            raise AuthorizationError(f"could not reach {url} ({type(exc).__name__})") from None
        try:
            return status, orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            return status, None


async def _read_capped(response: httpx.Response, url: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_DOCUMENT:
            raise AuthorizationError(f"{url} answered more than {MAX_DOCUMENT // 1024} KiB")
        chunks.append(chunk)
    return b"".join(chunks)
