"""Revoking tokens a third-party sign-in throws away (RFC 7009), so that they do not stay
valid at the provider, unused.

Rules:

* Tokens are thrown away when one of two sign-ins of a flow that came back at once is
  kept (``transports/page_save``) or the flow ended while its token request ran, when a
  grant is narrower than asked (``oauth_scopes``: ``insufficient_scope``), when a refresh
  narrowed it, and when the tool forgets a connection (``Connection.forget``).
* They are revoked only while no connection to that provider is stored for the person
  (``OAuthConnections.discard``): RFC 7009 lets a provider end the whole grant with any
  one of its tokens, and the kept connection would end too. A store that cannot say
  whether one is stored leaves them unrevoked, with a warning.
* And only when the provider names a revocation endpoint
  (``OAuthProvider.revocation_url``; not every provider has one): the refresh token first
  (RFC 7009 section 2.1: the provider then ends the access tokens of its grant too), then
  the access token, each with its ``token_type_hint``. The requests go through the
  installed ``TokenExchange`` when it can revoke (``Revoker``), with the token endpoint's
  client authentication.
* A provider answering ``invalid_token`` says the token is not valid there any more: no
  failure, logged at INFO. (RFC 7009 answers 200 for such a token, but Google's endpoint
  answers 400 ``invalid_token`` for one already revoked, as the access token is once its
  refresh token was.)
* Best effort: a revocation that fails (refused, the provider unreachable, slower than
  ``wait`` seconds for both) is logged at WARNING, naming the provider, the reason and
  which token, never the token; when the time runs out, the token in flight and each one
  then never tried are named. It never fails what threw the tokens away.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from mcp_elicit.errors import OAuthError

if TYPE_CHECKING:
    from mcp_elicit.server.oauth_provider import OAuthProvider
    from mcp_elicit.server.oauth_tokens import Tokens

__all__ = ["REVOKE_WAIT", "Revoker", "revoke"]

#: Seconds the revocations of one set of tokens may take, at most, all told.
REVOKE_WAIT: Final = 10.0

log = logging.getLogger("mcp_elicit.oauth")


@runtime_checkable
class Revoker(Protocol):
    """A ``TokenExchange`` that revokes too: one RFC 7009 request to the provider's
    ``revocation_url``; raises ``OAuthError`` when the provider did not take it."""

    async def revoke(self, provider: OAuthProvider, token: str, hint: str) -> None: ...


async def revoke(exchange: object, provider: OAuthProvider, tokens: Tokens, why: str, wait: float) -> int:
    """Revoke ``tokens`` (thrown away because ``why``) at ``provider``, best effort: how many
    the provider took (0 when it names no revocation endpoint)."""
    if provider.revocation_url is None:
        return 0
    if not isinstance(exchange, Revoker):
        log.warning(
            "cannot revoke the tokens of %s (%s): the token exchange does not revoke", provider.name, why
        )
        return 0
    pending = [
        (hint, token)
        for hint, token in (("refresh_token", tokens.refresh_token), ("access_token", tokens.access_token))
        if token
    ]
    taken = tried = 0
    try:
        async with asyncio.timeout(wait):
            for hint, token in pending:
                try:
                    await exchange.revoke(provider, token, hint)
                except OAuthError as exc:
                    if exc.error != "invalid_token":
                        _failed(provider, hint, why, _reason(exc))
                    else:  # not valid there any more: nothing stays valid
                        log.info(
                            "the %s of %s thrown away (%s) was no longer valid there",
                            hint,
                            provider.name,
                            why,
                        )
                except Exception as exc:  # best effort: whatever went wrong is only logged
                    _failed(provider, hint, why, _reason(exc))
                else:
                    taken += 1
                tried += 1
    except TimeoutError as exc:  # the one in flight is not revoked, nor any after it (never tried)
        for i, (hint, _) in enumerate(pending[tried:]):
            _failed(
                provider,
                hint,
                why,
                _reason(exc) if i == 0 else f"not tried, the {wait:g} s given to revoking ran out",
            )
    if taken:
        log.info("revoked %d token(s) of %s thrown away (%s)", taken, provider.name, why)
    return taken


def _reason(exc: BaseException) -> str:
    """What a failed revocation says in the log: the provider's error, else the exception's name."""
    return exc.error if isinstance(exc, OAuthError) else type(exc).__name__


def _failed(provider: OAuthProvider, hint: str, why: str, reason: str) -> None:
    log.warning(
        "could not revoke the %s of %s thrown away (%s): %s; it stays valid at the provider until it expires",
        hint,
        provider.name,
        why,
        reason,
    )
