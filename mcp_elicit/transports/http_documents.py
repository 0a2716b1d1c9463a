"""The authorization flow's own HTTP requests (``transports.http_auth``): metadata
documents found and fetched (RFC 9728, RFC 8414 / OpenID discovery, in the order
``core.authorization`` gives), registrations and token requests posted.

Rules: the caller's ``httpx.AsyncClient`` never follows redirects; an answer is read up to
256 KiB and no further, and is asked for uncompressed (``Accept-Encoding: identity``): one
compressed all the same is refused unread (the cap counts decoded bytes, and httpx inflates
a whole network read at once, a few KB of gzip to megabytes); a network failure is an :class:`AuthorizationError` naming the URL
and the kind of failure, never the request's body (it may hold a code or a secret); a
proxy's failure also says which proxy and what it did (``transports.http_proxy`` words it).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any, Final

import httpx
import orjson

from mcp_elicit.core import authorization as oauth
from mcp_elicit.core.authorization_urls import authorization_server_metadata_urls, protected_resource_urls
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.telemetry import redact_urls

__all__ = [
    "MAX_DOCUMENT",
    "authorization_server",
    "discover",
    "get_json",
    "post",
    "protected_resource",
    "read_capped",
]

MAX_DOCUMENT: Final = 256 * 1024
_IDENTITY: Final = {"Accept-Encoding": "identity"}

log = logging.getLogger("mcp_elicit.transports.http_auth")


async def get_json(http: httpx.AsyncClient, url: str) -> object | None:
    """The JSON document at ``url``; None when there is none (4xx, or not JSON)."""
    try:
        async with http.stream("GET", url, headers={"Accept": "application/json", **_IDENTITY}) as response:
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


async def post(http: httpx.AsyncClient, url: str, **options: Any) -> tuple[int, object, httpx.Headers]:
    """POST to ``url``: the status, the answer's JSON (None if it has none) and its headers."""
    options["headers"] = {**(options.get("headers") or {}), **_IDENTITY}
    try:
        async with http.stream("POST", url, **options) as response:
            body = await _read_capped(response, url)
            status = response.status_code
    except httpx.ProxyError as exc:  # worded by the flow (transports.http_proxy): the proxy named
        raise AuthorizationError(f"could not reach {url} ({type(exc).__name__}: {exc})") from None
    except httpx.HTTPError as exc:
        raise AuthorizationError(f"could not reach {url} ({type(exc).__name__})") from None
    try:
        return status, orjson.loads(body) if body else None, response.headers
    except orjson.JSONDecodeError:
        return status, None, response.headers


async def protected_resource(
    http: httpx.AsyncClient, server_url: str, challenge: oauth.Challenge
) -> oauth.ProtectedResource | None:
    """The protected resource metadata of the MCP server at ``server_url``, checked; None
    when the server publishes none and its challenge names none (a 2025-03-26 server)."""
    urls = protected_resource_urls(server_url, challenge.resource_metadata)
    for url in urls:
        found = await get_json(http, url)
        if found is not None:
            return oauth.read_protected_resource(found, server_url, url)
    if challenge.resource_metadata is None:
        return None
    raise AuthorizationError(
        f"{server_url} asks for authorization but publishes no protected resource metadata "
        f"(tried {', '.join(urls)})"
    )


async def discover(
    http: httpx.AsyncClient, server_url: str, challenge: oauth.Challenge
) -> tuple[oauth.ProtectedResource, oauth.AuthorizationServer]:
    """What the server at ``server_url`` says about itself and its first authorization
    server, checked. For a server that publishes nothing (2025-03-26), what its origin says."""
    resource = await protected_resource(http, server_url, challenge)
    if resource is None:
        log.info(
            "%s publishes no protected resource metadata: its origin authorizes", redact_urls(server_url)
        )
        resource = oauth.legacy_resource(server_url)
    issuer = resource.authorization_servers[0]
    return resource, await authorization_server(http, issuer, legacy=resource.legacy)


async def authorization_server(
    http: httpx.AsyncClient, issuer: str, *, legacy: bool = False
) -> oauth.AuthorizationServer:
    """The metadata of the authorization server ``issuer``, checked. ``legacy``: the
    2025-03-26 authorization base URL of a server, whose default endpoints stand in for
    metadata it does not publish."""
    urls = authorization_server_metadata_urls(issuer)
    for url in urls:
        found = await get_json(http, url)
        if found is not None:
            return oauth.read_authorization_server(found, issuer, url)
    if legacy:
        return oauth.default_endpoints(issuer)
    raise AuthorizationError(f"no authorization server metadata for {issuer} (tried {', '.join(urls)})")


async def read_capped(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """The bytes of ``chunks``, read no further than ``limit``: past it, ``ValueError``
    naming the limit (the HTTP client's answers, the flow's and the token exchange's)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            shown = f"{limit // 1024 // 1024} MiB" if limit % (1024 * 1024) == 0 else f"{limit // 1024} KiB"
            raise ValueError(f"the answer is larger than {shown}")
        parts.append(chunk)
    return b"".join(parts)


async def _read_capped(response: httpx.Response, url: str) -> bytes:
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):
        raise AuthorizationError(
            f"{url} answered compressed ({coding[:32]}), though asked for no compression "
            "(Accept-Encoding: identity); not read"
        )
    try:
        return await read_capped(response.aiter_bytes(), MAX_DOCUMENT)
    except ValueError:
        raise AuthorizationError(f"{url} answered more than {MAX_DOCUMENT // 1024} KiB") from None
