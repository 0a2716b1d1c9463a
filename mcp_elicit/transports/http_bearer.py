"""Bearer tokens on the Streamable HTTP server: who is calling, what a refused request is
told, and the protected resource metadata document (RFC 9728) clients find the
authorization server by. ``server.auth`` says what these mean; this module speaks HTTP.

Rules: a request without a valid token gets 401 with a ``WWW-Authenticate: Bearer``
challenge (``error="invalid_token"`` when a token was sent); with ``ResourceMetadata`` the
challenge names the document and the required scopes, and a valid token lacking one of
them gets 403 ``insufficient_scope``. The document is public: any origin may read it, and
caches may keep it five minutes.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from mcp_elicit.server.auth import Principal, ResourceMetadata, TokenVerifier
from mcp_elicit.transports.http_exchange import Scope, Send, json_headers, plain

__all__ = ["authenticate", "origin", "serve_metadata"]


def origin(scope: Scope, headers: Mapping[str, str]) -> str:
    """``scheme://host`` of a request, from its (allow-listed) Host."""
    return f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"


async def authenticate(
    auth: TokenVerifier,
    metadata: ResourceMetadata | None,
    metadata_path: str,
    scope: Scope,
    headers: Mapping[str, str],
    send: Send,
) -> tuple[bool, Principal | None]:
    """``(True, principal)`` for a valid token with the required scopes; else the refusal
    is sent and ``(False, None)``."""
    raw = headers.get("authorization", "")
    kind, _, token = raw.partition(" ")
    principal = await auth.verify(token.strip()) if kind.lower() == "bearer" and token.strip() else None
    if principal is not None and (metadata is None or not metadata.missing(principal)):
        return True, principal
    if metadata is None:
        challenge = 'Bearer realm="mcp"' + (', error="invalid_token"' if raw else "")
    else:
        where = f"{origin(scope, headers)}{metadata_path}"
        if principal is not None:
            missing = " ".join(metadata.missing(principal))
            value = metadata.challenge(
                where, error="insufficient_scope", description=f"needs scope {missing}"
            )
            await _refuse(send, 403, b"Forbidden: the token lacks a scope this server requires", value)
            return False, None
        challenge = metadata.challenge(where, error="invalid_token" if raw else None)
    await _refuse(send, 401, b"Unauthorized: send a valid bearer token", challenge)
    return False, None


async def _refuse(send: Send, status: int, body: bytes, challenge: str) -> None:
    await plain(send, status, body, extra=[(b"www-authenticate", challenge.encode("latin-1", "replace"))])


async def serve_metadata(metadata: ResourceMetadata, resource: str, scope: Scope, send: Send) -> None:
    """Answer a request for the document of the endpoint at ``resource`` (GET only)."""
    if scope["method"] != "GET":
        await plain(send, 405, b"Method Not Allowed", extra=[(b"allow", b"GET")])
        return
    body = orjson.dumps(metadata.document(resource))
    extra = [(b"access-control-allow-origin", b"*"), (b"cache-control", b"max-age=300")]
    await send({"type": "http.response.start", "status": 200, "headers": [*json_headers(body), *extra]})
    await send({"type": "http.response.body", "body": body})
