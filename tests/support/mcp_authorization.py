"""An MCP server behind OAuth, for the client's authorization tests: one Starlette app on
one origin that is both

* the authorization server: the authlib provider of ``support.oauth_provider`` (PKCE S256
  required, Basic client authentication, rotating refresh tokens), plus what an MCP client
  discovers and uses: RFC 8414 metadata at ``/.well-known/oauth-authorization-server`` and
  dynamic client registration (RFC 7591) at ``/register``;
* the protected resource: an mcp-elicit ``StreamableHTTP`` at ``/mcp`` whose bearer tokens
  are the provider's live access tokens; it publishes its RFC 9728 metadata itself
  (``ResourceMetadata``) at ``/.well-known/oauth-protected-resource/mcp``.

``serving(server)`` runs one on a free 127.0.0.1 port; ``whoami_server(text)`` is the
protected server the tests use (``bound_server()``, the one that shows the DPoP key its
token is bound to); ``FollowRedirect`` is the person's part without a person.

Switches for tests: ``mcp.resource_metadata = None`` (no resource metadata: a 2025-03-26
server), ``server_metadata`` (False: no authorization server metadata either), ``registration``
(False: no registration endpoint; ``registration_refusal``: its 400 answer), ``pkce`` (False: metadata without
``code_challenge_methods_supported``), ``dpop`` (True: DPoP offered, and tokens asked for
with a proof are bound to its key, ``support.dpop_tokens``; ``dpop_tokens.nonce`` asks for a
nonce), ``workload.enabled`` (False: no JWT-bearer grant for workloads,
``support.workload_grant``; ``idp`` is the company identity provider of enterprise-managed
authorization, ``support.enterprise_idp``), and the provider's own (``consent``, ``lifetime``, ``refuse_refresh``).
``registrations`` counts registrations.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from mcp_elicit import Context, Server
from mcp_elicit.server.auth import CallableVerifier, Principal, ResourceMetadata
from mcp_elicit.transports.http_server import StreamableHTTP

from support.dpop_tokens import DpopTokens
from support.enterprise_idp import EnterpriseIdpServer
from support.oauth_provider import Client, OAuthTestProvider
from support.procs import uvicorn_server
from support.proxy import stripping
from support.workload_grant import GRANT, WorkloadGrant

SCOPES = "profile repo"


@dataclass
class McpAuthorization:
    """See the module docstring. Serve ``.app``; set ``.base`` to its origin first."""

    server: Server
    provider: OAuthTestProvider = field(default_factory=OAuthTestProvider)
    registration: bool = True
    registration_refusal: dict[str, Any] | None = None  # answered with 400 instead of a client
    pkce: bool = True
    server_metadata: bool = True
    registrations: int = 0
    mount: str = ""  # "/tools": the endpoint is mounted there in a Starlette app (Mount)
    strip: str = ""  # "/app": reached there through a proxy that strips it; the public URL says so
    allowed_hosts: tuple[str, ...] | None = None  # the endpoint's Host allow-list (None: loopback)

    def __post_init__(self) -> None:
        self.dpop_tokens = DpopTokens(self.provider.app)
        self.workload = WorkloadGrant(self.dpop_tokens, self.provider)
        self.idp = EnterpriseIdpServer(self.workload.key)
        site = Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self._server_metadata),
                Route("/register", self._register, methods=["POST"]),
                Route("/token", self.workload, methods=["POST"]),
                Route("/idp/token", self.idp.token, methods=["POST"]),
                Mount("/", self.provider.app),
            ]
        )
        self.mcp = StreamableHTTP(
            self.server, auth=CallableVerifier(self._verify), fallback=site, allowed_hosts=self.allowed_hosts
        )
        self.app: Any = self.mcp
        if self.mount:
            self.app = Starlette(routes=[Mount(self.mount, app=self.mcp), Mount("/", app=site)])
        elif self.strip:
            proxied = stripping(self.strip, self.mcp)

            async def app(scope: Any, receive: Any, send: Any) -> None:
                to_mcp = scope["type"] == "http" and scope["path"].startswith(self.strip + "/")
                await (proxied if to_mcp else site)(scope, receive, send)

            self.app = app

    @property
    def base(self) -> str:
        return self.provider.base

    @base.setter
    def base(self, value: str) -> None:
        self.provider.base = value
        self.dpop_tokens.token_url = self.workload.token_url = f"{value}/token"
        self.mcp.resource_metadata = ResourceMetadata([value], scopes_supported=SCOPES.split())

    @property
    def url(self) -> str:
        return f"{self.base}{self.mount or self.strip}/mcp"

    async def _verify(self, token: str) -> Principal | None:
        record = self.provider.tokens.get(token)
        if record is None or record.is_revoked() or record.is_expired():
            return None
        bound = self.dpop_tokens.bound.get(token)
        claims = {"cnf": {"jkt": bound}} if bound else {}
        return Principal(subject=record.user, scopes=frozenset(record.scope.split()), claims=claims)

    @property
    def dpop(self) -> bool:
        return self.dpop_tokens.enabled

    @dpop.setter
    def dpop(self, value: bool) -> None:
        self.dpop_tokens.enabled = value

    async def _server_metadata(self, request: Request) -> Response:
        if not self.server_metadata:
            return JSONResponse({"error": "not_found"}, status_code=404)
        document: dict[str, Any] = {
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": SCOPES.split(),
        }
        if self.pkce:
            document["code_challenge_methods_supported"] = ["S256"]
        if self.registration:
            document["registration_endpoint"] = f"{self.base}/register"
        if self.dpop:
            document["dpop_signing_alg_values_supported"] = ["ES256"]
        if self.workload.enabled:
            document["grant_types_supported"].append(GRANT)
        return JSONResponse(document)

    async def _register(self, request: Request) -> Response:
        if not self.registration:
            return JSONResponse({"error": "not_found"}, status_code=404)
        if self.registration_refusal is not None:
            return JSONResponse(self.registration_refusal, status_code=400)
        body = await request.json()
        redirect_uris = body.get("redirect_uris")
        if not isinstance(redirect_uris, list) or not redirect_uris:
            return JSONResponse({"error": "invalid_redirect_uri"}, status_code=400)
        self.registrations += 1
        client_id = f"client-{self.registrations}"
        secret = self.provider.issue(secrets.token_urlsafe(24))
        self.provider.clients[client_id] = Client(client_id, secret, list(redirect_uris), SCOPES)
        return JSONResponse(
            {
                "client_id": client_id,
                "client_secret": secret,
                "token_endpoint_auth_method": "client_secret_basic",
                "redirect_uris": redirect_uris,
            },
            status_code=201,
        )


def whoami_server(text: str = "hello", name: str = "protected") -> Server:
    """A server with one tool, ``whoami``, that answers ``text``."""
    app = Server(name)

    @app.tool()
    async def whoami(ctx: Context) -> str:
        return text

    return app


def bound_server() -> Server:
    """One tool, ``whoami``: the caller's subject and the thumbprint its token is bound to."""
    app = Server("bound")

    @app.tool()
    async def whoami(ctx: Context) -> str:
        assert ctx.principal is not None
        return f"{ctx.principal.subject} {ctx.principal.dpop_thumbprint}"

    return app


@contextlib.asynccontextmanager
async def serving(server: Server, mount: str = "", strip: str = "") -> AsyncIterator[McpAuthorization]:
    """``server`` behind the authorization server, on a free 127.0.0.1 port, until the
    block ends; with ``mount``, the endpoint is mounted under that path; with ``strip``,
    reached under that path through a proxy that strips it (its public URL set)."""
    site = McpAuthorization(server, mount=mount, strip=strip)
    async with uvicorn_server(site.app) as running:
        site.base = f"http://127.0.0.1:{running.port}"
        if strip:
            server.configure_url_mode(public_url=site.base + strip)
        yield site


class FollowRedirect:
    """The person's part without a person: the test provider approves at once, so the
    authorization URL answers with the redirect. ``asked`` lists the issuers asked."""

    redirect_uri = "http://127.0.0.1:9/callback"

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def authorize(self, url: str, *, issuer: str) -> str:
        self.asked.append(issuer)
        async with httpx.AsyncClient(follow_redirects=False) as http:
            response = await http.get(url)
        assert response.is_redirect, response.text
        return str(response.headers["location"])
