"""The key that seals the vault when none is configured.

With no ``state_keys=`` (nor ``--state-key-file``, nor ``$MCP_ELICIT_STATE_KEYS``) and the
default store (a SQLite file in the user data directory), URL mode creates a key file next
to that store the first time it uses it, and every later process reads it: secrets,
connections and in-flight ``requestState`` survive a restart. A server that never uses URL
mode creates nothing. A store the user configured gets a warning at start-up instead.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.sealing import Binding, KeyRing

from support.procs import uvicorn_server
from support.url_mode import SECRET, Mcp, _fill_page
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

VALUE = b"sk-live-survives-a-restart"
BINDING = Binding(method="tools/call", target="book", arguments=b"0" * 32, principal="alice")
posix_only = pytest.mark.skipif(sys.platform.startswith("win"), reason="POSIX file modes")


def _files(directory: Path) -> list[str] | None:
    """The names in ``directory`` besides the store's own files; None when it is absent."""
    if not directory.exists():
        return None
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("state.db"))


def _key_file(directory: Path, text: str, mode: int) -> Path:
    directory.mkdir(mode=0o700)
    path = directory / "state.keys"
    path.write_text(text, encoding="utf-8")
    if not sys.platform.startswith("win"):
        os.chmod(path, mode)
    return path


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    return tmp_path / "mcp-elicit"


async def test_a_secret_in_the_default_store_survives_a_restart(data_dir: Path) -> None:
    first = Server("s")
    await first.start()
    try:
        await first.url_mode.vault.put("vault", "api_key", "alice", VALUE)
    finally:
        await first.stop()
    second = Server("s")  # a new process: a new random key, the same data directory
    await second.start()
    try:
        assert await second.url_mode.vault.get("vault", "api_key", "alice") == VALUE
    finally:
        await second.stop()
    assert _files(data_dir) == ["state.keys"]


@posix_only
async def test_the_key_file_is_the_owners_alone(data_dir: Path) -> None:
    server = Server("s")
    try:
        await server.url_mode.vault.put("vault", "api_key", "alice", VALUE)
    finally:
        await server.stop()
    mode = stat.S_IMODE((data_dir / "state.keys").stat().st_mode)
    assert mode == 0o600
    assert KeyRing.from_text((data_dir / "state.keys").read_text(encoding="utf-8")).key_ids


async def test_request_state_in_flight_survives_a_restart(data_dir: Path) -> None:
    first = Server("s")
    await first.start()
    try:
        await first.url_mode.vault.put("vault", "api_key", "alice", VALUE)  # the key file now exists
        token = first.sealer.seal(b"round 1", BINDING, now=first.clock())
    finally:
        await first.stop()
    second = Server("s")
    await second.start()  # reads the key file before the first request
    try:
        assert second.sealer.open(token, BINDING, now=second.clock()) == b"round 1"
        assert not second.ephemeral_state_key
    finally:
        await second.stop()


async def test_a_state_sealed_before_url_mode_was_first_used_still_opens(data_dir: Path) -> None:
    server = Server("s")
    await server.start()
    try:
        assert server.ephemeral_state_key, "no key file yet: the per-process key seals"
        token = server.sealer.seal(b"form round", BINDING, now=server.clock())
        await server.url_mode.vault.put("vault", "api_key", "alice", VALUE)  # creates the key file
        assert not server.ephemeral_state_key
        assert server.sealer.open(token, BINDING, now=server.clock()) == b"form round"
    finally:
        await server.stop()


async def test_a_server_that_never_uses_url_mode_creates_nothing(data_dir: Path) -> None:
    server = Server("s")
    await server.start()
    server.sealer.seal(b"x", BINDING, now=server.clock())
    await server.stop()
    Server("in-process").sealer.seal(b"x", BINDING, now=0.0)
    assert _files(data_dir) is None


async def test_configured_keys_are_used_and_no_file_is_made(data_dir: Path) -> None:
    keys = KeyRing.generate()
    server = Server("s", state_keys=keys)
    try:
        await server.url_mode.vault.put("vault", "api_key", "alice", VALUE)
    finally:
        await server.stop()
    assert _files(data_dir) == []
    assert server.sealer.seal(b"x", BINDING, now=0.0).startswith(f"v2.{keys.key_ids[0]}.")


