"""The HTTP side of third-party sign-in: token requests to a provider's token endpoint,
and HTTP clients that carry a connection's access token (httpx).

Rules:

* ``HttpTokenExchange`` is the ``TokenExchange`` the HTTP and stdio transports install.
  Each token request is one POST (authlib encodes the body and the client
  authentication: HTTP Basic with a client secret, ``client_id`` in the body without
  one), no redirects followed, the answer read no further than 64 KiB. ``timeout`` bounds
  the whole request, not each network read: a provider that answers a byte at a time
  does not hold the callback (and the browser waiting on it) past it.
  The answer is asked for uncompressed (``Accept-Encoding: identity``); one compressed all
  the same is refused unread (the cap counts decoded bytes, and httpx inflates a whole
  network read at once: a few KB of gzip become megabytes before the cap is checked).
  An access token that is not visible ASCII is refused (``invalid_response``): in the
  ``Authorization`` header of a tool's request, httpx would refuse it in a message quoting it.
* An OAuth error answer (4xx with ``error``) raises ``OAuthError(refused=True)``: the grant
  is dead. No answer, a 5xx or an unreadable one raises ``OAuthError(refused=False)``, and
  so does an error that is not about the grant: the provider busy (408, 429,
  ``temporarily_unavailable``, ``server_error``, ``slow_down``) or refusing the server's own
  client credentials (``invalid_client``, ``unauthorized_client``: the operator's to fix,
  which no new sign-in by the user would help).
* ``revoke`` is one RFC 7009 request to the provider's ``revocation_url`` (``token`` and
  ``token_type_hint``), sent as a token request is (the same client authentication,
  timeout, cap and redirects refused); anything but 200 raises ``OAuthError``.
  Neither carries the request or the answer body: codes, verifiers and tokens stay out of
  messages and logs.
* ``authorized_client(connection)`` is an ``httpx.AsyncClient`` whose every request asks
  the connection for its access token (refreshed when expired) just before it is sent.
  A 401 to it (the provider stopped taking the token before its announced expiry: revoked,
  rotated) refreshes the tokens and sends the request once more; when they cannot be
  refreshed they are dropped (the next ``ctx.connect`` asks again) and the 401 is the answer.
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Final

import httpx
import orjson

from mcp_elicit.errors import ConfigError, OAuthError
from mcp_elicit.server.oauth import Connection, OAuthProvider, authlib
from mcp_elicit.transports.http_documents import read_capped

__all__ = ["BearerAuth", "HttpTokenExchange", "authorized_client"]

MAX_ANSWER: Final = 64 * 1024
_ERROR_CODE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_HEADER_SAFE: Final = re.compile(r"[\x21-\x7e]+")
_NOT_NOW: Final = frozenset({"temporarily_unavailable", "server_error", "slow_down"})
_NOT_THIS_CLIENT: Final = frozenset({"invalid_client", "unauthorized_client"})


class HttpTokenExchange:
    """Token requests over HTTP (``TokenExchange``)."""

    def __init__(self, *, timeout: float = 15.0, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout = timeout
        self.transport = transport

    async def exchange(
        self, provider: OAuthProvider, code: str, verifier: str, redirect_uri: str
    ) -> Mapping[str, Any]:
        body = authlib("oauth2.rfc6749.parameters").prepare_token_request(
            "authorization_code", code=code, redirect_uri=redirect_uri, code_verifier=verifier
        )
        return await self._post(provider, body)

    async def refresh(self, provider: OAuthProvider, refresh_token: str) -> Mapping[str, Any]:
        body = authlib("oauth2.rfc6749.parameters").prepare_token_request(
            "refresh_token", refresh_token=refresh_token
        )
        return await self._post(provider, body)

    def client(self, connection: Connection, **options: Any) -> httpx.AsyncClient:
        return authorized_client(connection, **options)

    async def revoke(self, provider: OAuthProvider, token: str, hint: str) -> None:
        """Revoke ``token`` (RFC 7009) at ``provider.revocation_url``, authenticated as at
        the token endpoint: ``OAuthError`` unless the provider answers 200."""
        if provider.revocation_url is None:
            raise ConfigError(f"OAuth provider {provider.name!r} has no revocation_url")
        body = urllib.parse.urlencode({"token": token, "token_type_hint": hint})
        status, content = await self._send(provider, provider.revocation_url, "revocation endpoint", body)
        if status != 200:
            answer = _json(content)
            error = answer.get("error") if isinstance(answer, dict) else None
            code = error if isinstance(error, str) and _ERROR_CODE.fullmatch(error) else "revocation_failed"
            raise OAuthError(
                code,
                f"the revocation endpoint of {provider.name} answered HTTP {status}",
                refused=400 <= status < 500,
            )

    async def _post(self, provider: OAuthProvider, body: str) -> Mapping[str, Any]:
        status, content = await self._send(provider, provider.token_url, "token endpoint", body)
        answer = _json(content)
        if status == 200 and isinstance(answer, dict) and "access_token" in answer:
            token = answer["access_token"]
            if isinstance(token, str) and _HEADER_SAFE.fullmatch(token) is None:
                raise OAuthError(
                    "invalid_response",
                    f"the token endpoint of {provider.name} gave an access_token with characters no "
                    "Authorization header can carry (a space, a control character or non-ASCII); not used",
                    refused=False,
                )
            return answer
        error = answer.get("error") if isinstance(answer, dict) else None
        if isinstance(error, str) and _ERROR_CODE.fullmatch(error) and 400 <= status < 500:
            if status in (408, 429) or error in _NOT_NOW:
                raise OAuthError(
                    error,
                    f"the token endpoint of {provider.name} cannot serve the request now ({error}, HTTP {status})",
                    refused=False,
                )
            if error in _NOT_THIS_CLIENT:
                raise OAuthError(
                    error,
                    f"{provider.name} does not accept this server's client_id or client_secret ({error}): "
                    "the server's configuration must change",
                    refused=False,
                )
            raise OAuthError(error, f"{provider.name} refused the token request ({error})")
        raise OAuthError(
            "invalid_response",
            f"the token endpoint of {provider.name} answered HTTP {status} without tokens",
            refused=False,
        )

    async def _send(self, provider: OAuthProvider, url: str, what: str, body: str) -> tuple[int, bytes]:
        """POST ``body`` to ``url`` with the client authentication of the token endpoint:
        the answer's status and body (capped, uncompressed)."""
        method = "client_secret_basic" if provider.client_secret else "none"
        client_auth = authlib("oauth2.auth").ClientAuth(provider.client_id, provider.client_secret, method)
        headers = {
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        url, headers, body = client_auth.prepare("POST", url, headers, body)
        try:
            async with (
                asyncio.timeout(self.timeout),
                httpx.AsyncClient(
                    timeout=self.timeout, transport=self.transport, follow_redirects=False
                ) as http,
                http.stream("POST", url, content=body.encode("utf-8"), headers=headers) as response,
            ):
                coding = response.headers.get("content-encoding", "").strip().lower()
                if coding not in ("", "identity"):
                    raise OAuthError(
                        "invalid_response",
                        f"the {what} of {provider.name} answered compressed ({coding[:32]}), "
                        "though asked for no compression (Accept-Encoding: identity); not read",
                        refused=False,
                    )
                return response.status_code, await read_capped(response.aiter_bytes(), MAX_ANSWER)
        except (httpx.HTTPError, TimeoutError) as exc:
            raise OAuthError(
                "unreachable",
                f"the {what} of {provider.name} did not answer ({type(exc).__name__})",
                refused=False,
            ) from None
        except ValueError as exc:  # over the cap: not read further
            raise OAuthError(
                "invalid_response", f"the {what} of {provider.name}: {exc}", refused=False
            ) from None


def _json(content: bytes) -> Any:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return None


class BearerAuth(httpx.Auth):
    """Puts the connection's current access token on each request."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self.connection.token()
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code != 401:
            return
        fresh = await self.connection.refused(token)
        if fresh is not None and fresh != token and isinstance(request.stream, httpx.ByteStream):
            request.headers["Authorization"] = f"Bearer {fresh}"
            yield request


def authorized_client(connection: Connection, **options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` (``options`` are its arguments) authorized as
    ``connection``; use it with ``async with``."""
    return httpx.AsyncClient(auth=BearerAuth(connection), **options)
