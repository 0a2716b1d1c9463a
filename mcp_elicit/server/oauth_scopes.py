"""The scopes a third-party provider granted, against the ones its configuration asks for
(``OAuthProvider.scopes``).

Rules:

* A token answer's ``scope`` is what was granted; without one, what was asked (RFC 6749
  section 3.3), and the tokens are recorded with the scopes asked, so that a scope added to
  the configuration later is known to be missing. A refresh answer without ``scope``
  keeps the one before (section 6). Commas separate scopes too: GitHub lists the scopes
  it granted so ("repo,read:org"); RFC 6749 allows a comma inside a scope name, but no
  provider known to us uses one.
* Tokens whose scope lacks a scope the configuration asks for are no connection: a grant
  that comes back so is not kept, and its flow fails ``insufficient_scope`` (the tool
  hears which scopes are missing: ``OAuthError``); stored tokens so (stored before the
  scope was added, or narrowed by a refresh) count as absent, so ``ctx.connect`` asks
  again. Tokens recorded without a scope (by an older version) are taken as they are.
* Which scopes a failed flow missed is kept in the store under the flow's id (until the
  flow expires), so whichever instance runs the tool can say so. Scope names are not
  secret; they are logged and shown to the tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mcp_elicit.errors import OAuthError
from mcp_elicit.stores.base import Store

__all__ = ["INSUFFICIENT", "missing_scopes", "missing_for_flow", "note_missing", "shortfall"]

INSUFFICIENT: Final = "insufficient_scope"
_NAMESPACE: Final = "oauth"


def missing_scopes(asked: Sequence[str], granted: str | None) -> tuple[str, ...]:
    """The scopes of ``asked`` that ``granted`` (space-separated, RFC 6749 section 3.3, or
    comma-separated as GitHub writes it) lacks, in the order asked; none when nothing was
    recorded (``None``)."""
    if granted is None:
        return ()
    have = set(granted.replace(",", " ").split())
    return tuple(scope for scope in asked if scope not in have)


def shortfall(provider: str, missing: Sequence[str]) -> OAuthError:
    """The error a tool gets when the provider granted less than asked."""
    return OAuthError(
        INSUFFICIENT,
        f"{provider} granted fewer scopes than asked (missing: {' '.join(missing)}); not connected. "
        "Connect again and allow them all, or ask the provider's administrator to allow them "
        "for this client",
    )


async def note_missing(store: Store, flow_id: str, missing: Sequence[str], ttl: float) -> None:
    """Record what the grant of ``flow_id`` missed, for the tool waiting on that flow."""
    await store.put(_NAMESPACE, _key(flow_id), " ".join(missing).encode(), ttl=max(ttl, 1.0))


async def missing_for_flow(store: Store, flow_id: str) -> tuple[str, ...]:
    """What the grant of ``flow_id`` missed: none when it missed nothing (or is gone)."""
    raw = await store.get(_NAMESPACE, _key(flow_id))
    return tuple(raw.decode("utf-8", "replace").split()) if raw is not None else ()


def _key(flow_id: str) -> str:
    return f"missing:{flow_id}"
