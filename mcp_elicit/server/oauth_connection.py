"""A principal's connection to a third-party provider (``Connection``), the handle a tool
gets from ``ctx.connect`` (``ConnectAnswer``); the tokens stay in ``OAuthConnections``
(``server/oauth.py``).

Rules:

* A ``Connection`` holds no token: each ``token()`` asks for the stored one (refreshed
  first when expired), so a connection kept by a tool never uses a token forgotten since.
* ``repr`` and ``str`` never show a token; never return one to the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_elicit.errors import OAuthError

if TYPE_CHECKING:
    from mcp_elicit.server.oauth import OAuthConnections

__all__ = ["ConnectAnswer", "Connection"]


class Connection:
    """A principal's connection to a third-party provider; a server-side handle.

    ``await connection.token()`` is a usable access token (refreshed first when expired);
    ``connection.client()`` an HTTP client (``httpx.AsyncClient``) that sends it;
    ``await connection.forget()`` drops the tokens (and revokes them). Never return the token to the client.
    """

    __slots__ = ("_oauth", "_principal", "provider")

    def __init__(self, oauth: OAuthConnections, provider: str, principal: str | None) -> None:
        self.provider = provider
        self._oauth = oauth
        self._principal = principal

    async def token(self) -> str:
        """The access token, refreshed first when it expired. ``OAuthError`` when there is
        none any more (forgotten, or the provider refused the refresh: ``ctx.connect``
        asks again) or the provider cannot be reached."""
        tokens = await self._oauth.usable(self.provider, self._principal)
        if tokens is None:
            raise OAuthError(
                "not_connected", f"not connected to {self.provider} any more: ask again with ctx.connect"
            )
        return tokens.access_token

    async def headers(self) -> dict[str, str]:
        """The ``Authorization`` header for a request to the provider's API."""
        return {"Authorization": f"Bearer {await self.token()}"}

    async def refused(self, token: str) -> str | None:
        """The provider's API refused ``token`` (401) before its time: a new access token
        (refreshed), or None when there is none (then the tokens are dropped and the next
        ``ctx.connect`` asks again)."""
        tokens = await self._oauth.refused(self.provider, self._principal, token)
        return tokens.access_token if tokens is not None else None

    def client(self, **options: Any) -> Any:
        """An ``httpx.AsyncClient`` (``options`` are its arguments) whose every request
        carries a fresh access token. Use it with ``async with``."""
        return self._oauth.exchange.client(self, **options)

    async def forget(self) -> bool:
        """Drop the tokens (revoked at the provider, when it has a ``revocation_url``); the
        next ``ctx.connect`` asks again."""
        return await self._oauth.disconnect(self.provider, self._principal)

    def __repr__(self) -> str:
        return f"<Connection to {self.provider!r} (tokens hidden)>"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class ConnectAnswer:
    """``ctx.connect``'s answer: ``connection`` is set when ``action`` is accept."""

    action: Literal["accept", "decline", "cancel"]
    connection: Connection | None = None
