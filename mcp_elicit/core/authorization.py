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
3. Authorization server metadata (RFC 8414, then OpenID discovery) from the issuer's
   well-known URLs in the spec's order; its ``issuer`` must equal, character for character,
   the issuer the URL was built from, and it must offer PKCE S256 (absent means no PKCE:
   refuse).
4. The client identifies itself with, in order: pre-registered credentials, a client ID
   metadata document URL (when the server supports them), dynamic registration (RFC 7591,
   with ``application_type``). Credentials belong to one issuer and are never shown to
   another.
5. Authorization code with PKCE S256, ``state`` and the RFC 8707 ``resource``; the
   callback's ``state`` must match, and its ``iss`` (RFC 9207) must equal the issuer by
   simple string comparison when present, and be present when the server says it sends it.
6. Scope: the challenge's ``scope``, else every ``scopes_supported`` of the resource, else
   none; on a step-up (403 ``insufficient_scope``) the union of what was asked before and
   the new challenge. ``offline_access`` is added only when the authorization server lists
   it and the client wants refresh tokens.

A machine acting as itself (no person) uses the ``client_credentials`` grant instead of
steps 4 and 5, authenticating with a client secret or a ``private_key_jwt`` assertion
(RFC 7523, signed here with ``cryptography``: ES256 or RS256).

Rules: every value read from the network is checked before use, and every refusal is an
:class:`AuthorizationError` naming what was wrong and where; no message ever carries a
token, a code, a verifier or a client secret.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
import secrets
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils

from mcp_elicit.errors import AuthorizationError

__all__ = [
    "AuthorizationServer",
    "Challenge",
    "ClientCredentials",
    "Pkce",
    "ProtectedResource",
    "Tokens",
    "authorization_server_metadata_urls",
    "authorization_url",
    "bearer_challenge",
    "check_resource",
    "choose_auth_method",
    "client_assertion",
    "client_auth",
    "protected_resource_urls",
    "read_authorization_server",
    "read_callback",
    "read_protected_resource",
    "read_registration",
    "read_tokens",
    "registration_request",
    "select_scope",
    "token_request",
]

OFFLINE_ACCESS: Final = "offline_access"
_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED: Final = r'"(?:[^"\\]|\\.)*"'
_PARAM: Final = re.compile(rf"\s*({_TOKEN})\s*=\s*({_QUOTED}|{_TOKEN}=*)\s*(?:,|$)")
_SCHEME: Final = re.compile(rf"[\s,]*({_TOKEN})(?=[\s,]|$)\s*")
_TOKEN68: Final = re.compile(r"([A-Za-z0-9._~+/-]+=*)\s*(?:,|$)")
_AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post", "none")


# ---- the challenge -----------------------------------------------------------------


@dataclass(frozen=True)
class Challenge:
    """One ``WWW-Authenticate`` challenge: its scheme and auth-params (names lower-cased)."""

    scheme: str
    params: Mapping[str, str]

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scope(self) -> str | None:
        scope = self.params.get("scope", "").strip()
        return scope or None

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None


def _challenges(header: str) -> list[Challenge]:
    """Parse a ``WWW-Authenticate`` value (RFC 9110 §11.6.1) into its challenges. Lenient:
    a part it cannot read ends the parse, keeping what came before."""
    out: list[Challenge] = []
    rest = header
    while rest.strip():
        match = _SCHEME.match(rest)
        if match is None:
            break
        scheme, rest = match.group(1), rest[match.end() :]
        params: dict[str, str] = {}
        if _PARAM.match(rest) is None and (token68 := _TOKEN68.match(rest)) is not None:
            rest = rest[token68.end() :]  # Basic dXNlcjpwYXNz: nothing of ours
        while True:
            param = _PARAM.match(rest)
            if param is None:
                break
            name, value = param.group(1).lower(), param.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            params.setdefault(name, value)
            rest = rest[param.end() :]
        out.append(Challenge(scheme, params))
        rest = rest.lstrip(" ,")
    return out


