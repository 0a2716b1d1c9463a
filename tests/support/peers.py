"""Test peers nobody here wrote (the official SDKs, FastMCP), outside the project's venv.

* Python: the official SDK (``mcp`` 2.3.0) in ``tests/.peers/mcp``, pinned by
  ``tests/peers/requirements-mcp.txt``, and FastMCP (4.1.6) in ``tests/.peers/fastmcp``,
  pinned by the benchmark's ``bench/requirements-fastmcp.txt``; each its own virtualenv,
  whose interpreter the ``sdk_python`` and ``fastmcp_python`` fixtures give.
* TypeScript, v1 (``@modelcontextprotocol/sdk``, 2025-11-25) and v2
  (``@modelcontextprotocol/client`` and ``/server``, 2026-07-28): ``tests/peers/ts``,
  pinned by its ``package-lock.json`` and installed with the Node 22 of ``tools/node22``;
  the ``ts_node`` fixture gives that ``node``.

``make peers`` builds them, and so do the fixtures when a peer is missing (one worker at a
time under ``pytest -n``: they lock the ``tests/.peers`` directory). The project's
venv never gets ``mcp``. Without a peer (offline, say), the tests that need it skip, saying
why.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.procs import ROOT, _stop, free_port, wait_listening

__all__ = ["PEERS", "TS_PEERS", "fastmcp_python", "peer_http", "sdk_python", "ts_node"]

PEERS = ROOT / "tests" / ".peers"
TS_PEERS = ROOT / "tests" / "peers" / "ts"
NODE22 = ROOT / "tools" / "node22" / "node_modules" / "node" / "bin"
#: Each Python peer: its virtualenv under tests/.peers, and the pins it is built from.
PYTHON_PEERS = {
    "mcp": ROOT / "tests" / "peers" / "requirements-mcp.txt",
    "fastmcp": ROOT / "bench" / "requirements-fastmcp.txt",  # the benchmark's pins, one list
}


def _python_peer(name: str) -> Path:
    """The interpreter of the Python peer ``name``, building its virtualenv when it is missing
    or its pins changed; skips the test, saying why, when it cannot be built."""
    env, requirements = PEERS / name, PYTHON_PEERS[name]
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    stamp, python = env / ".installed", env / "bin" / "python"
    with _building():
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return python
        _build_python_peer(name, env, requirements, python)
        stamp.write_text(digest + "\n")
    return python


@contextlib.contextmanager
def _building() -> Iterator[None]:
    """Held while a peer is checked and built, so parallel test workers (``pytest -n``)
    build each peer once instead of over one another."""
    PEERS.mkdir(parents=True, exist_ok=True)
    directory = os.open(PEERS, os.O_RDONLY)  # the lock is on the directory: no file to leave
    try:
        fcntl.flock(directory, fcntl.LOCK_EX)
        yield
    finally:
        os.close(directory)  # which releases the lock


def _build_python_peer(name: str, env: Path, requirements: Path, python: Path) -> None:
    (PEERS / ".gitignore").write_text("*\n")
    if env.exists():
        shutil.rmtree(env)
    base = getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"
    for step in (
        [base, "-m", "venv", str(env)],
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(requirements)],
    ):
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            why = f"{' '.join(step[:4])} failed: {(done.stderr or done.stdout)[-800:]}"
            pytest.skip(f"the {name} peer (tests/.peers/{name}) could not be built: {why}")


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    """The official Python SDK's interpreter (``mcp`` 2.3.0)."""
    return _python_peer("mcp")


@pytest.fixture(scope="session")
def fastmcp_python() -> Path:
    """FastMCP's interpreter (``fastmcp`` 4.1.6, on ``mcp`` 2.3.0)."""
    return _python_peer("fastmcp")


def _ts_digest() -> str:
    return hashlib.sha256((TS_PEERS / "package-lock.json").read_bytes()).hexdigest()


def _ts_build() -> str | None:
    """Install the TypeScript peers from their lockfile; None when it worked, else why not."""
    if not (NODE22 / "node").is_file():
        return "Node 22 is not installed in tools/node22 (make install builds it)"
    env = {**os.environ, "PATH": f"{NODE22}{os.pathsep}{os.environ.get('PATH', '')}"}
    step = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(
        step, cwd=TS_PEERS, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        return f"npm ci failed: {(done.stderr or done.stdout)[-800:]}"
    (TS_PEERS / "node_modules" / ".installed").write_text(_ts_digest() + "\n")
    return None


@pytest.fixture(scope="session")
def ts_node() -> Path:
    """Node 22, with the TypeScript SDK peers installed next to their scripts."""
    stamp = TS_PEERS / "node_modules" / ".installed"
    with _building():
        if not (stamp.is_file() and stamp.read_text().strip() == _ts_digest()):
            problem = _ts_build()
            if problem is not None:
                pytest.skip(f"the TypeScript SDK peers (tests/peers/ts) could not be installed: {problem}")
    return NODE22 / "node"


@contextlib.contextmanager
def peer_http(argv: Callable[[int], list[str]], log: Path) -> Iterator[str]:
    """Run a peer's HTTP server, ``argv(port)`` on a free loopback port, and give its
    ``/mcp`` URL until the block ends; fail the test if it does not listen or if it printed
    a traceback (its output goes to ``log``)."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(argv(port), stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=ROOT)
    try:
        if not wait_listening(proc, port):
            pytest.fail(f"the peer exited: {log.read_text(errors='replace')}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)
    assert "Traceback" not in log.read_text(errors="replace"), log.read_text(errors="replace")
