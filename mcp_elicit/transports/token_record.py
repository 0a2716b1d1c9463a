"""One MCP server's record in a ``TokenStore`` (``transports.token_store``), as an
:class:`~mcp_elicit.transports.http_auth.OAuth` shares it with other processes and clients
that use the same store: read, written, held under the store's lock, read again.

Rules:

* A record that does not read back is ignored (logged, and replaced at the next save),
  never trusted in part; tokens bound to a DPoP key that is not in the record, or does not
  read back, are not used. A save that fails is logged: the tokens still serve this run.
* A refresh token is spent once, whoever shares it: a refresh runs inside
  :meth:`SharedRecord.holding` (the store's lock on the record, across read, refresh and
  save) and first asks :meth:`SharedRecord.newer` whether someone saved other tokens
  meanwhile, which are then used (or refreshed) instead.
* The lock is waited for ``lock_timeout`` seconds at most, then an
  :class:`AuthorizationError` says who holds it; a holder that dies lets go (the file
  store's ``flock`` is released by the kernel). A store without ``locked`` (written before
  it was part of ``TokenStore``) still works, unlocked: the record is still read again.
* A line or an error names the record by its key, the server's URL, redacted (``redact_uri``:
  the key keeps any user name and password the URL was given).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from mcp_elicit.core.dpop import DpopKey
from mcp_elicit.core.token_endpoint import Tokens
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_dpop import DpopProver
from mcp_elicit.transports.token_store import Stored, TokenStore
from mcp_elicit.url_redaction import redact_uri

__all__ = ["SharedRecord", "usable_tokens"]

log = logging.getLogger(__name__)


class SharedRecord:
    """The record under ``key`` (an MCP server URL) in ``store``."""

    def __init__(self, store: TokenStore, key: str, *, lock_timeout: float) -> None:
        self.store = store
        self.key = key
        self.lock_timeout = lock_timeout

    async def read(self) -> Stored | None:
        """The record (None: there is none, or it does not read back)."""
        record = await self.store.load(self.key)
        try:
            return Stored.from_record(record) if record is not None else None
        except ValueError as exc:
            log.warning("ignoring the stored authorization for %s (%s)", redact_uri(self.key), exc)
            return None

    async def write(self, stored: Stored) -> None:
        try:
            await self.store.save(self.key, stored.to_record())
        except OSError as exc:
            log.warning("could not save the authorization for %s: %s", redact_uri(self.key), exc)

    @contextlib.asynccontextmanager
    async def holding(self) -> AsyncIterator[None]:
        """The record for this client alone until the block ends (a store without
        ``locked``, written before it was part of ``TokenStore``, is not locked)."""
        locked = getattr(self.store, "locked", None)
        async with contextlib.AsyncExitStack() as stack:
            try:
                if locked is not None:
                    await stack.enter_async_context(locked(self.key, timeout=self.lock_timeout))
            except TimeoutError as exc:
                raise AuthorizationError(
                    f"the stored authorization for {redact_uri(self.key)} is locked by another process (or "
                    f"client) refreshing it, and was not let go within {self.lock_timeout:g} s "
                    f"({exc}); try again once it has finished"
                ) from None
            yield

    async def newer(self, held: Tokens, issuer: str | None) -> Stored | None:
        """The record, when it holds tokens from ``issuer`` other than ``held`` (someone
        refreshed, or signed in, since ``held`` was read); None when ``held`` is current."""
        stored = await self.read()
        if stored is None or stored.tokens is None or stored.issuer != issuer:
            return None
        return None if stored.tokens.access_token == held.access_token else stored


def usable_tokens(stored: Stored, prover: DpopProver, key: str) -> Tokens | None:
    """``stored``'s tokens, with ``prover`` using the DPoP key they are bound to; None when
    they are bound to a key that is missing or does not read back."""
    tokens = stored.tokens
    if stored.dpop_key is not None:
        try:
            prover.use(DpopKey.from_pem(stored.dpop_key))
        except AuthorizationError as exc:
            log.warning("ignoring the stored tokens for %s (%s)", redact_uri(key), exc)
            return None
    if tokens is not None and tokens.token_type == "DPoP" and not prover.has_key:
        return None  # bound to a key that is gone: useless
    return tokens
