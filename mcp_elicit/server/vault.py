"""The vault: secrets people typed into a URL-mode page, and third-party tokens, kept for
the principal they belong to.

Rules:

* Values are sealed with the server's key ring (AES-256-GCM) before they reach the store,
  bound to their kind, their name and their principal: a value copied to another entry,
  another principal or another server does not open. The store only ever holds ciphertext.
* Store keys are digests of the principal and the name, never either in clear.
* Key rotation: a value read under a key that no longer seals (the ring's older keys
  still open) is sealed again with the current key, so once every value was read the
  old key can be dropped. The rewrite takes the old ciphertext out first (atomically) and
  puts the new one only when what it took is what it read: a value forgotten or replaced
  meanwhile is never brought back.
* A value that does not open (sealed under a key this instance lacks, by another server,
  or altered) is taken as absent, so the person is asked again; it is logged as a warning
  naming the value and the key id it needs, since the person sees only the page again.
* A ``Secret`` is a server-side handle: ``repr`` and ``str`` never show the value; only
  ``await secret.reveal()`` does, for the code that uses it. It never goes into an MCP
  message, a log line or an error.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Final

from mcp_elicit.errors import InvalidRequestState
from mcp_elicit.sealing import Binding, StateSealer, key_id
from mcp_elicit.server.key_file import MISSING_KEY
from mcp_elicit.stores.base import Store

__all__ = ["Secret", "Vault"]

log = logging.getLogger("mcp_elicit.server")

_FOREVER: Final = 10 * 365 * 86400.0
_NO_ARGS: Final = hashlib.sha256(b"vault").digest()
_WHAT: Final = {"vault": "secret", "tokens": "connection"}


def _key(name: str, principal: str | None) -> str:
    """The store key of ``name`` for ``principal``: digests only, any name fits."""
    return f"{_owner(principal)}:{hashlib.sha256(name.encode('utf-8')).hexdigest()[:40]}"


def _owner(principal: str | None) -> str:
    return hashlib.sha256(f"p:{principal}".encode() if principal is not None else b"anonymous").hexdigest()[
        :32
    ]


class Vault:
    def __init__(
        self, store: Store, sealer: Callable[[], StateSealer], *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self._sealer = sealer
        self.clock = clock

    def _binding(self, kind: str, name: str, principal: str | None) -> Binding:
        return Binding(method=f"vault/{kind}", target=name, arguments=_NO_ARGS, principal=principal)

    async def put(self, kind: str, name: str, principal: str | None, value: bytes) -> None:
        """Keep ``value`` until it is forgotten (or replaced)."""
        token = self._sealer().seal(
            value, self._binding(kind, name, principal), now=self.clock(), ttl=_FOREVER
        )
        await self.store.put(kind, _key(name, principal), token.encode("ascii"))

    async def get(self, kind: str, name: str, principal: str | None) -> bytes | None:
        key = _key(name, principal)
        raw = await self.store.get(kind, key)
        if raw is None:
            return None
        sealer = self._sealer()
        binding = self._binding(kind, name, principal)
        try:
            token = raw.decode("ascii")
            value = sealer.open(token, binding, now=self.clock())
        except (InvalidRequestState, UnicodeDecodeError) as exc:
            _log_unopened(kind, name, raw, exc)
            return None  # sealed with a key no longer in the ring, or not ours: as if absent
        if not sealer.sealed_now(token):
            await self._reseal(kind, key, raw, sealer.seal(value, binding, now=self.clock(), ttl=_FOREVER))
        return value

    async def _reseal(self, kind: str, key: str, read: bytes, resealed: str) -> None:
        """Replace ``read`` (under an older key) with ``resealed``, unless it changed."""
        taken = await self.store.take(kind, key)
        if taken is None:  # forgotten meanwhile: stays forgotten
            return
        await self.store.put(kind, key, resealed.encode("ascii") if taken == read else taken)

    async def forget(self, kind: str, name: str, principal: str | None) -> bool:
        return await self.store.delete(kind, _key(name, principal))


def _log_unopened(kind: str, name: str, raw: bytes, exc: Exception) -> None:
    what = f"the stored {_WHAT.get(kind, kind)} {name!r}"
    kid = key_id(raw.decode("ascii", "replace"))
    if isinstance(exc, InvalidRequestState) and exc.reason == "unknown key id" and kid is not None:
        why = f"is sealed under key id {kid}, {MISSING_KEY}"
    else:
        reason = exc.reason if isinstance(exc, InvalidRequestState) else "not ASCII"
        why = (
            f"does not open ({reason}): sealed by another server (its name or "
            "MCP_ELICIT_SERVER_ID differs), or altered in the store"
        )
    log.warning("%s %s; taken as absent, so the person is asked for it again", what, why)


class Secret:
    """A secret the user entered on the server's page; only the server sees its value."""

    __slots__ = ("_principal", "_vault", "name")

    def __init__(self, vault: Vault, name: str, principal: str | None) -> None:
        self.name = name
        self._vault = vault
        self._principal = principal

    async def reveal(self) -> str:
        """The value, for server-side use (calling the API it unlocks). Never return it."""
        value = await self._vault.get("vault", self.name, self._principal)
        if value is None:
            raise LookupError(f"the secret {self.name!r} is no longer stored")
        return value.decode("utf-8")

    async def forget(self) -> bool:
        """Delete it; the next request that needs it asks again."""
        return await self._vault.forget("vault", self.name, self._principal)

    def __repr__(self) -> str:
        return f"<Secret {self.name!r} (hidden)>"

    __str__ = __repr__