@posix_only
async def test_a_key_file_others_can_read_is_refused(data_dir: Path) -> None:
    _key_file(data_dir, KeyRing.generate().export_text(), 0o644)
    server = Server("s")
    with pytest.raises(
        ConfigError, match=r"state\.keys.* can be read or changed by other users \(mode 0644\): run chmod 600"
    ):
        await server.start()
    with pytest.raises(ConfigError, match="chmod 600"):  # in-process, on first use
        await server.url_mode.vault.put("vault", "api_key", "alice", VALUE)
    await server.stop()


async def test_a_broken_key_file_is_a_clear_error(data_dir: Path) -> None:
    path = _key_file(data_dir, "!!! left half-written\n", 0o600)
    with pytest.raises(ConfigError, match=r"state\.keys.*not a hex or base64 key") as caught:
        await Server("s").start()
    assert f"restore {str(path)!r} from a backup, or remove it" in str(caught.value)


async def test_a_default_key_file_that_is_not_text_says_where_and_what_to_do(data_dir: Path) -> None:
    path = _key_file(data_dir, "", 0o600)
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="is not UTF-8 text") as caught:
        await Server("s").start()
    assert f"restore {str(path)!r} from a backup, or remove it" in str(caught.value)


async def test_a_configured_store_without_keys_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    server = Server("s", store=url)
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        await server.start()
    await server.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert url in warnings[0]
    assert "same keys" in warnings[0] and "state_keys" in warnings[0] and "--state-key-file" in warnings[0]


@pytest.mark.parametrize("store", ["memory://", None])
async def test_no_warning_where_a_per_process_key_loses_nothing(
    store: str | None, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("s", store=store)
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        await server.start()
    await server.stop()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    if store is None:  # the log says what seals, truthfully
        (info,) = [r.getMessage() for r in caplog.records if "requestState" in r.getMessage()]
        assert "random per-process key" in info and str(data_dir / "state.keys") in info


async def test_configured_keys_are_not_warned_about(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server = Server("s", store=f"sqlite:///{tmp_path}/shared.db", state_keys=KeyRing.generate())
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        await server.start()
    await server.stop()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_processes_making_the_key_file_at_once_end_up_with_one_key(tmp_path: Path) -> None:
    """Each maker writes its own temporary file and links it into place; the first link
    wins and the others read it, so nobody seals with a key the file does not hold."""
    path = tmp_path / "mcp-elicit" / "state.keys"
    script = (  # every maker waits for the same instant, then makes the file
        "import sys, time\nfrom pathlib import Path\nfrom mcp_elicit.server import key_file\n"
        "at = float(sys.argv[2])\ntime.sleep(max(0.0, at - time.time() - 0.02))\n"
        "while time.time() < at: pass\n"
        "sys.stdout.write(key_file.load_or_create(Path(sys.argv[1])))\n"
    )
    at = str(time.time() + 3.0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    makers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), at], stdout=subprocess.PIPE, text=True, env=env
        )
        for _ in range(6)
    ]
    texts = {maker.communicate(timeout=60)[0] for maker in makers}
    assert all(maker.returncode == 0 for maker in makers)
    assert texts == {path.read_text(encoding="utf-8")}
    assert _files(path.parent) == ["state.keys"], "no temporary file is left behind"


def _asks_by_url() -> Server:
    app = Server("s", flow_wait=0.3)  # no key, no store: the default store and its key file

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        return "no key" if answer.secret is None else f"key of {len(await answer.secret.reveal())}"

    return app


async def test_the_first_url_mode_round_on_a_fresh_default_store_survives_a_restart(
    data_dir: Path, wire: WireChecker
) -> None:
    # The first round opens the default store, which makes the key file: that round's state
    # is sealed with the file's key (not the per-process one), so the next process opens it.
    from mcp_elicit.transports.http_server import StreamableHTTP

    async with httpx.AsyncClient(timeout=10) as http, httpx.AsyncClient(timeout=10) as browser:
        async with uvicorn_server(StreamableHTTP(_asks_by_url()), lifespan="on") as running:
            mcp = Mcp(http, running.url, wire)
            first = (await mcp.call())["result"]
            ((key, request),) = first["inputRequests"].items()
            assert (await _fill_page(browser, request["params"]["url"])).status_code == 200
        assert _files(data_dir) == ["state.keys"]
        async with uvicorn_server(StreamableHTTP(_asks_by_url()), lifespan="on") as running:  # the restart
            mcp = Mcp(http, running.url, wire)
            retry = await mcp.call(
                inputResponses={key: {"action": "accept"}}, requestState=first["requestState"]
            )
    assert "error" not in retry, retry
    assert retry["result"]["content"][0]["text"] == f"key of {len(SECRET)}"
