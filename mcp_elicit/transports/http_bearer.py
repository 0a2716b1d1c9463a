"""Bearer tokens on the Streamable HTTP server: who is calling, what a refused request is
told, and the protected resource metadata document (RFC 9728) clients find the
authorization server by. ``server.auth`` says what these mean; this module speaks HTTP.

Rules: a request without a valid token gets 401 with a ``WWW-Authenticate: Bearer``
challenge (``error="invalid_token"`` when a token was sent); with ``ResourceMetadata`` the
challenge names the document and the required scopes, and a valid token lacking one of
them (or of a tool's, prompt's or resource's ``scopes``: ``refuse_scopes``) gets 403 ``insufficient_scope``. Malformed credentials (two ``Authorization``
headers, a token that is not RFC 6750's ``b64token``) get 400 ``invalid_request``: no
token is taken from them. The document is public: any origin may read it, and caches may
keep it five minutes.

DPoP (RFC 9449 and the MCP profile): ``Authorization: DPoP <token>`` must come with exactly
one ``DPoP`` header, a proof for this request and its body (``core.dpop.check_proof``),
signed by the key the token is bound to. A bound token sent as ``Bearer``, an unbound one
sent as ``DPoP``, or a bearer token where ``dpop_required`` is set, is refused; so is a
token bound (``cnf``) to anything but a DPoP key's thumbprint, which this server cannot
check: a client certificate (RFC 8705), a key given whole, a garbled ``jkt``. A refusal
of a DPoP request is a ``DPoP`` challenge (``invalid_dpop_proof`` when the proof is at
fault) naming the algorithms accepted. With ``dpop_nonces``, a proof must carry a nonce
the server gave: one sealed by the server's ``StateSealer`` (bound to "dpop-nonce" and
the server's origin, 5 minutes), so no instance keeps any state; a proof without a valid
one gets ``use_dpop_nonce`` and a fresh nonce in ``DPoP-Nonce``. Given ``spend``, a proof
is accepted once: its ``jti`` (with the key's thumbprint) is remembered for as long as the
proof would be accepted, and a replay is refused as ``invalid_dpop_proof``.

A verifier that raises (an introspection endpoint down), one that has not answered within
``verify_timeout`` seconds (10 by default: a hanging introspection call must not hold the
request and its connection for ever), or a replay store that fails refuses the request
with 503 and ``Retry-After``: never a 500, never a pass; the log says why, without the
token or any piece of it (``_without_token``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final

import orjson

from mcp_elicit.core import dpop
from mcp_elicit.errors import InvalidRequestState
from mcp_elicit.sealing import Binding, StateSealer
from mcp_elicit.server.auth import Principal, ResourceMetadata, TokenVerifier, realm_challenge
from mcp_elicit.transports.http_exchange import Scope, Send, json_headers, plain, route_path
from mcp_elicit.transports.mount_path import escape_path, mount_path

__all__ = [
    "VERIFY_TIMEOUT",
    "Spend",
    "app_base",
    "authenticate",
    "origin",
    "refuse_scopes",
    "serve_metadata",
]

log = logging.getLogger("mcp_elicit.auth")

#: Seconds a token verifier has to answer before the request is refused (503).
VERIFY_TIMEOUT: Final = 10.0

#: Mark a key used for some seconds: True the first time, False while it is remembered.
Spend = Callable[[str, float], Awaitable[bool]]


def origin(scope: Scope, headers: Mapping[str, str]) -> str:
    """``scheme://host`` of a request, from its (allow-listed) Host."""
    return f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"


def app_base(scope: Scope, headers: Mapping[str, str], public_url: str | None = None) -> str:
    """Where the app's own paths (``/mcp``, the pages, the metadata) start as clients see
    them: the configured public URL (``Server(public_url=...)``: a proxy in front, TLS, a
    stripped path), else ``scheme://host`` of the request and the prefix the app is
    mounted under, as a URL's path (``mount_path``: never as ASGI gives it, decoded)."""
    if public_url:
        return public_url
    return origin(scope, headers) + mount_path(scope)


