"""MCP authorization, client side: the decisions of the OAuth 2.1 flow a client runs when an
MCP server over HTTP answers 401 (or 403 ``insufficient_scope``). No I/O: documents and
header values in, URLs, request bodies and verdicts out; ``transports/http_auth.py`` sends
the requests.

The flow (MCP authorization, 2025-11-25 and 2026-07-28):

1. The server's ``WWW-Authenticate: Bearer`` challenge may name ``resource_metadata`` and
   ``scope``. Protected resource metadata (RFC 9728) comes from that URL, else from the
   well-known URL with the server's path, then without it.
2. Its ``resource`` must be the server's own URL or a parent of it (same origin, path on a
   segment boundary): a server cannot send the client to get tokens for another resource.
   It has no fragment, as no RFC 8707 resource indicator has.
3. Authorization server metadata (RFC 8414, then OpenID discovery) from the issuer's
   well-known URLs in the spec's order; its ``issuer`` must equal, character for character,
   the issuer the URL was built from, and it must offer PKCE S256 (absent means no PKCE:
   refuse).
4. The client identifies itself with, in order: pre-registered credentials, a client ID
   metadata document URL (when the server supports them), dynamic registration (RFC 7591,
   with ``application_type``). Credentials belong to one issuer and are never shown to
   another.
5. Authorization code with PKCE S256, ``state`` and the RFC 8707 ``resource``; the
   callback's ``state`` must match, its ``iss`` (RFC 9207) equal the issuer when present
   (and be present when the server says it sends it); its ``error`` and
   ``error_description`` are quoted as printable ASCII only, cut short.
6. Scope: the challenge's ``scope``, else every ``scopes_supported`` of the resource, else
   none; authorizing again at the same server (after a 401, or a 403 ``insufficient_scope``),
   the union of what was asked before and the challenge. ``offline_access`` is added only
   when the authorization server lists it and the client wants refresh tokens.

A server of the 2025-03-26 revision publishes no protected resource metadata: when none is
found and the challenge named none, its origin (the URL without its path) is its
authorization server, whose metadata is at the origin's well-known URLs or, when there is
none, whose endpoints are the origin's ``/authorize``, ``/token`` and ``/register``
(:func:`legacy_resource`, :func:`default_endpoints`).

Where the documents are looked for, which URLs may be used, and which servers the client
does not sign in to (plain http off this machine): :mod:`mcp_elicit.core.authorization_urls`.
Who the client is at an authorization server, and what it says to its token endpoint:
:mod:`mcp_elicit.core.token_endpoint`; the ``WWW-Authenticate`` parser:
:mod:`mcp_elicit.core.authorization_challenge`.

Rules: every value read from the network is checked before use, and every refusal is an
:class:`AuthorizationError` naming what was wrong and where; no message ever carries a
token, a code, a verifier or a client secret.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.core.authorization_challenge import Challenge, bearer_challenge, token_challenges
from mcp_elicit.core.authorization_urls import check_resource, quoted_value, require_secure, split_url
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.url_redaction import redact_urls

__all__ = [
    "AuthorizationServer",
    "Challenge",
    "Pkce",
    "ProtectedResource",
    "authorization_url",
    "bearer_challenge",
    "default_endpoints",
    "legacy_resource",
    "token_challenges",
    "string_field",
    "read_authorization_server",
    "read_callback",
    "read_protected_resource",
    "select_scope",
]

OFFLINE_ACCESS: Final = "offline_access"


# ---- documents -------------------------------------------------------------------------


def _strings(value: object, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AuthorizationError(f"{what} is not a list of strings")
    return tuple(value)


def string_field(document: Mapping[str, Any], key: str, where: str) -> str:
    value = document.get(key)
    if not isinstance(value, str) or not value:
        raise AuthorizationError(f"{where} has no {key}")
    return value


@dataclass(frozen=True)
class ProtectedResource:
    """What a server's protected resource metadata (RFC 9728) says, once checked."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    #: ``dpop_bound_access_tokens_required`` (RFC 9728): only DPoP-bound tokens are taken.
    dpop_required: bool = False
    #: Not published but implied: a 2025-03-26 server, whose origin authorizes.
    legacy: bool = False


