"""Authentication hook: who is calling.

Rules: on Streamable HTTP a server may carry a ``TokenVerifier``; each request's
``Authorization: Bearer <token>`` goes through it and yields a ``Principal`` or is refused
with 401 and a ``WWW-Authenticate`` challenge. stdio has no principal (credentials come
from the environment there). State that involves a user (sealed ``requestState``, URL-mode
flows, sessions) is bound to ``Principal.subject``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Principal", "StaticTokens", "TokenVerifier"]


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller. ``subject`` is the stable identity state is bound to."""

    subject: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)


class TokenVerifier(Protocol):
    """Turns a bearer token into a Principal, or None when the token is not valid."""

    async def verify(self, token: str) -> Principal | None: ...


class StaticTokens:
    """A fixed token → subject table, for tests, demos and single-tenant deployments."""

    def __init__(self, tokens: Mapping[str, str | Principal]) -> None:
        self._tokens = {
            token: p if isinstance(p, Principal) else Principal(subject=p) for token, p in tokens.items()
        }

    async def verify(self, token: str) -> Principal | None:
        return self._tokens.get(token)


class CallableVerifier:
    """Adapts ``async def verify(token) -> Principal | None`` to ``TokenVerifier``."""

    def __init__(self, fn: Callable[[str], Awaitable[Principal | None]]) -> None:
        self._fn = fn

    async def verify(self, token: str) -> Principal | None:
        return await self._fn(token)
