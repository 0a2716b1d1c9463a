"""The token file: one JSON file of records, 0600, rewritten whole; processes and tasks
saving at the same time each keep their record. A record's lock (file and memory stores)
excludes others from that record only, and a wait for it ends at its timeout."""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_elicit.transports.token_record import SharedRecord
from mcp_elicit.transports.token_store import FileTokenStore, MemoryTokenStore, Stored

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SAVER = """
import asyncio, sys
from mcp_elicit.transports.token_store import FileTokenStore

async def main() -> None:
    store = FileTokenStore(sys.argv[1])
    for n in range(int(sys.argv[3])):
        await store.save(f"https://{sys.argv[2]}-{n}.example/mcp", {"issuer": sys.argv[2]})

asyncio.run(main())
"""


async def test_tasks_saving_at_once_each_keep_their_record(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    keys = [f"https://server-{n}.example/mcp" for n in range(40)]
    await asyncio.gather(*(store.save(key, {"issuer": key}) for key in keys))
    assert sorted(json.loads((tmp_path / "tokens.json").read_text())) == sorted(keys)
    for key in keys:
        assert await store.load(key) == {"issuer": key}


def test_processes_saving_at_once_each_keep_their_records(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tokens.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    savers = [
        subprocess.Popen([sys.executable, "-c", SAVER, str(path), name, "30"], env=env)
        for name in ("alpha", "beta", "gamma")
    ]
    for saver in savers:
        assert saver.wait(timeout=60) == 0
    records = json.loads(path.read_text())
    assert len(records) == 90, sorted(records)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("kind", ["memory", "file"])
async def test_a_record_is_locked_alone_and_a_wait_for_it_is_bounded(kind: str, tmp_path: Path) -> None:
    store = MemoryTokenStore() if kind == "memory" else FileTokenStore(tmp_path / "tokens.json")
    async with store.locked("https://a.example/mcp", timeout=1):
        with pytest.raises(TimeoutError, match=r"stayed locked for 0\.2 s"):
            async with store.locked("https://a.example/mcp", timeout=0.2):
                pass
        async with store.locked("https://b.example/mcp", timeout=0.2):  # another record: no wait
            pass
    async with store.locked("https://a.example/mcp", timeout=0.2):  # let go at the end of the block
        pass


async def test_a_save_waits_for_another_only_so_long(tmp_path: Path) -> None:
    """A save waits for one in progress elsewhere (``<file>.lock``), but not for ever: a
    process stopped while saving (Ctrl-Z) holds the lock, and the others fail saying so."""
    store = FileTokenStore(tmp_path / "tokens.json", save_timeout=0.2)
    await store.save("https://a.example/mcp", {"access_token": "one"})
    held = os.open(tmp_path / "tokens.json.lock", os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # as another process saving would
        with pytest.raises(TimeoutError, match=r"tokens\.json\.lock stayed held for 0\.2 s"):
            await store.save("https://a.example/mcp", {"access_token": "two"})
    finally:
        os.close(held)
    await store.save("https://a.example/mcp", {"access_token": "two"})  # free again
    assert await store.load("https://a.example/mcp") == {"access_token": "two"}


#: A record as versions before the stored client-id binding wrote it: no ``given``.
_OLDER_RECORD = {
    "issuer": "https://as.example",
    "scope": "mcp",
    "tokens": {"access_token": "at", "refresh_token": "rt", "expires_at": None, "scope": "mcp"},
    "dpop_key": None,
    "clients": {"https://as.example": {"client_id": "dyn", "client_secret": None, "auth_method": "none"}},
}


def test_a_record_written_before_the_client_id_binding_reads_whole() -> None:
    stored = Stored.from_record(_OLDER_RECORD)
    assert stored.given == {}
    assert stored.tokens is not None and stored.tokens.refresh_token == "rt"
    assert stored.clients["https://as.example"].client_id == "dyn"


def test_the_binding_is_a_key_of_its_own_that_round_trips_and_a_reader_passes_over_others() -> None:
    """An older reader takes the keys it knows and passes over ``given`` (so it does not
    fail on a newer file); this reader passes over a key it does not know the same way."""
    record = {**_OLDER_RECORD, "given": {"pre-registered": "https://as.example"}}
    stored = Stored.from_record(json.loads(json.dumps(record)))
    assert stored.given == {"pre-registered": "https://as.example"}
    assert Stored.from_record(stored.to_record()) == stored
    assert {k: v for k, v in stored.to_record().items() if k != "given"}.keys() == _OLDER_RECORD.keys()
    assert Stored.from_record({**record, "from_a_later_version": [1]}) == stored


@pytest.mark.parametrize("value", [None, 7, ["https://as.example"]])
def test_a_binding_that_is_not_an_issuer_is_a_damaged_record(value: object) -> None:
    """A client id bound to something other than an issuer's URL (a file edited by hand) is
    not read as the text "None" or "7", which no server would match: the record is damaged."""
    with pytest.raises(ValueError, match="damaged record"):
        Stored.from_record({**_OLDER_RECORD, "given": {"pre-registered": value}})


async def test_a_record_that_does_not_read_back_is_logged_without_the_servers_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A record is kept under the server's URL without its query, which keeps any user
    name and password the URL was given: the warning names it redacted."""
    key = "http://me:PASSWORD@127.0.0.1:9/mcp"
    store = MemoryTokenStore()
    await store.save(key, {"tokens": {"no": "access token"}})
    caplog.set_level(logging.WARNING, logger="mcp_elicit")
    assert await SharedRecord(store, key, lock_timeout=1.0).read() is None
    (said,) = [
        r.getMessage() for r in caplog.records if "ignoring the stored authorization" in r.getMessage()
    ]
    assert "PASSWORD" not in said and "http://REDACTED:REDACTED@127.0.0.1:9/mcp" in said, said