def _requested_url(
    scope: Scope, headers: Mapping[str, str], metadata: ResourceMetadata | None, public_url: str | None
) -> str:
    """The URL the client sent the request to, which a DPoP proof's ``htu`` names (RFC 9449,
    section 4.3): ``ResourceMetadata.resource`` when it is this endpoint's URL (its path ends
    with the endpoint's: the public URL behind a proxy), else the public base and the
    endpoint's path. A resource that is a parent of the endpoint (its origin, say)
    identifies the resource, not the URL requested. The mount path is spelled as the
    request did (``mount_path``); ``check_proof`` compares it with the ``htu`` after RFC
    3986's normalization."""
    path = route_path(scope)
    resource = metadata.resource if metadata is not None else None
    if resource and urllib.parse.urlsplit(resource).path.rstrip("/").endswith(path.rstrip("/")):
        return resource
    return f"{app_base(scope, headers, public_url)}{escape_path(path)}"


async def authenticate(
    auth: TokenVerifier,
    metadata: ResourceMetadata | None,
    metadata_path: str,
    scope: Scope,
    headers: Mapping[str, str],
    send: Send,
    body: bytes = b"",
    sealer: StateSealer | None = None,
    spend: Spend | None = None,
    public_url: str | None = None,
    verify_timeout: float | None = VERIFY_TIMEOUT,
) -> tuple[bool, Principal | None]:
    """``(True, principal)`` for a valid token with the required scopes; else the refusal
    is sent and ``(False, None)``. ``body``: the request's, which a DPoP proof digests;
    ``sealer``: what seals DPoP nonces (``dpop_nonces``); ``spend``: what remembers the
    DPoP proofs already used (None: replays are not detected); ``public_url``: the app's
    public base, which the challenge and DPoP proofs name (None: the request's);
    ``verify_timeout``: seconds the verifier has to answer (None: no limit)."""
    raw = headers.get("authorization", "")
    kind, _, token = raw.partition(" ")
    kind, token = kind.lower(), token.strip(" ")
    problem: tuple[str, str] | None = None  # (error, description) of a refused request
    if sum(name == b"authorization" for name, _ in scope["headers"]) > 1:
        problem = ("invalid_request", "send one Authorization header")
    elif kind in ("bearer", "dpop") and not _B64TOKEN.fullmatch(token):
        problem = ("invalid_request", "the token is not a b64token (RFC 6750, section 2.1)")
    principal: Principal | None = None
    if problem is None and kind in ("bearer", "dpop"):
        limit = asyncio.timeout(verify_timeout)
        try:
            async with limit:
                principal = await auth.verify(token)
            if principal is not None and not isinstance(principal, Principal):
                raise TypeError(f"verify() returned a {type(principal).__name__}, not a Principal or None")
        except Exception as exc:  # an introspection endpoint down, a library raising on odd input
            if limit.expired():  # the verifier hangs
                log.error(
                    "the token verifier did not answer within %g s, the request is refused", verify_timeout
                )
            else:
                reason = _without_token(f"{type(exc).__name__}: {exc}", token)
                log.error("the token verifier failed, the request is refused: %s", reason)
            await _unavailable(send, b"this server cannot check access tokens right now; retry shortly")
            return False, None
    if principal is not None:
        bound = principal.dpop_thumbprint
        if bound is None and principal.claims.get("cnf"):  # a certificate (RFC 8705), a whole key...
            problem = ("invalid_token", "the token is bound to a key or certificate this server cannot check")
        elif kind == "dpop":
            nonces = sealer if metadata is not None and metadata.dpop_nonces else None
            url = _requested_url(scope, headers, metadata, public_url)
            try:
                problem = await _dpop_problem(scope, headers, token, body, bound, nonces, url, spend)
                if problem is not None and bound is None and metadata is not None and metadata.dpop_required:
                    problem = ("invalid_token", "this server takes DPoP-bound tokens only")
            except _StoreDown as exc:  # refuse the request, but do not blame the client's proof
                log.error("DPoP proofs cannot be checked for replay: %s", exc.__cause__)
                await _unavailable(send, b"this server cannot check DPoP proofs right now; retry shortly")
                return False, None
        elif bound is not None:
            problem = ("invalid_token", "a DPoP-bound token must be sent with the DPoP scheme and a proof")
        elif metadata is not None and metadata.dpop_required:
            problem = ("invalid_token", "this server takes DPoP-bound tokens only")
        if problem is not None:
            principal = None
    if principal is not None and metadata is not None and metadata.implied_scopes:
        principal = metadata.effective(principal)  # the scopes handlers see, and the ones checked
    if principal is not None and (metadata is None or not metadata.missing(principal)):
        return True, principal
    scheme = "DPoP" if kind == "dpop" or (metadata is not None and metadata.dpop_required) else "Bearer"
    # RFC 6750 §3.1: no error code for a request without a token (or with another scheme's)
    error, description = problem or ("invalid_token" if kind in ("bearer", "dpop") else None, None)
    if metadata is None:
        challenge = realm_challenge(scheme, error=error, description=description)
    else:
        where = f"{app_base(scope, headers, public_url)}{escape_path(metadata_path)}"
        if principal is not None:
            missing = " ".join(metadata.missing(principal))
            value = metadata.challenge(
                where, error="insufficient_scope", description=f"needs scope {missing}", scheme=scheme
            )
            await _refuse(send, 403, b"Forbidden: the token lacks a scope this server requires", value)
            return False, None
        challenge = metadata.challenge(where, error=error, description=description, scheme=scheme)
    what = b"a valid DPoP-bound token and proof" if scheme == "DPoP" else b"a valid bearer token"
    extra = []
    if error == "use_dpop_nonce" and sealer is not None:
        extra.append((b"dpop-nonce", new_nonce(sealer, origin(scope, headers)).encode("ascii")))
    if error == "invalid_request":
        await _refuse(send, 400, b"Bad Request: send one Authorization header with " + what, challenge)
    else:
        await _refuse(send, 401, b"Unauthorized: send " + what, challenge, extra)
    return False, None


