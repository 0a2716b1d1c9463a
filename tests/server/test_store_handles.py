"""A server lets go of the SQLite files its URL mode opened: a webhook's process once its
completions are written, a stop even when it is cancelled, and a store replaced before
serving. Counted as the descriptors this process holds on the file
(``support.handles``), which every Python shows (only 3.13 and later warn about a
connection the garbage collector finds open, and only when it comes)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import SqliteStore
from mcp_elicit.stores.url import STATE_FILE, default_data_dir

from support.handles import database_handles
from support.waiting import eventually

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform.startswith("win"), reason="the data directory is moved by XDG_DATA_HOME"),
]

KEYS = KeyRing([bytes(range(40, 72))])
BURST = 20


@pytest.fixture
def default_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default store's file, in this test's own data directory (no other test's
    handles on it)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = Path(default_data_dir(), STATE_FILE)
    assert path.is_relative_to(tmp_path)
    return path


async def test_a_webhooks_completions_hold_no_handle_once_written(default_file: Path) -> None:
    """A process that only records completions (a payment webhook's) writes them into the
    default file another process made, one connection for a burst, and closes it once the
    burst is written: it holds nothing on the file until the next one, and no ``close``
    is needed for that."""
    made = SqliteStore(default_file)
    await made.put("flow", "made", b"by the process that asks the steps")
    await made.close()
    app = Server("shop", state_keys=KEYS)
    for n in range(BURST):
        app.complete_elicitation(f"pay-{n}", "alice")
    reader = StepCompletions(SqliteStore(default_file), ttl=600.0)
    try:

        async def all_written() -> bool:
            return all([await reader.marker(f"pay-{n}", "alice") for n in range(BURST)])

        await eventually(all_written, "every completion of the burst written")
    finally:
        await reader.store.close()
    await eventually(lambda: not database_handles(default_file), "the webhook's connection closed")
    app.complete_elicitation("pay-late", "alice")  # a later burst opens the file again
    await app.url_mode.close()
    assert database_handles(default_file) == []
    again = StepCompletions(SqliteStore(default_file), ttl=600.0)
    try:
        assert await again.marker("pay-late", "alice"), "the later completion was written"
    finally:
        await again.store.close()


@pytest.mark.parametrize("store", ["url", "default"])
async def test_a_close_cancelled_while_a_completion_is_written_still_closes_the_store(
    tmp_path: Path, default_file: Path, store: str
) -> None:
    """URL mode's close (the server stopping) is cancelled by a deadline while it waits
    for a completion being written: the store it opened itself is closed all the same."""
    path = tmp_path / "configured.db" if store == "url" else default_file
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}" if store == "url" else None)
    await app.url_mode.store.put("flow", "k", b"v")  # what the first URL-mode request does
    assert database_handles(path)
    app.complete_elicitation("pay-1", "alice")
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0):
            await app.url_mode.close()
    assert database_handles(path) == [], "the cancelled close left the store open"


async def test_a_stop_whose_first_steps_fail_still_closes_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopping the tasks fails (or is cancelled): the rest of the stop still runs, and
    the store the server opened is closed before the failure is raised."""
    path = tmp_path / "configured.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    await app.start()
    await app.url_mode.store.put("flow", "k", b"v")

    async def fails() -> None:
        raise RuntimeError("a task would not stop")

    monkeypatch.setattr(app.tasks, "close", fails)
    with pytest.raises(RuntimeError, match="a task would not stop"):
        await app.stop()
    assert database_handles(path) == [], "the failed stop left the store open"


async def test_a_store_replaced_before_serving_is_closed_at_stop(tmp_path: Path) -> None:
    """A store opened from a URL and used (a start-up check of the caller's own), then
    replaced by ``configure_url_mode``: the server opened it, so the server closes it."""
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{first}")
    await app.url_mode.store.put("health", "k", b"")
    app.configure_url_mode(store=f"sqlite://{second}")
    await app.start()
    await app.stop()
    assert database_handles(first) == [], "the replaced store is still open"
    assert database_handles(second) == []


@pytest.mark.parametrize(
    "bad", [{"store": "bogus://x"}, {"store": "sqlite://", "public_url": "https://ok.example"}]
)
async def test_a_refused_configure_leaves_the_store_as_it_was(tmp_path: Path, bad: dict[str, str]) -> None:
    """``configure_url_mode`` with a store URL that cannot be opened raises a clear
    ``ConfigError`` and changes nothing: the old URL, the old store, open and in use (a
    stop then closes it), and no other setting given with it."""
    path = tmp_path / "first.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    store = app.url_mode.store
    await store.put("health", "k", b"v")
    with pytest.raises(ConfigError, match="store URL"):
        app.configure_url_mode(**bad)
    assert app.url_mode.store_spec == f"sqlite://{path}"
    assert app.url_mode.store is store
    assert app.url_mode.public_url is None
    assert await app.url_mode.guarded.get("health", "k") == b"v", "the old store is still in use"
    assert database_handles(path), "the old store was closed while in use"
    await app.start()
    await app.stop()
    assert database_handles(path) == []


async def test_a_refused_public_url_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    """A bad ``public_url`` given with a good store changes neither."""
    path = tmp_path / "first.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    store = app.url_mode.store
    with pytest.raises(ConfigError, match="public URL"):
        app.configure_url_mode(store=f"sqlite://{tmp_path / 'second.db'}", public_url="ftp://x")
    assert app.url_mode.store is store
    assert app.url_mode.store_spec == f"sqlite://{path}"
    await app.url_mode.close()


async def written(path: Path, *ids: str) -> None:
    """Wait until each completion of ``ids`` (alice's) is in the SQLite file ``path``."""
    reader = StepCompletions(SqliteStore(path), ttl=600.0)
    try:

        async def all_written() -> bool:
            return all([await reader.marker(step, "alice") for step in ids])

        await eventually(all_written, f"the completions {ids} written")
    finally:
        await reader.store.close()


async def test_a_webhooks_completions_close_a_configured_store_once_written(tmp_path: Path) -> None:
    """A webhook's process (never starts the server) configured with a store URL writes a
    burst of completions through one connection and closes it once the burst is written,
    as for the default file: it holds nothing on the file between bursts."""
    path = tmp_path / "configured.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    for n in range(BURST):
        app.complete_elicitation(f"pay-{n}", "alice")
    await written(path, *(f"pay-{n}" for n in range(BURST)))
    await eventually(lambda: not database_handles(path), "the webhook's connection closed")
    app.complete_elicitation("pay-late", "alice")  # a later burst opens the file again
    await written(path, "pay-late")
    await eventually(lambda: not database_handles(path), "the later burst's connection closed")


async def test_a_started_server_keeps_its_configured_store_through_completions(tmp_path: Path) -> None:
    """A server that started holds its store for its lifetime: a completion writes into
    it and leaves it open; the stop closes it."""
    path = tmp_path / "configured.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    await app.start()
    store = app.url_mode.store
    app.complete_elicitation("pay-1", "alice")
    await written(path, "pay-1")
    assert app.url_mode.store is store and database_handles(path), "the started server's store was let go"
    await app.stop()
    assert database_handles(path) == []


@pytest.mark.parametrize("when", ["after", "during"])
async def test_a_completion_at_or_after_stop_leaves_no_store_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """``complete_elicitation`` after ``Server.stop``, or while the stop closes the store,
    is still recorded (as a webhook's would be), in a store opened for the write and
    closed once it is written: nothing stays open on the file."""
    path = tmp_path / "configured.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    await app.start()
    store = app.url_mode.store
    if when == "during":
        closing = store.close

        async def completes_then_closes() -> None:
            app.complete_elicitation("pay-1", "alice")
            await closing()

        monkeypatch.setattr(store, "close", completes_then_closes)
    await app.stop()
    if when == "during":
        assert database_handles(path) == [], "the stop did not wait for the completion made while closing"
    else:
        app.complete_elicitation("pay-1", "alice")
    await written(path, "pay-1")
    await eventually(lambda: not database_handles(path), "the completion's store closed")
    assert app.url_mode.store_spec == f"sqlite://{path}"


async def test_a_stop_whose_close_fails_still_waits_for_the_completions_made_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store's close that fails is raised by the stop, but only once the completions
    made while the stores closed are written and their store closed, as when it succeeds."""
    path = tmp_path / "configured.db"
    app = Server("shop", state_keys=KEYS, store=f"sqlite://{path}")
    await app.start()
    store = app.url_mode.store
    closing = store.close

    async def completes_then_fails() -> None:
        app.complete_elicitation("pay-1", "alice")
        await closing()
        raise OSError("the disk went away")

    monkeypatch.setattr(store, "close", completes_then_fails)
    with pytest.raises(OSError, match="the disk went away"):
        await app.stop()
    assert database_handles(path) == [], "the stop did not wait for the completion made while closing"
    await written(path, "pay-1")
