"""The official Python SDK (``mcp`` 2.3.0) as a test peer, in its own virtualenv.

``tests/.peers/mcp`` is pinned by ``tests/peers/requirements-mcp.txt``; ``make peers``
builds it, and so does the ``sdk_python`` fixture when it is missing. The project's venv
never gets ``mcp``. Without the peer (offline, say), the tests that need it skip, saying why.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.procs import ROOT

__all__ = ["ENV", "PEERS", "REQUIREMENTS", "sdk_python"]

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
