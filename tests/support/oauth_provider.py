"""A small but real OAuth 2.1 authorization server for tests, built with authlib and
served by Starlette (authlib has no Starlette server integration: the glue is here).

* ``GET /authorize``: authorization code grant; PKCE with S256 is required (checked by
  authlib's ``CodeChallenge`` at the token endpoint). There is no login page: the "user"
  (``provider.user``) consents, or denies when ``provider.consent`` is False.
* ``POST /token``: ``authorization_code`` and ``refresh_token`` (rotating: the old refresh
  token and its access token are revoked), client authentication with HTTP Basic.
  ``provider.lifetime`` is the access tokens' lifetime in seconds; ``provider.refuse_refresh``
  makes every refresh fail with ``invalid_grant``. ``register(..., writes_scope=...)``
  makes the token answers write their ``scope`` so (as a real provider writes the scopes
  it granted in its own names: Google's URLs, Microsoft's without ``offline_access``).
* ``POST /revoke``: token revocation (RFC 7009, authlib's ``RevocationEndpoint``, client
  authentication with HTTP Basic): revoking a refresh token revokes its access token too.
  Every request is recorded in ``provider.revocations`` (``Revocation``: the token, its
  hint, whether the client authenticated) before it is answered; ``revoke_status`` set
  answers it so instead (and revokes nothing); ``revoke_hangs`` holds it until
  ``release`` is set (at most 60 s); ``revoked_is_invalid`` answers a token already
  revoked (as an access token is once its refresh token was) 400 ``invalid_token``, as
  Google's endpoint does, where RFC 7009 says 200.
* ``GET /api/me``: a protected API. A live Bearer token (issued here, not expired, not
  revoked) gets ``{"user": ..., "scope": ...}``; anything else 401.
* Everything secret it hands out (codes, access and refresh tokens) is kept in
  ``provider.issued``, so a test can look for them where they must never be.

Run it with ``support.procs.uvicorn_server(provider.app)`` (127.0.0.1, stopped after).
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import time
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from authlib.common.security import generate_token  # type: ignore[import-untyped]
from authlib.oauth2 import OAuth2Error  # type: ignore[import-untyped]
from authlib.oauth2.rfc6749 import (  # type: ignore[import-untyped]
    AuthorizationCodeMixin,
    AuthorizationServer,
    ClientMixin,
    OAuth2Payload,
    OAuth2Request,
    TokenMixin,
    grants,
)
from authlib.oauth2.rfc6750 import BearerTokenGenerator  # type: ignore[import-untyped]
from authlib.oauth2.rfc7009 import RevocationEndpoint  # type: ignore[import-untyped]
from authlib.oauth2.rfc7636 import CodeChallenge  # type: ignore[import-untyped]
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

CLIENT_ID = "mcp-elicit-test-client"
CLIENT_SECRET = "test-client-secret-9f3a"


# ---- the models (in memory) ---------------------------------------------------------------


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str
    redirect_uris: list[str]
    scope: str

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return self.scope
        allowed = set(self.scope.split())
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Exact, except that a loopback IP redirect URI matches on any port (RFC 8252 §7.3:
        a native app listens on whatever port is free when it asks)."""
        if redirect_uri in self.redirect_uris:
            return True

        def loopback(uri: str) -> tuple[str, str, str] | None:
            parts = urllib.parse.urlsplit(uri)
            if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "::1") or parts.fragment:
                return None
            return parts.hostname, parts.path, parts.query

        given = loopback(redirect_uri)
        return given is not None and any(loopback(uri) == given for uri in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        return hmac.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic" if endpoint == "token" else True

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


@dataclass
class AuthorizationCode(AuthorizationCodeMixin):  # type: ignore[misc]
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Token(TokenMixin):  # type: ignore[misc]
    access_token: str
    refresh_token: str | None
    client_id: str
    scope: str
    user: str
    expires_at: float
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return self.client_id == client.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return int(self.expires_at - time.time())

    def is_expired(self) -> bool:
        return self.expires_at <= time.time()

    def is_revoked(self) -> bool:
        return self.revoked


# ---- authlib glue: requests in, Starlette responses out -----------------------------------


class _Payload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._data: dict[str, str] = {}
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in pairs:
            self._data.setdefault(key, value)
            self._datalist[key].append(value)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class _Request(OAuth2Request):  # type: ignore[misc]
    """An ``OAuth2Request`` made from a Starlette request whose body was already read."""

    def __init__(self, request: Request, form: list[tuple[str, str]]) -> None:
        super().__init__(request.method, str(request.url), headers=request.headers)
        query = list(request.query_params.multi_items())
        self._args = dict(query)
        self._form = dict(form)
        self.payload = _Payload(query + form)

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _Server(AuthorizationServer):  # type: ignore[misc]
    def __init__(self, provider: OAuthTestProvider) -> None:
        super().__init__(
            scopes_supported=["profile", "repo", "email", "openid", "offline_access", "User.Read", "mail"]
        )
        self.provider = provider
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                lambda **_: provider.issue(generate_token(40)),
                lambda **_: provider.issue(generate_token(48)),
                lambda _client, _grant_type: provider.lifetime,
            ),
        )
        self.register_grant(_CodeGrant, [CodeChallenge(required=True)])
        self.register_grant(_RefreshGrant)
        self.register_endpoint(_Revocation)

    def query_client(self, client_id: str) -> Client | None:
        return self.provider.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: _Request) -> None:
        record = Token(
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            client_id=request.client.client_id,
            scope=token.get("scope", ""),
            user=request.user,
            expires_at=time.time() + token.get("expires_in", 3600),
        )
        self.provider.tokens[record.access_token] = record
        if record.refresh_token:
            self.provider.by_refresh[record.refresh_token] = record

    def create_oauth2_request(self, request: _Request) -> _Request:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Response:
        content = json.dumps(body) if isinstance(body, dict) else (body or "")
        return Response(content, status_code=status, headers=dict(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None


class _CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]  # noqa: RUF012

    @property
    def provider(self) -> OAuthTestProvider:
        return self.server.provider  # type: ignore[no-any-return]

    def save_authorization_code(self, code: str, request: _Request) -> None:
        self.provider.issue(code)
        self.provider.codes[code] = AuthorizationCode(
            code=code,
            client_id=request.client.client_id,
            redirect_uri=request.payload.redirect_uri,
            scope=request.scope or "",
            user=request.user,
            code_challenge=request.payload.data.get("code_challenge"),
            code_challenge_method=request.payload.data.get("code_challenge_method"),
            expires_at=time.time() + 300,
        )

    def query_authorization_code(self, code: str, client: Client) -> AuthorizationCode | None:
        item = self.provider.codes.get(code)
        if item is not None and item.client_id == client.client_id and item.expires_at > time.time():
            return item
        return None

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        self.provider.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: AuthorizationCode) -> str:
        self.provider.exchanges += 1
        return authorization_code.user


