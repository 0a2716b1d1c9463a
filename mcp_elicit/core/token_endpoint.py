"""Who an MCP client is at an authorization server, and what it says to its token endpoint
(sans-IO): client credentials (pre-registered, a client ID metadata document, or dynamic
registration, RFC 7591), how the client authenticates (``client_secret_basic``,
``client_secret_post``, ``private_key_jwt`` per RFC 7523, or none), token requests and
their answers. Discovery, scope and the authorization response are in
:mod:`mcp_elicit.core.authorization`.

A machine acting as itself (no person) uses the ``client_credentials`` grant, with a client
secret or a ``private_key_jwt`` assertion signed here with ``cryptography`` (ES256 for a
P-256 key, RS256 for RSA); or, as a workload with a JWT from its platform (workload
identity federation), the JWT-bearer grant (RFC 7523 §2.1), with no client credentials at
all.

Rules: as in :mod:`mcp_elicit.core.authorization`: every answer is checked before use, a
refusal is an :class:`AuthorizationError`, and no message carries a token or a secret. An
access token is visible ASCII and nothing else (no space, control character or non-ASCII
letter; RFC 6750 §2.1 is stricter still): it goes in an ``Authorization`` header, where
anything else is refused by the HTTP library in a message that quotes the header.
"""

from __future__ import annotations

import base64
import re
import secrets
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcp_elicit.core.authorization import AuthorizationServer, string_field
from mcp_elicit.core.jws import sign_compact
from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import AuthorizationError

__all__ = [
    "ClientCredentials",
    "Tokens",
    "choose_auth_method",
    "client_assertion",
    "client_auth",
    "read_registration",
    "read_tokens",
    "registration_request",
    "token_request",
    "ID_JAG",
    "JWT_BEARER_GRANT",
    "id_jag_request",
    "oauth_error",
    "read_id_jag",
]

_AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post", "none")
_HEADER_SAFE: Final = re.compile(r"[\x21-\x7e]+")


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
    client_id = string_field(document, "client_id", what)
    secret = document.get("client_secret")
    if secret is not None and not isinstance(secret, str):
        raise AuthorizationError(f"client_secret in {what} is not a string")
    registered = document.get("token_endpoint_auth_method")
    method = choose_auth_method(server, secret or None, registered if isinstance(registered, str) else None)
    if method != "none" and not secret:
        raise AuthorizationError(f"{what} registers {method} but gives no client_secret")
    return ClientCredentials(client_id, secret or None, method)


_JWT_BEARER: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: The JWT-bearer authorization grant (RFC 7523 §2.1): a workload's JWT, or an ID-JAG.
JWT_BEARER_GRANT: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: The token type of an Identity Assertion JWT Authorization Grant.
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
_TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"


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
    return sign_compact(header, claims, key)


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


# ---- tokens ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tokens:
    """What a token endpoint gave: ``expires_at`` on the caller's clock (None: unknown)."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None
    #: How the token is presented: ``Bearer``, or ``DPoP`` for a token bound to the
    #: client's DPoP key (RFC 9449), sent with a proof signed by that key.
    token_type: str = "Bearer"

    def fresh(self, now: float, *, margin: float = 30.0) -> bool:
        return self.expires_at is None or now < self.expires_at - margin


def read_tokens(
    status: int, document: object, server: AuthorizationServer, *, now: float, dpop: bool = False
) -> Tokens:
    """The tokens in a token endpoint's answer, or AuthorizationError with its OAuth error.
    ``dpop``: the request carried a DPoP proof, so a ``DPoP`` token is expected (a
    ``Bearer`` one means the server chose not to bind it)."""
    if status != 200 or not isinstance(document, Mapping) or "access_token" not in document:
        error = oauth_error(document)
        if error is not None:
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
    if _HEADER_SAFE.fullmatch(token) is None:
        raise AuthorizationError(
            f"the token endpoint of {server.issuer} gave an access_token with characters no "
            "Authorization header can carry (a space, a control character or non-ASCII); not used"
        )
    kinds = {"bearer": "Bearer", "dpop": "DPoP"} if dpop else {"bearer": "Bearer"}
    kind = kinds.get(kind.lower()) if isinstance(kind, str) else None
    if kind is None:
        raise AuthorizationError(
            f"the token endpoint of {server.issuer} gave a {_short(document.get('token_type'))} token, "
            f"not {' or '.join(kinds.values())}"
            + ("" if dpop else " (DPoP-bound tokens come only in answer to a DPoP proof)")
        )
    expires_in = document.get("expires_in")
    if (
        isinstance(expires_in, str)
        and len(expires_in) <= 20
        and expires_in.isascii()
        and expires_in.isdigit()
    ):
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
        kind,
    )


def token_request(
    grant: str,
    credentials: ClientCredentials | None,
    *,
    resource: str,
    fields: Mapping[str, str],
) -> tuple[dict[str, str], dict[str, str]]:
    """``(headers, form)`` of a token request of ``grant`` with the client's authentication
    (None: a client with no identifier, as a workload presenting its JWT may be)."""
    headers, auth_fields = client_auth(credentials) if credentials is not None else ({}, {})
    form = {"grant_type": grant, **fields, "resource": resource, **auth_fields}
    return {"Accept": "application/json", **headers}, form


def oauth_error(document: object) -> str | None:
    """The ``error`` code of an OAuth error answer, when it is one (RFC 6749 §5.2: printable
    ASCII, kept to 64 characters here); None for anything else, which is never quoted."""
    error = document.get("error") if isinstance(document, Mapping) else None
    return error if isinstance(error, str) and _ERROR_CODE.fullmatch(error) else None


_ERROR_CODE: Final = re.compile(r"[\x20-\x7e]{1,64}")


def _short(value: object) -> str:
    """``repr(value)``, cut to 40 characters: what a server said, quoted in an error (a
    list or an object only three levels deep: ``repr`` recurses past Python's limit)."""
    text = repr(value) if isinstance(value, str) else quoted(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---- enterprise-managed authorization: the ID-JAG ----------------------------------------


def id_jag_request(
    issuer: str,
    resource: str,
    *,
    id_token: str,
    client_id: str,
    client_secret: str | None = None,
    scope: str | None = None,
) -> dict[str, str]:
    """The form of a token exchange (RFC 8693) at the person's identity provider that trades
    their ID token for an ID-JAG for the authorization server ``issuer`` and the MCP server
    ``resource``."""
    form = {
        "grant_type": _TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "audience": issuer,
        "resource": resource,
        "subject_token": id_token,
        "subject_token_type": _ID_TOKEN,
        "client_id": client_id,
    }
    if scope:
        form["scope"] = scope
    if client_secret is not None:
        form["client_secret"] = client_secret
    return form


def read_id_jag(status: int, document: Mapping[str, Any] | None, where: str) -> str:
    """The ID-JAG in an identity provider's token exchange answer, or AuthorizationError."""
    if status != 200 or document is None:
        error = oauth_error(document)
        if error is not None:
            raise AuthorizationError(f"the identity provider at {where} refused the token exchange: {error}")
        raise AuthorizationError(f"the identity provider at {where} answered HTTP {status} without an ID-JAG")
    if document.get("issued_token_type") != ID_JAG:
        raise AuthorizationError(
            f"the identity provider at {where} issued {_short(document.get('issued_token_type'))}, not an ID-JAG"
        )
    grant = document.get("access_token")
    if not isinstance(grant, str) or grant.count(".") != 2:
        raise AuthorizationError(f"the identity provider at {where} gave an ID-JAG that is not a JWT")
    return grant
