"""The vault at rest: values are sealed with the server's key ring, and a key rotation
(prepend the new key, later drop the old one) keeps every stored secret readable."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_elicit.sealing import KeyRing, StateSealer
from mcp_elicit.server.vault import Vault, _key
from mcp_elicit.stores import SqliteStore

pytestmark = pytest.mark.anyio

OLD = bytes(range(1, 33))
NEW = bytes(range(101, 133))
VALUE = b"sk-live-rotation-7Qx"


def _vault(store: SqliteStore, *keys: bytes) -> Vault:
    sealer = StateSealer(KeyRing(list(keys)), server_id="vault-test/")
    return Vault(store, lambda: sealer)


async def _stored(store: SqliteStore) -> bytes | None:
    """What the store holds for alice's ``api_key``: ciphertext only."""
    return await store.get("vault", _key("api_key", "alice"))


async def test_a_secret_outlives_the_retirement_of_the_key_that_sealed_it(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "vault.db")
    try:
        await _vault(store, OLD).put("vault", "api_key", "alice", VALUE)
        sealed_old = await _stored(store)
        # rotation, step 1: the new key seals, the old one still opens
        rotated = _vault(store, NEW, OLD)
        assert await rotated.get("vault", "api_key", "alice") == VALUE
        resealed = await _stored(store)
        assert resealed is not None and sealed_old is not None
        assert resealed != sealed_old
        assert VALUE not in resealed
        # a value already under the sealing key is left as it is (no write per read)
        assert await rotated.get("vault", "api_key", "alice") == VALUE
        assert await _stored(store) == resealed
        # rotation, step 2: the old key is dropped; what was read meanwhile still opens
        assert await _vault(store, NEW).get("vault", "api_key", "alice") == VALUE
        # the old key alone no longer opens it: it really is sealed with the new one
        assert await _vault(store, OLD).get("vault", "api_key", "alice") is None
    finally:
        await store.close()


async def test_a_secret_forgotten_is_not_brought_back_by_a_reseal(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "vault.db")
    try:
        await _vault(store, OLD).put("vault", "api_key", "alice", VALUE)
        rotated = _vault(store, NEW, OLD)
        assert await rotated.forget("vault", "api_key", "alice")
        assert await rotated.get("vault", "api_key", "alice") is None
        assert await _stored(store) is None
    finally:
        await store.close()


async def test_another_principal_or_name_does_not_open_a_copied_value(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "vault.db")
    try:
        vault = _vault(store, NEW, OLD)
        await vault.put("vault", "api_key", "alice", VALUE)
        raw = await store.get("vault", _key("api_key", "alice"))
        assert raw is not None
        await store.put("vault", _key("api_key", "mallory"), raw)
        await store.put("vault", _key("other_key", "alice"), raw)
        assert await vault.get("vault", "api_key", "mallory") is None
        assert await vault.get("vault", "other_key", "alice") is None
        assert await vault.get("vault", "api_key", "alice") == VALUE
    finally:
        await store.close()
