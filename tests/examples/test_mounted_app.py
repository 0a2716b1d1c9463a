"""``examples/mounted_app.py`` as a user runs it: uvicorn in a subprocess on 127.0.0.1,
the application's own page at ``/``, and ``mcp-elicit call`` against ``/tools/mcp``
answering the form from a script, at both revisions."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.procs import ROOT, _stop, cli, free_port, wait_listening

REVISIONS = ["2026-07-28", "2025-11-25"]
UVICORN = [sys.executable, "-m", "uvicorn", "examples.mounted_app:app", "--host", "127.0.0.1"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("mounted") / "uvicorn.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*UVICORN, "--port", str(port), "--log-level", "warning"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=ROOT,
        )
    try:
        assert wait_listening(proc, port), log.read_text(errors="replace")
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)
    # uvicorn stops on SIGTERM and then re-raises it; the lifespan shutdown logged no error
    text = log.read_text(errors="replace")
    assert proc.returncode in (0, -15) and "ERROR" not in text and "Traceback" not in text, text


def test_the_application_keeps_its_own_routes(served: str) -> None:
    home = httpx.get(f"{served}/", timeout=10)
    assert home.status_code == 200 and "/tools/mcp" in home.text


@pytest.mark.parametrize("revision", REVISIONS)
def test_mcp_elicit_call_reaches_the_mounted_tool(served: str, tmp_path: Path, revision: str) -> None:
    script = tmp_path / "answers.json"
    script.write_text(json.dumps([{"fields": ["region"], "content": {"region": "us-east-1"}}]))
    flags = ["--protocol", revision, "--ui", "none"]
    done = subprocess.run(
        [*cli(), "call", f"{served}/tools/mcp", "provision", "name=web-1", "--answers", str(script), *flags],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Provisioned web-1 in us-east-1"
