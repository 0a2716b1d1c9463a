"""A principal's share of something the server bounds per principal (sessions,
subscriptions, URL-mode pages), and the refusal of one more past it.

Rules: the refusal is ``PrincipalLimitReached`` (-32600, HTTP 429: the caller's own
doing, which it can undo), its message naming who holds how many, the option that sets
the share and what makes room; ``data`` names the option (``limit``) and its value
(``most``). Unauthenticated callers are one principal.
"""

from __future__ import annotations

from mcp_elicit.errors import PrincipalLimitReached

__all__ = ["share_held"]


def share_held(
    what: str, principal: str | None, most: int, option: str, remedy: str
) -> PrincipalLimitReached:
    """``principal`` (None: unauthenticated callers) holds ``most`` ``what``, the value of
    ``option``; ``remedy`` says how to make room."""
    who = "unauthenticated callers hold" if principal is None else f"principal {principal!r} holds"
    return PrincipalLimitReached(
        f"Too many {what}: {who} {most}, the limit for one principal ({option}); {remedy}",
        {"limit": option, "most": most},
    )