def bearer_challenge(headers: Iterable[str]) -> Challenge | None:
    """The ``Bearer`` challenge among the ``WWW-Authenticate`` header values, if any."""
    for header in headers:
        for challenge in _challenges(header):
            if challenge.scheme.lower() == "bearer":
                return challenge
    return None


# ---- URLs ------------------------------------------------------------------------------


def _split(url: str, what: str) -> urllib.parse.SplitResult:
    """``url`` split, if it is an http(s) URL with a host and a valid port."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        raise AuthorizationError(f"{what} {url!r} is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AuthorizationError(f"{what} {url!r} is not an http(s) URL")
    return parts


def _require_secure(url: str, what: str) -> str:
    """``url`` if it is https, or http to a loopback host; else AuthorizationError."""
    parts = _split(url, what)
    if parts.fragment:
        raise AuthorizationError(f"{what} {url!r} has a fragment")
    if parts.scheme == "https":
        return url
    host = parts.hostname or ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise AuthorizationError(f"{what} {url!r} is plain http to a host that is not this machine")
    return url


def _well_known(url: str, name: str) -> tuple[str, str]:
    """``(with the path, without it)``: RFC 8615 URLs for ``name`` from ``url``'s origin."""
    parts = _split(url, "the MCP server URL")
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    return f"{origin}/.well-known/{name}{path}", f"{origin}/.well-known/{name}"


def protected_resource_urls(server_url: str, advertised: str | None) -> list[str]:
    """Where to look for the server's protected resource metadata, in order: the
    challenge's ``resource_metadata``, then the well-known URL with the server's path, then
    at the root."""
    _split(server_url, "the MCP server URL")
    urls: list[str] = []
    if advertised:
        urls.append(_require_secure(advertised, "the resource_metadata URL in WWW-Authenticate"))
    with_path, root = _well_known(server_url, "oauth-protected-resource")
    for url in (with_path, root):
        if url not in urls:
            urls.append(url)
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an issuer's metadata, in the order the MCP spec gives: with a path,
    OAuth then OpenID (path inserted), then OpenID (path appended); without one, OAuth then
    OpenID."""
    parts = _split(issuer, "the authorization server")
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def _origin_and_path(url: str, what: str) -> tuple[str, str, int | None, str]:
    parts = _split(url, what)
    port = parts.port
    if port is None:
        port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port, parts.path


def check_resource(server_url: str, resource: str) -> None:
    """Refuse metadata for a resource that is not ``server_url`` or a parent of it."""
    scheme, host, port, path = _origin_and_path(server_url, "the MCP server URL")
    r_scheme, r_host, r_port, r_path = _origin_and_path(resource, "the resource in the metadata")
    inside = path.rstrip("/") == r_path.rstrip("/") or path.startswith(r_path.rstrip("/") + "/")
    if (scheme, host, port) != (r_scheme, r_host, r_port) or not inside:
        raise AuthorizationError(
            f"the server's protected resource metadata is for {resource!r}, not for {server_url!r}: "
            "refusing to ask for tokens for another resource"
        )


# ---- documents -------------------------------------------------------------------------


def _strings(value: object, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AuthorizationError(f"{what} is not a list of strings")
    return tuple(value)


def _string(document: Mapping[str, Any], key: str, where: str) -> str:
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


def read_protected_resource(document: object, server_url: str, where: str) -> ProtectedResource:
    """Check a protected resource metadata document fetched from ``where``."""
    what = f"the protected resource metadata at {where}"
    if not isinstance(document, Mapping):
        raise AuthorizationError(f"{what} is not a JSON object")
    resource = _string(document, "resource", what)
    check_resource(server_url, resource)
    servers = _strings(document.get("authorization_servers"), f"authorization_servers in {what}")
    if not servers:
        raise AuthorizationError(f"{what} names no authorization server")
    for server in servers:
        _require_secure(server, f"the authorization server in {what}")
    scopes = _strings(document.get("scopes_supported"), f"scopes_supported in {what}")
    return ProtectedResource(resource, servers, scopes)


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


def read_authorization_server(document: object, issuer: str, where: str) -> AuthorizationServer:
    """Check the metadata fetched from ``where`` for ``issuer``."""
    what = f"the authorization server metadata at {where}"
    if not isinstance(document, Mapping):
        raise AuthorizationError(f"{what} is not a JSON object")
    stated = document.get("issuer")
    if stated != issuer:
        raise AuthorizationError(
            f"{what} is for issuer {stated!r}, not {issuer!r}: refusing metadata that names another issuer"
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
    auth_methods = _strings(
        document.get("token_endpoint_auth_methods_supported"),
        f"token_endpoint_auth_methods_supported in {what}",
    )
    return AuthorizationServer(
        issuer=issuer,
        authorization_endpoint=_require_secure(
            _string(document, "authorization_endpoint", what), f"the authorization endpoint in {what}"
        ),
        token_endpoint=_require_secure(
            _string(document, "token_endpoint", what), f"the token endpoint in {what}"
        ),
        registration_endpoint=_require_secure(registration, f"the registration endpoint in {what}")
        if registration
        else None,
        scopes_supported=_strings(document.get("scopes_supported"), f"scopes_supported in {what}"),
        token_endpoint_auth_methods=auth_methods or ("client_secret_basic",),
        iss_parameter_supported=document.get("authorization_response_iss_parameter_supported") is True,
        client_id_metadata_documents=document.get("client_id_metadata_document_supported") is True,
    )


# ---- the client ------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientCredentials:
    """Who the client is at one authorization server."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str = "none"  # client_secret_basic, client_secret_post, private_key_jwt or none
    assertion: str | None = field(default=None, repr=False)  # private_key_jwt: a fresh one per request
    redirect_uri: str | None = None  # what a dynamic registration registered