async def refuse_scopes(
    what: str,
    needed: Sequence[str],
    principal: Principal | None,
    metadata: ResourceMetadata | None,
    metadata_path: str,
    scope: Scope,
    headers: Mapping[str, str],
    send: Send,
    public_url: str | None = None,
) -> bool:
    """Whether ``principal`` (its scopes effective: ``authenticate`` made them so) holds
    every scope in ``needed``, which ``what`` (a tool, a prompt, a resource) needs; if not, the 403
    ``insufficient_scope`` is sent, its challenge naming every scope the operation needs
    (the endpoint's ``required_scopes`` and ``needed``, held or not: one challenge, and a
    client that signs in again for it keeps what it had) and the metadata document as the
    endpoint's 401 does. Without a principal (a server that verifies no tokens) the
    request is refused too: nothing scoped is ever open to anyone."""
    if principal is None:
        await plain(send, 403, f"Forbidden: {what} needs scopes, and this server verifies no tokens".encode())
        return False
    lacking = [x for x in needed if x not in principal.scopes]
    if not lacking:
        return True
    kind = headers.get("authorization", "").partition(" ")[0].lower()
    scheme = "DPoP" if kind == "dpop" or (metadata is not None and metadata.dpop_required) else "Bearer"
    description = f"{what} needs scope {' '.join(lacking)}"
    if metadata is None:
        value = realm_challenge(scheme, error="insufficient_scope", description=description, scopes=needed)
    else:
        where = f"{app_base(scope, headers, public_url)}{escape_path(metadata_path)}"
        named = list(dict.fromkeys([*metadata.required_scopes, *needed]))
        value = metadata.challenge(
            where, error="insufficient_scope", description=description, scheme=scheme, scopes=named
        )
    body = f"Forbidden: the token lacks a scope {what} requires".encode()
    await _refuse(send, 403, body, value)
    return False


#: The shortest run of a token's characters that a logged reason does not keep.
_PIECE: Final = 8


def _without_token(reason: str, token: str) -> str:
    """``reason`` (a verifier's error) with every run of ``_PIECE`` or more characters that
    is also in ``token`` replaced: a verifier may quote a JWT's segment, the token cut
    short or its last characters, not just the whole of it (which is replaced first; a
    token shorter than ``_PIECE`` only then)."""
    reason = reason.replace(token, "<the token>") if token else reason
    if len(token) < _PIECE:
        return reason
    pieces = {token[i : i + _PIECE] for i in range(len(token) - _PIECE + 1)}
    hidden = [False] * len(reason)
    for i in range(len(reason) - _PIECE + 1):
        if reason[i : i + _PIECE] in pieces:
            hidden[i : i + _PIECE] = [True] * _PIECE
    kept: list[str] = []
    for i, char in enumerate(reason):
        if not hidden[i]:
            kept.append(char)
        elif i == 0 or not hidden[i - 1]:
            kept.append("<part of the token>")
    return "".join(kept)


