"""The base of the client's OAuth flow (``transports.http_auth``) that gets tokens: the
grant a client uses, its requests to a token endpoint, and the flow's own HTTP client.

Rules:

* The grant: a workload's JWT or an ID-JAG (``assertion``) is the JWT-bearer grant, at an
  authorization server that takes it (client credentials go along when given); without a
  person (no ``Authorizer``) the client's own credentials are the ``client_credentials``
  grant; otherwise the person signs in (authorization code, PKCE, ``state`` checked) and
  the time they take is not network time.
* A token request carries a DPoP proof where the authorization server offers ES256 (or the
  resource takes DPoP-bound tokens only), always with ``dpop=True``, never with
  ``dpop=False``. A ``use_dpop_nonce`` answer with a new nonce is retried once with it (a
  ``private_key_jwt`` assertion is signed again: it is used once). With ``dpop=True`` a
  Bearer token is refused.
* The flow's own requests (metadata, registration, token) go out on an HTTP client of
  their own that never follows redirects (``transports.http_documents`` caps what is read).
  For an MCP server elsewhere (``core.authorization_urls.far_server``) that client connects
  through ``transports.http_pinned``: every host but the server's own must resolve away from
  this machine and private networks, and is connected to at the address checked. A URL
  the MCP requests' HTTP client sends through a proxy (``route_like``:
  ``transports.http_proxy_client``) goes through it instead: the client's own transport for
  it (``proxy=``, ``mounts=``), or the environment's proxy when the client trusts the
  environment (``transports.http_proxy``); the proxy resolves, and is trusted. A resolver
  given (``OAuth(resolver=)``) is used for a server at home too (unchecked; a proxy still
  taken); without one, such a server's flow connects as httpx does. A transport given
  (``OAuth(transport=)``) is used as it is.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import httpx

from mcp_elicit.client.transport import person_at_work
from mcp_elicit.core import authorization as oauth
from mcp_elicit.core import token_endpoint as tokens_at
from mcp_elicit.core.authorization import AuthorizationServer
from mcp_elicit.core.authorization_urls import resolution_refusal
from mcp_elicit.core.dpop import ALGORITHM
from mcp_elicit.core.token_endpoint import ClientCredentials, Tokens
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth_redacted import RedactedAuth
from mcp_elicit.transports.http_documents import post
from mcp_elicit.transports.http_dpop import DpopProver
from mcp_elicit.transports.http_grants import AssertionSource, Audience, assertion_for
from mcp_elicit.transports.http_pinned import PinnedBackend, PinnedTransport, Resolver, system_resolver
from mcp_elicit.transports.http_proxy import RoutedTransport
from mcp_elicit.transports.http_proxy_client import ClientRoutes
from mcp_elicit.transports.http_registration import ClientIdentity

__all__ = ["Authorizer", "TokenGrants"]


class Authorizer(Protocol):
    """The person's part of the authorization code flow."""

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the person back: https, or http to this machine."""
        ...

    async def authorize(self, url: str, *, issuer: str) -> str:
        """Have the person open ``url`` (at ``issuer``); return the redirect URL they came
        back with (its query holds ``code``, ``state``, maybe ``iss``)."""
        ...


class TokenGrants(RedactedAuth):
    """Getting tokens for ``OAuth`` (which sets what is declared here); see the module rules."""

    authorizer: Authorizer | None
    assertion: AssertionSource | None
    dpop: bool | None
    identity: ClientIdentity
    _prover: DpopProver
    _clock: Callable[[], float]
    _timeout: float
    _transport: httpx.AsyncBaseTransport | None
    _resolver: Resolver | None
    _routes: ClientRoutes | None  # the MCP client's ways out (None: not told; the environment's)
    _client: httpx.AsyncClient | None
    _far: str | None  # the MCP server elsewhere whose sign-in is guarded (None: at home)
    _dpop_required: bool  # the resource takes DPoP-bound tokens only

    @property
    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            transport = self._transport
            if transport is None:
                direct: httpx.AsyncBaseTransport
                if self._far is not None or self._resolver is not None:
                    direct = PinnedTransport(PinnedBackend(self._refusal, self._resolver or system_resolver))
                else:
                    direct = httpx.AsyncHTTPTransport()  # as httpx's client connects
                routes = self._ways_out()
                transport = RoutedTransport(routes, direct) if routes else direct  # as the MCP requests go
            self._client = httpx.AsyncClient(
                timeout=self._timeout, follow_redirects=False, transport=transport
            )
        return self._client

    def _ways_out(self) -> ClientRoutes:
        """Where the MCP client's HTTP client sends each URL (``route_like``); before it is
        known, the environment's proxies, read now."""
        return self._routes if self._routes is not None else ClientRoutes.of(None)

    async def route_like(self, client: httpx.AsyncClient | None) -> None:
        """Send the flow's own requests (metadata, registration, token) where ``client``
        sends the MCP requests: through its proxy (``proxy=``, ``mounts=``: its own
        transport, the proxy resolving the names), through the environment's when it
        trusts the environment (``trust_env``), else directly, each name then checked as
        it is connected to (``transports.http_proxy_client``). The MCP transports call it
        with the client they use (None: one of httpx's defaults, which takes the
        environment's proxies); an ``OAuth`` on a client of one's own may call it too. A
        ``transport`` given to the ``OAuth`` is used as it is all the same."""
        routes = ClientRoutes.of(client)
        if self._routes is None or not routes.same(self._routes):
            await self.aclose()  # a connection pooled one way is not reused another
            self._routes = routes

    def _refusal(self, host: str, addresses: Sequence[str]) -> str | None:
        far = self._far
        return None if far is None else resolution_refusal(host, addresses, server_url=far)

    async def _guard(self, far: str | None) -> None:
        """Connect the flow's requests as the MCP server's place asks: ``far``, the server's
        URL when it is elsewhere, else None. A change closes the client: a connection
        pooled under one rule is not reused under the other."""
        if far != self._far:
            await self.aclose()
            self._far = far

    async def aclose(self) -> None:
        """Close the HTTP client of the flow's own requests (tokens are kept)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _grant(self, server: AuthorizationServer, resource: str, scope: str | None) -> Tokens:
        """New tokens from ``server`` for ``resource``, by the grant this client uses."""
        if self.assertion is not None:  # a workload's JWT or an ID-JAG is the grant
            if server.grant_types is not None and tokens_at.JWT_BEARER_GRANT not in server.grant_types:
                raise AuthorizationError(
                    f"{server.issuer} does not take the JWT-bearer grant (grant_types_supported)"
                )
            audience = Audience(server.issuer, server.token_endpoint, resource, scope)
            fields = {
                "assertion": await assertion_for(self.assertion, audience),
                **({"scope": scope} if scope else {}),
            }
            credentials = await self._credentials(server) if self.identity.client_id is not None else None
            return await self._token(server, credentials, tokens_at.JWT_BEARER_GRANT, fields, resource)
        credentials = await self._credentials(server)
        if self.authorizer is None:
            fields = {"scope": scope} if scope else {}
            return await self._token(server, credentials, "client_credentials", fields, resource)
        return await self._authorize(self.authorizer, server, credentials, scope, resource)

    async def _credentials(self, server: AuthorizationServer) -> ClientCredentials:
        redirect_uri = self.authorizer.redirect_uri if self.authorizer is not None else None
        return await self.identity.credentials(self._http, server, redirect_uri)

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

    async def _token(
        self,
        server: AuthorizationServer,
        credentials: ClientCredentials | None,
        grant: str,
        fields: Mapping[str, str],
        resource: str,
    ) -> Tokens:
        offered = server.dpop_algorithms is not None and ALGORITHM in server.dpop_algorithms
        dpop = self.dpop is True or (self.dpop is None and (offered or self._dpop_required))
        url = server.token_endpoint
        for attempt in (1, 2):
            headers, form = tokens_at.token_request(grant, credentials, resource=resource, fields=fields)
            if dpop:
                headers["DPoP"] = self._prover.proof("POST", url)
            status, answer, answer_headers = await post(self._http, url, data=form, headers=headers)
            new_nonce = dpop and self._prover.heard(url, answer_headers)
            error = answer.get("error") if isinstance(answer, Mapping) else None
            if not (attempt == 1 and new_nonce and status == 400 and error == "use_dpop_nonce"):
                break
            if credentials is not None and credentials.auth_method == "private_key_jwt":  # used once
                credentials = self.identity.known(server) or credentials
        tokens = tokens_at.read_tokens(status, answer, server, now=self._clock(), dpop=dpop)
        if self.dpop is True and tokens.token_type != "DPoP":
            raise AuthorizationError(
                f"the token endpoint of {server.issuer} gave a Bearer token where DPoP was required "
                "(dpop=True)"
            )
        return tokens