def choose_auth_method(server: AuthorizationServer, secret: str | None, registered: str | None = None) -> str:
    """How the client authenticates at the token endpoint: as registered, else the first
    method the server supports that fits (a secret for basic/post, none without one)."""
    if registered in _AUTH_METHODS:
        return registered
    if secret is None:
        return "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if method in server.token_endpoint_auth_methods:
            return method
    return "client_secret_basic"


def registration_request(
    server: AuthorizationServer,
    *,
    client_name: str,
    redirect_uri: str,
    application_type: str,
    refresh: bool,
    client_uri: str | None = None,
) -> dict[str, Any]:
    """The dynamic client registration (RFC 7591) body: a public client when the server
    allows one, else one with a secret, and ``refresh_token`` among the grants when the
    client wants refresh tokens."""
    methods = server.token_endpoint_auth_methods
    method = "none" if "none" in methods else choose_auth_method(server, "", None)
    body: dict[str, Any] = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"] if refresh else ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": application_type,
    }
    if client_uri:
        body["client_uri"] = client_uri
    return body


def read_registration(document: object, server: AuthorizationServer) -> ClientCredentials:
    """The credentials a registration answer gives."""
    what = f"the registration answer of {server.issuer}"
    if not isinstance(document, Mapping):
        raise AuthorizationError(f"{what} is not a JSON object")
    client_id = _string(document, "client_id", what)
    secret = document.get("client_secret")
    if secret is not None and not isinstance(secret, str):
        raise AuthorizationError(f"client_secret in {what} is not a string")
    registered = document.get("token_endpoint_auth_method")
    method = choose_auth_method(server, secret or None, registered if isinstance(registered, str) else None)
    if method != "none" and not secret:
        raise AuthorizationError(f"{what} registers {method} but gives no client_secret")
    return ClientCredentials(client_id, secret or None, method)