class _RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]  # noqa: RUF012
    INCLUDE_NEW_REFRESH_TOKEN = True

    @property
    def provider(self) -> OAuthTestProvider:
        return self.server.provider  # type: ignore[no-any-return]

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        token = self.provider.by_refresh.get(refresh_token)
        if token is None or token.revoked or self.provider.refuse_refresh:
            return None
        return token

    def authenticate_user(self, refresh_token: Token) -> str:
        self.provider.refreshes += 1
        return refresh_token.user

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.revoked = True


class _Revocation(RevocationEndpoint):  # type: ignore[misc]
    @property
    def provider(self) -> OAuthTestProvider:
        return self.server.provider  # type: ignore[no-any-return]

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        if token_type_hint != "refresh_token" and token_string in self.provider.tokens:
            return self.provider.tokens[token_string]
        return self.provider.by_refresh.get(token_string)

    def revoke_token(self, token: Token, request: _Request) -> None:
        token.revoked = True


@dataclass(frozen=True)
class Revocation:
    """One request to ``/revoke``: the token, its ``token_type_hint``, and the client id its
    HTTP Basic credentials named (None without them)."""

    token: str
    hint: str | None
    client: str | None


# ---- the provider -------------------------------------------------------------------------


@dataclass
class OAuthTestProvider:
    """The authorization server and its protected API; switches and records for tests."""

    user: str = "octocat"
    consent: bool = True
    lifetime: int = 3600
    refuse_refresh: bool = False
    base: str = ""
    clients: dict[str, Client] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    tokens: dict[str, Token] = field(default_factory=dict)
    by_refresh: dict[str, Token] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)
    writes_scope: str | None = None
    exchanges: int = 0
    refreshes: int = 0
    api_calls: int = 0
    revocations: list[Revocation] = field(default_factory=list)
    revoke_status: int | None = None
    revoke_hangs: bool = False
    revoked_is_invalid: bool = False
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.server = _Server(self)
        self.app = Starlette(
            routes=[
                Route("/authorize", self._authorize, methods=["GET"]),
                Route("/token", self._token, methods=["POST"]),
                Route("/revoke", self._revoke, methods=["POST"]),
                Route("/api/me", self._me, methods=["GET"]),
            ]
        )

    def register(
        self, redirect_uri: str, *, scope: str = "profile repo", writes_scope: str | None = None
    ) -> None:
        """The client may be granted ``scope``; the token answers say ``writes_scope`` as
        the scope granted when it is set (else what was granted, as authlib writes it)."""
        self.clients[CLIENT_ID] = Client(CLIENT_ID, CLIENT_SECRET, [redirect_uri], scope)
        self.writes_scope = writes_scope

    def issue(self, secret: str) -> str:
        self.issued.append(secret)
        return secret

    def expire_all(self) -> None:
        for token in self.tokens.values():
            token.expires_at = min(token.expires_at, time.time() - 1)

    async def _authorize(self, request: Request) -> Response:
        req = _Request(request, [])
        try:
            grant = self.server.get_consent_grant(req, end_user=self.user)
        except OAuth2Error as exc:
            return PlainTextResponse(f"bad authorization request: {exc.error}", status_code=400)
        if req.payload.data.get("code_challenge_method") != "S256":
            return PlainTextResponse("PKCE with S256 is required", status_code=400)
        user = self.user if self.consent else None
        response: Response = self.server.create_authorization_response(req, grant_user=user, grant=grant)
        return response

    async def _token(self, request: Request) -> Response:
        pairs = urllib.parse.parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True)
        response: Response = self.server.create_token_response(_Request(request, pairs))
        if self.writes_scope is None or response.status_code != 200:
            return response
        answer = json.loads(bytes(response.body))
        answer["scope"] = self.writes_scope
        return JSONResponse(answer, headers={"cache-control": "no-store", "pragma": "no-cache"})

    async def _revoke(self, request: Request) -> Response:
        pairs = urllib.parse.parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True)
        form = dict(pairs)
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        client = None
        if scheme.lower() == "basic":
            client = base64.b64decode(value).decode("utf-8", "replace").partition(":")[0]
        self.revocations.append(Revocation(form.get("token", ""), form.get("token_type_hint"), client))
        if self.revoke_hangs:
            async with asyncio.timeout(60):
                await self.release.wait()
        if self.revoke_status is not None:
            return JSONResponse({"error": "server_error"}, status_code=self.revoke_status)
        if self.revoked_is_invalid and self.revoked(form.get("token", "")):
            said = {"error": "invalid_token", "error_description": "Token expired or revoked"}
            return JSONResponse(said, status_code=400)
        response: Response = self.server.create_endpoint_response("revocation", _Request(request, pairs))
        return response

    def revoked(self, token: str) -> bool:
        """Whether ``token`` (an access or refresh token issued here) was revoked."""
        found = self.tokens.get(token) or self.by_refresh.get(token)
        return found is not None and found.revoked

    async def _me(self, request: Request) -> Response:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        token = self.tokens.get(value.strip()) if scheme.lower() == "bearer" else None
        if token is None or token.is_revoked() or token.is_expired():
            return JSONResponse({"error": "invalid_token"}, status_code=401)
        self.api_calls += 1
        return JSONResponse({"user": token.user, "scope": token.scope})