#: RFC 6750 §2.1 (and RFC 9449 §7.1): the syntax of a token after ``Bearer `` or ``DPoP ``.
_B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


_NONCE_TTL = 300.0


def _nonce_binding(server_origin: str) -> Binding:
    return Binding("dpop-nonce", server_origin, b"")


def new_nonce(sealer: StateSealer, server_origin: str) -> str:
    """A DPoP nonce for proofs to this server: sealed, so any instance sharing the key ring
    can check it without keeping it."""
    return sealer.seal(b"", _nonce_binding(server_origin), now=time.time(), ttl=_NONCE_TTL)


async def _dpop_problem(
    scope: Scope,
    headers: Mapping[str, str],
    token: str,
    body: bytes,
    bound: str | None,
    nonces: StateSealer | None,
    url: str,
    spend: Spend | None,
) -> tuple[str, str] | None:
    """Why a request presenting ``token`` with the DPoP scheme is refused, or None.
    ``url``: the endpoint's URL as the client sees it, which a proof's ``htu`` names
    (``_requested_url``)."""
    if sum(name == b"dpop" for name, _ in scope["headers"]) > 1:
        return "invalid_dpop_proof", "more than one DPoP header"
    server_origin = origin(scope, headers)
    now = time.time()

    def nonce_ok(nonce: object) -> bool:
        assert nonces is not None
        try:
            nonces.open(nonce, _nonce_binding(server_origin), now=now)
        except InvalidRequestState:
            return False
        return True

    try:
        proof = dpop.check_proof(
            headers.get("dpop"),
            method=scope["method"],
            url=url,
            access_token=token,
            body=body,
            now=now,
            nonce_ok=nonce_ok if nonces is not None else None,
        )
    except dpop.NonceError as exc:
        return "use_dpop_nonce", str(exc)
    except dpop.ProofError as exc:
        return "invalid_dpop_proof", str(exc)
    if bound is None:
        return "invalid_token", "the token is not bound to a DPoP key: send it as a Bearer token"
    if proof.thumbprint != bound:
        return "invalid_dpop_proof", "the proof is not signed by the key the token is bound to"
    if spend is not None:
        marker = hashlib.sha256(f"{bound}.{proof.jti}".encode("utf-8", "replace")).hexdigest()[:40]
        try:
            fresh = await spend(f"dpop-{marker}", max(proof.until - now, 1.0))
        except Exception as exc:  # any store's failure: redis, sqlite3, OSError
            raise _StoreDown from exc
        if not fresh:
            return "invalid_dpop_proof", "this proof was already used: sign a new one (a new jti) per request"
    return None


class _StoreDown(Exception):
    """The store that remembers DPoP proofs failed (the cause says how)."""


async def _unavailable(send: Send, what: bytes) -> None:
    """503: the request is refused because a check cannot be made now (not the client's fault)."""
    await plain(send, 503, b"Service Unavailable: " + what, extra=[(b"retry-after", b"1")])


async def _refuse(
    send: Send, status: int, body: bytes, challenge: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"www-authenticate", challenge.encode("latin-1", "replace")), *(extra or [])]
    await plain(send, status, body, extra=headers)


async def serve_metadata(metadata: ResourceMetadata, resource: str, scope: Scope, send: Send) -> None:
    """Answer a request for the document of the endpoint at ``resource`` (GET only)."""
    if scope["method"] != "GET":
        await plain(send, 405, b"Method Not Allowed", extra=[(b"allow", b"GET")])
        return
    body = orjson.dumps(metadata.document(resource))
    extra = [(b"access-control-allow-origin", b"*"), (b"cache-control", b"max-age=300")]
    await send({"type": "http.response.start", "status": 200, "headers": [*json_headers(body), *extra]})
    await send({"type": "http.response.body", "body": body})