def read_protected_resource(document: object, server_url: str, where: str) -> ProtectedResource:
    """Check a protected resource metadata document fetched from ``where``."""
    what = f"the protected resource metadata at {where}"
    if not isinstance(document, Mapping):
        raise AuthorizationError(f"{what} is not a JSON object")
    resource = string_field(document, "resource", what)
    if "#" in resource:  # RFC 8707 section 2: the resource parameter has no fragment
        raise AuthorizationError(
            f"the resource {quoted_value(resource)} in {what} has a fragment, which no resource indicator "
            "may have (RFC 8707): refusing to ask for tokens for it"
        )
    check_resource(server_url, resource)
    servers = _strings(document.get("authorization_servers"), f"authorization_servers in {what}")
    if not servers:
        raise AuthorizationError(f"{what} names no authorization server")
    for server in servers:
        require_secure(server, f"the authorization server in {what}", named_by=server_url)
    scopes = _strings(document.get("scopes_supported"), f"scopes_supported in {what}")
    return ProtectedResource(
        resource, servers, scopes, document.get("dpop_bound_access_tokens_required") is True
    )


@dataclass(frozen=True)
class AuthorizationServer:
    """An authorization server's metadata (RFC 8414 / OpenID discovery), once checked."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods: tuple[str, ...] = ("client_secret_basic",)
    iss_parameter_supported: bool = False
    client_id_metadata_documents: bool = False
    #: ``dpop_signing_alg_values_supported`` (RFC 9449 §5.1): None when DPoP is not offered.
    dpop_algorithms: tuple[str, ...] | None = None
    #: ``grant_types_supported`` (None: not said).
    grant_types: tuple[str, ...] | None = None


def legacy_resource(server_url: str) -> ProtectedResource:
    """What a 2025-03-26 server without protected resource metadata implies: the server is
    the resource, and its origin the one authorization server."""
    parts = split_url(server_url, "the MCP server URL")
    origin = require_secure(f"{parts.scheme}://{parts.netloc}", "the authorization base URL")
    return ProtectedResource(server_url, (origin,), legacy=True)


def default_endpoints(issuer: str) -> AuthorizationServer:
    """The 2025-03-26 default endpoints of an authorization base URL that publishes no
    metadata. PKCE S256 is assumed: that revision requires it of every server."""
    base = require_secure(issuer.rstrip("/"), "the authorization base URL")
    return AuthorizationServer(
        issuer=issuer,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
    )


def read_authorization_server(document: object, issuer: str, where: str) -> AuthorizationServer:
    """Check the metadata fetched from ``where`` for ``issuer``."""
    what = f"the authorization server metadata at {where}"
    if not isinstance(document, Mapping):
        raise AuthorizationError(f"{what} is not a JSON object")
    stated = document.get("issuer")
    if stated != issuer:
        raise AuthorizationError(
            f"{what} is for issuer {quoted_value(stated)}, not {quoted_value(issuer)}: refusing metadata that names another issuer"
        )
    methods = _strings(
        document.get("code_challenge_methods_supported"), f"code_challenge_methods_supported in {what}"
    )
    if not methods or "S256" not in methods:
        raise AuthorizationError(
            f"{issuer} does not offer PKCE with S256 (code_challenge_methods_supported: "
            f"{'absent' if methods is None else list(methods)}): refusing to authorize without it"
        )
    registration = document.get("registration_endpoint")
    if registration is not None and not isinstance(registration, str):
        raise AuthorizationError(f"registration_endpoint in {what} is not a string")
    grants = document.get("grant_types_supported")  # read leniently: only a hint
    auth_methods = _strings(
        document.get("token_endpoint_auth_methods_supported"),
        f"token_endpoint_auth_methods_supported in {what}",
    )
    return AuthorizationServer(
        issuer=issuer,
        authorization_endpoint=require_secure(
            string_field(document, "authorization_endpoint", what),
            f"the authorization endpoint in {what}",
            named_by=issuer,
        ),
        token_endpoint=require_secure(
            string_field(document, "token_endpoint", what), f"the token endpoint in {what}", named_by=issuer
        ),
        registration_endpoint=require_secure(
            registration, f"the registration endpoint in {what}", named_by=issuer
        )
        if registration
        else None,
        scopes_supported=_strings(document.get("scopes_supported"), f"scopes_supported in {what}"),
        token_endpoint_auth_methods=auth_methods or ("client_secret_basic",),
        iss_parameter_supported=document.get("authorization_response_iss_parameter_supported") is True,
        client_id_metadata_documents=document.get("client_id_metadata_document_supported") is True,
        dpop_algorithms=_strings(
            document.get("dpop_signing_alg_values_supported"), f"dpop_signing_alg_values_supported in {what}"
        ),
        grant_types=tuple(grants)
        if isinstance(grants, list) and all(isinstance(g, str) for g in grants)
        else None,
    )


# ---- scope -----------------------------------------------------------------------------


def select_scope(
    challenged: str | None,
    resource: ProtectedResource,
    server: AuthorizationServer,
    *,
    previous: str | None = None,
    refresh: bool = True,
) -> str | None:
    """The scope to ask for (None: omit the parameter); see the module docstring."""
    scopes = challenged.split() if challenged else []
    if not scopes and resource.scopes_supported:
        scopes = list(resource.scopes_supported)
    if previous:
        scopes = previous.split() + scopes
    if scopes and refresh and server.scopes_supported and OFFLINE_ACCESS in server.scopes_supported:
        scopes.append(OFFLINE_ACCESS)
    unique = list(dict.fromkeys(s for s in scopes if s))
    return " ".join(unique) or None


# ---- the authorization request and its answer -----------------------------------------


@dataclass(frozen=True)
class Pkce:
    """A PKCE verifier and its S256 challenge (RFC 7636)."""

    verifier: str = field(repr=False)
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)  # 64 characters of the unreserved set
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii"))


def authorization_url(
    server: AuthorizationServer,
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    pkce: Pkce,
    scope: str | None,
    resource: str,
) -> str:
    """The URL the person opens to authorize the client."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "resource": resource,
    }
    if scope:
        params["scope"] = scope
    endpoint = server.authorization_endpoint
    joint = "&" if urllib.parse.urlsplit(endpoint).query else "" if endpoint.endswith("?") else "?"
    return endpoint + joint + urllib.parse.urlencode(params)


