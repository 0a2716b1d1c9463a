"""What a third-party provider's token endpoint gave (``Tokens``): kept sealed in the vault
(``server/oauth.py``), never shown.

Rules:

* An answer without a usable access token, or with a token that is not Bearer, raises
  ``OAuthError`` that is not a refusal (the grant may still be good).
* A refresh answer without a new refresh token, or without ``scope``, keeps the previous
  one (RFC 6749 section 6). ``expires_in`` that cannot be read leaves the expiry open.
* ``repr`` never shows a token; a stored record that cannot be read loads as None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcp_elicit.errors import OAuthError

__all__ = ["Tokens"]


@dataclass(frozen=True, slots=True)
class Tokens:
    """What a token endpoint gave: kept sealed in the vault, never shown."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None

    @classmethod
    def from_response(
        cls, payload: Mapping[str, Any], *, now: float, previous: Tokens | None = None
    ) -> Tokens:
        """Tokens from a token endpoint answer; a refresh answer without a new refresh token
        keeps the previous one (RFC 6749 section 6). An answer without a usable access
        token raises ``OAuthError`` that is not a refusal: the grant may still be good."""
        access = payload.get("access_token")
        if not isinstance(access, str) or not access:
            raise OAuthError(
                "invalid_response", "the token endpoint answered without an access token", refused=False
            )
        token_type = payload.get("token_type", "Bearer")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise OAuthError(
                "unsupported_token_type",
                "the token endpoint issued a token that is not Bearer",
                refused=False,
            )
        refresh = payload.get("refresh_token")
        if not isinstance(refresh, str) or not refresh:
            refresh = previous.refresh_token if previous is not None else None
        expires_at = None
        lifetime = _seconds(payload.get("expires_in"))
        if lifetime is not None:
            expires_at = now + lifetime
        scope = payload.get("scope")
        if not isinstance(scope, str):
            scope = previous.scope if previous is not None else None
        return cls(access, "Bearer", refresh, expires_at, scope)

    def expired(self, now: float, leeway: float = 0.0) -> bool:
        return self.expires_at is not None and self.expires_at - leeway <= now

    def dumps(self) -> bytes:
        return orjson.dumps(
            {
                "access_token": self.access_token,
                "token_type": self.token_type,
                "refresh_token": self.refresh_token,
                "expires_at": self.expires_at,
                "scope": self.scope,
            }
        )

    @classmethod
    def loads(cls, raw: bytes) -> Tokens | None:
        try:
            data = orjson.loads(raw)
            refresh, expires_at, scope = data.get("refresh_token"), data.get("expires_at"), data.get("scope")
            return cls(
                access_token=str(data["access_token"]),
                token_type="Bearer",
                refresh_token=refresh if isinstance(refresh, str) else None,
                expires_at=float(expires_at) if isinstance(expires_at, (int, float)) else None,
                scope=scope if isinstance(scope, str) else None,
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            return None


def _seconds(value: object) -> float | None:
    """A positive ``expires_in`` (a number, or digits in a string), else None."""
    if isinstance(value, str) and len(value) <= 20 and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 10**9:
        return float(value)
    return None
