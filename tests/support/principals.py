"""Stand-ins for sign-in on test servers: ``Tokens`` for the MCP endpoint (the bearer token
``tok-<name>`` is the principal ``<name>``) and ``CookieAuth`` for the server's own pages (the
browser says who it is in its ``who`` cookie)."""

from __future__ import annotations

from collections.abc import Mapping

from mcp_elicit import Principal

__all__ = ["CookieAuth", "Tokens"]


class Tokens:
    """``tok-<name>`` is the principal ``<name>``; any other token is refused."""

    async def verify(self, token: str) -> Principal | None:
        return Principal(token.removeprefix("tok-")) if token.startswith("tok-") else None


class CookieAuth:
    """Whoever the browser's ``who`` cookie names is signed in to the site."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return cookies.get("who")
