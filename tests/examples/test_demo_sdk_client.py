"""Interop: the official Python SDK's client (``mcp`` 2.3.0, in its own venv) books a table
on the demo server through its elicitation callback, in its handshake mode (2025-11-25)
and in its 2026 mode, against the same running server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.peers import sdk_python
from support.procs import ROOT, HttpProcess, http_process

__all__ = ["sdk_python"]  # a fixture

pytestmark = pytest.mark.slow
CLIENT = ROOT / "tests" / "peers" / "sdk_client.py"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpProcess]:
    with http_process(
        ROOT / "examples" / "demo_server.py",
        log_dir=tmp_path_factory.mktemp("demo"),
        args=("--store", "memory://"),
    ) as server:
        yield server


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_sdk_client_books_a_table(sdk_python: Path, demo: HttpProcess, mode: str, revision: str) -> None:
    done = subprocess.run(
        [str(sdk_python), str(CLIENT), demo.url, mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["asked"] == [["party_size", "date", "seating", "dietary"], ["confirm"]], out
    assert "Septime, Paris, 4 people on 2099-04-01, bar, vegetarian" in out["text"], out
    assert out["text"].startswith("Booked #"), out
    assert "Septime, Paris, 4 people on 2099-04-01" in out["listed"]
    log = demo.stderr()
    assert "Traceback" not in log, log[-2000:]