def _inert(text: str, limit: int) -> str:
    """What a redirect said, to quote: printable ASCII as RFC 6749 §4.1.2.1 has it (anything
    else, a line break or a terminal escape, becomes ``?``), cut to ``limit`` characters (a
    URL in it redacted by the caller, before the cut)."""
    shown = "".join(ch if " " <= ch <= "~" else "?" for ch in text[:limit])
    return shown + ("..." if len(text) > limit else "")


def read_callback(callback_url: str, *, state: str, server: AuthorizationServer) -> str:
    """The authorization code in the redirect the authorization server sent back."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(callback_url).query, keep_blank_values=True)

    def one(name: str) -> str | None:
        values = query.get(name)
        if values is not None and len(values) != 1:
            raise AuthorizationError(f"the authorization response has {name} {len(values)} times")
        return values[0] if values else None

    if not secrets.compare_digest((one("state") or "").encode(), state.encode()):
        raise AuthorizationError("the authorization response does not carry the state the request sent")
    iss = one("iss")
    if iss is None and server.iss_parameter_supported:
        raise AuthorizationError(
            f"the authorization response has no iss, though {server.issuer} says it sends one (RFC 9207)"
        )
    if iss is not None and iss != server.issuer:
        raise AuthorizationError(
            f"the authorization response comes from issuer {quoted_value(iss)}, not {server.issuer!r} (RFC 9207)"
        )
    if (error := one("error")) is not None:
        description = one("error_description")
        described = ": " + _inert(redact_urls(description), 200) if description else ""
        raise AuthorizationError(
            f"{server.issuer} refused the authorization ({_inert(error, 64)}{described})"
        )
    code = one("code")
    if not code:
        raise AuthorizationError("the authorization response carries no code")
    return code
