"""The scopes a third-party provider granted, against the ones its configuration asks for
(``OAuthProvider.scopes``).

Rules:

* A token answer's ``scope`` is what was granted; without one, what was asked (RFC 6749
  section 3.3), and the tokens are recorded with the scopes asked, so that a scope added to
  the configuration later is known to be missing. A refresh answer without ``scope``
  keeps the one before (section 6). Commas separate scopes too: GitHub lists the scopes
  it granted so ("repo,read:org"); RFC 6749 allows a comma inside a scope name, but no
  provider known to us uses one. The scope is kept as the provider wrote it.
* Providers do not echo every name as asked. A scope asked is granted when (the whole
  rule; names compare without regard to case: RFC 6749 section 3.3 makes them
  case-sensitive, but Microsoft's docs ask for ``user.read`` and Entra writes ``User.Read``,
  and a refused sign-in costs more than two scopes told apart by case alone):
  1. a scope written is that name; or
  2. a scope written with a ``/`` (a URL, or a resource-prefixed name) has a last
     segment (after its last ``/``) that is the name or ends with ``.`` and the name, and
     the name asked has no ``/`` itself: Google writes ``email`` as
     ``https://www.googleapis.com/auth/userinfo.email``, Microsoft ``User.Read`` as
     ``https://graph.microsoft.com/User.Read``; ``.../userinfo.email`` is no ``mail``; or
  3. a scope written has no ``/`` and is the last segment of the name asked: Microsoft,
     asked ``https://graph.microsoft.com/User.Read``, writes ``User.Read`` (Graph's names
     bare); or
  4. the name ends with ``/.default`` (Microsoft: every permission configured for that
     resource, never written back) and the answer wrote any scope: those are what it
     stands for; or
  5. the name is ``offline_access`` and the answer carries a refresh token (OpenID
     Connect Core section 11: that is what it grants; Microsoft leaves it out of ``scope``).
  Rule 2 can be fooled only by a short name asked that a longer scope's last part ends
  with (``readonly`` by ``.../drive.readonly``): ask for such scopes by their full name.
* Tokens whose scope lacks a scope the configuration asks for are no connection: a grant
  that comes back so is not kept, and its flow fails ``insufficient_scope`` (the tool
  hears which scopes are missing, what was asked and what the provider wrote:
  ``OAuthError``); stored tokens so (stored before the scope was added, or narrowed by a
  refresh) count as absent, so ``ctx.connect`` asks again. Tokens recorded without a
  scope (by an older version) are taken as they are.
* A provider whose names cannot be matched so is registered with
  ``check_granted_scopes=False``: nothing is refused for its scopes; a grant lacking
  some is kept, and logged at INFO.
* Which scopes a failed flow missed (and what was granted) is kept in the store under the
  flow's id (until the flow expires), so whichever instance runs the tool can say so.
  Scope names are not secret; they are logged and shown to the tool (the provider's
  ``scope`` quoted, cut at 300 characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import orjson

from mcp_elicit.errors import OAuthError
from mcp_elicit.stores.base import Store

__all__ = [
    "INSUFFICIENT",
    "described",
    "missing_for_flow",
    "missing_scopes",
    "note_missing",
    "shortfall",
    "switch_off",
]

INSUFFICIENT: Final = "insufficient_scope"
OFFLINE: Final = "offline_access"
#: Microsoft's name for every permission configured for a resource (``{resource}/.default``).
_DEFAULT: Final = "/.default"
_NAMESPACE: Final = "oauth"


def missing_scopes(
    asked: Sequence[str], granted: str | None, *, refresh_token: bool = False
) -> tuple[str, ...]:
    """The scopes of ``asked`` that ``granted`` (space-separated, RFC 6749 section 3.3, or
    comma-separated as GitHub writes it) lacks by the rule in the module docstring, in the
    order asked; ``refresh_token``: the answer carried one. None are missing when nothing
    was recorded (``None``)."""
    if granted is None:
        return ()
    written = granted.replace(",", " ").casefold().split()
    return tuple(
        name
        for name in asked
        if not (name.casefold() == OFFLINE and refresh_token)
        and not (name.casefold().endswith(_DEFAULT) and written)
        and not any(_grants(scope, name.casefold()) for scope in written)
    )


def _grants(written: str, asked: str) -> bool:
    if written == asked:
        return True
    if "/" not in written:  # a bare name written for a resource-prefixed one asked (Microsoft Graph)
        return "/" in asked and asked.rsplit("/", 1)[1] == written
    if "/" in asked:
        return False
    last = written.rsplit("/", 1)[1]
    return last == asked or last.endswith("." + asked)


def described(asked: Sequence[str], granted: str | None, missing: Sequence[str]) -> str:
    """What was missing, what was asked and what was granted, as the provider wrote it."""
    written = repr(granted[:300]) if granted is not None else "nothing"
    return f"missing: {' '.join(missing)}; asked: {' '.join(asked)}; granted: {written}"


def switch_off(provider: str) -> str:
    """How to stop checking the scopes ``provider`` grants."""
    return (
        f"if {provider} writes the scopes it grants in names of its own, turn this check off "
        "for it: Server.oauth_provider(..., check_granted_scopes=False)"
    )


def shortfall(provider: str, asked: Sequence[str], granted: str | None, missing: Sequence[str]) -> OAuthError:
    """The error a tool gets when the provider granted less than asked."""
    return OAuthError(
        INSUFFICIENT,
        f"{provider} granted fewer scopes than asked ({described(asked, granted, missing)}); not "
        "connected. Connect again and allow them all, or ask the provider's administrator to "
        f"allow them for this client; {switch_off(provider)}",
    )


async def note_missing(
    store: Store, flow_id: str, missing: Sequence[str], granted: str | None, ttl: float
) -> None:
    """Record what the grant of ``flow_id`` missed (and what it granted), for the tool
    waiting on that flow."""
    record = orjson.dumps({"missing": list(missing), "granted": granted})
    await store.put(_NAMESPACE, _key(flow_id), record, ttl=max(ttl, 1.0))


async def missing_for_flow(store: Store, flow_id: str) -> tuple[tuple[str, ...], str | None]:
    """What the grant of ``flow_id`` missed (none when it missed nothing, or is gone), and
    what it granted."""
    raw = await store.get(_NAMESPACE, _key(flow_id))
    if raw is None:
        return (), None
    try:
        record = orjson.loads(raw)
        missing, granted = record["missing"], record.get("granted")
        return tuple(str(name) for name in missing), granted if isinstance(granted, str) else None
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):  # noted by an older version
        return tuple(raw.decode("utf-8", "replace").split()), None


def _key(flow_id: str) -> str:
    return f"missing:{flow_id}"