_JWT_BEARER: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def client_assertion(client_id: str, audience: str, private_key_pem: str, *, now: float) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523): a JWT from ``client_id`` to the
    authorization server ``audience``, valid 5 minutes, signed ES256 (P-256 key) or RS256
    (RSA key)."""
    try:
        key = serialization.load_pem_private_key(private_key_pem.encode("ascii"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise AuthorizationError(f"the client's private key does not load ({type(exc).__name__})") from None
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        alg = "ES256"
    elif isinstance(key, rsa.RSAPrivateKey):
        alg = "RS256"
    else:
        raise AuthorizationError("the client's private key must be an EC P-256 (ES256) or RSA (RS256) key")
    header = {"alg": alg, "typ": "JWT"}
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": int(now),
        "exp": int(now) + 300,
        "jti": secrets.token_urlsafe(16),
    }
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    )
    if isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    else:
        r, s = utils.decode_dss_signature(key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return f"{signing_input}.{_b64url(signature)}"


def client_auth(credentials: ClientCredentials) -> tuple[dict[str, str], dict[str, str]]:
    """``(headers, form fields)`` that authenticate the client at the token endpoint."""
    if credentials.auth_method == "client_secret_basic" and credentials.client_secret is not None:
        pair = ":".join(
            urllib.parse.quote(v, safe="") for v in (credentials.client_id, credentials.client_secret)
        )
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}, {}
    if credentials.auth_method == "client_secret_post" and credentials.client_secret is not None:
        return {}, {"client_id": credentials.client_id, "client_secret": credentials.client_secret}
    if credentials.auth_method == "private_key_jwt" and credentials.assertion is not None:
        return {}, {
            "client_id": credentials.client_id,
            "client_assertion_type": _JWT_BEARER,
            "client_assertion": credentials.assertion,
        }
    return {}, {"client_id": credentials.client_id}


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

    verifier: str
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
            f"the authorization response comes from issuer {iss!r}, not {server.issuer!r} (RFC 9207): refused"
        )
    error = one("error")
    if error is not None:
        description = one("error_description")
        raise AuthorizationError(
            f"{server.issuer} refused the authorization ({error}{': ' + description[:200] if description else ''})"
        )
    code = one("code")
    if not code:
        raise AuthorizationError("the authorization response carries no code")
    return code


# ---- tokens ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokens:
    """What a token endpoint gave: ``expires_at`` on the caller's clock (None: unknown)."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None

    def fresh(self, now: float, *, margin: float = 30.0) -> bool:
        return self.expires_at is None or now < self.expires_at - margin


def read_tokens(status: int, document: object, server: AuthorizationServer, *, now: float) -> Tokens:
    """The tokens in a token endpoint's answer, or AuthorizationError with its OAuth error."""
    if status != 200 or not isinstance(document, Mapping) or "access_token" not in document:
        error = document.get("error") if isinstance(document, Mapping) else None
        if isinstance(error, str) and re.fullmatch(r"[\x20-\x7e]{1,64}", error):
            raise AuthorizationError(f"the token endpoint of {server.issuer} refused: {error}")
        raise AuthorizationError(
            f"the token endpoint of {server.issuer} answered HTTP {status} without tokens"
        )
    token = document.get("access_token")
    kind = document.get("token_type")
    if not isinstance(token, str) or not token:
        raise AuthorizationError(
            f"the token endpoint of {server.issuer} gave an access_token that is not a string"
        )
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise AuthorizationError(
            f"the token endpoint of {server.issuer} gave a {kind!r} token, not a Bearer token"
        )
    expires_in = document.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isascii() and expires_in.isdigit():
        expires_in = int(expires_in)  # some servers send it as a string
    expires_at = None
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and 0 < expires_in < 1e10:
        expires_at = now + float(expires_in)
    refresh = document.get("refresh_token")
    scope = document.get("scope")
    return Tokens(
        token,
        refresh if isinstance(refresh, str) and refresh else None,
        expires_at,
        scope if isinstance(scope, str) and scope.strip() else None,
    )


def token_request(
    grant: str,
    credentials: ClientCredentials,
    *,
    resource: str,
    fields: Mapping[str, str],
) -> tuple[dict[str, str], dict[str, str]]:
    """``(headers, form)`` of a token request of ``grant`` with the client's authentication."""
    headers, auth_fields = client_auth(credentials)
    form = {"grant_type": grant, **fields, "resource": resource, **auth_fields}
    return {"Accept": "application/json", **headers}, form
