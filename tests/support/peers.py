"""The official Python SDK (``mcp`` 2.3.0) as a test peer, in its own virtualenv.

``tests/.peers/mcp`` is pinned by ``tests/peers/requirements-mcp.txt``; ``make peers``
builds it, and so does the ``sdk_python`` fixture when it is missing. The project's venv
never gets ``mcp``. Without the peer (offline, say), the tests that need it skip, saying why.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.procs import ROOT, START_TIMEOUT, _stop, _wait_listening, free_port

__all__ = ["ENV", "PEERS", "REQUIREMENTS", "peer_http", "sdk_python"]

PEERS = ROOT / "tests" / ".peers"
ENV = PEERS / "mcp"
REQUIREMENTS = ROOT / "tests" / "peers" / "requirements-mcp.txt"


def _digest() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()


def _ready() -> bool:
    stamp = ENV / ".installed"
    return stamp.is_file() and stamp.read_text().strip() == _digest()


def _build() -> str | None:
    """Build the peer's virtualenv; None when it worked, else why not."""
    PEERS.mkdir(parents=True, exist_ok=True)
    (PEERS / ".gitignore").write_text("*\n")
    if ENV.exists():
        shutil.rmtree(ENV)
    base = getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"
    python = str(ENV / "bin" / "python")
    for step in (
        [base, "-m", "venv", str(ENV)],
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
    ):
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            return f"{' '.join(step[:4])} failed: {(done.stderr or done.stdout)[-800:]}"
    (ENV / ".installed").write_text(_digest() + "\n")
    return None


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    if not _ready():
        problem = _build()
        if problem is not None:
            pytest.skip(f"the official SDK peer (tests/.peers/mcp) could not be built: {problem}")
    return ENV / "bin" / "python"


@contextlib.contextmanager
def peer_http(argv: Callable[[int], list[str]], log: Path) -> Iterator[str]:
    """Run a peer's HTTP server, ``argv(port)`` on a free loopback port, and give its
    ``/mcp`` URL until the block ends; fail the test if it does not listen or if it printed
    a traceback (its output goes to ``log``)."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(argv(port), stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=ROOT)
    try:
        if not _wait_listening(proc, port, time.monotonic() + START_TIMEOUT):
            pytest.fail(f"the peer exited: {log.read_text(errors='replace')}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)
    assert "Traceback" not in log.read_text(errors="replace"), log.read_text(errors="replace")
