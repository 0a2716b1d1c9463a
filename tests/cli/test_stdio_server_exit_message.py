"""A stdio server that exits, at once or in the middle of a call: the message names its
command once, says how it ended, and never calls it "unknown server". (Counted by its
program, which every naming of the command starts with, however its words are quoted.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli.helpers import run

EXITS = [sys.executable, "-c", "import sys; sys.stderr.write(sys.argv[1]); sys.exit(3)", "no database"]

DIES_APP = """
import os
import signal

from mcp_elicit import Server

app = Server("dies")


@app.tool()
async def die() -> str:
    os.kill(os.getpid(), signal.SIGKILL)
    return "not reached"
"""


def test_a_server_that_exits_at_once_is_named_once(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--", *EXITS)
    assert result.code == 3, result.err
    assert result.err.count(sys.executable) == 1, result.err
    assert "unknown server" not in result.err
    assert "exited with code 3" in result.err and "no database" in result.err
    report = run(capsys, "check", "--json", "--", *EXITS).json()
    assert report["error"].count(sys.executable) == 1, report["error"]
    assert "unknown server" not in report["error"]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_a_server_killed_during_a_call_is_named_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    app = tmp_path / "dies.py"
    app.write_text(DIES_APP, encoding="utf-8")
    command = [sys.executable, "-m", "mcp_elicit", "serve", str(app)]
    result = run(
        capsys, "call", "die", "--ui", "none", "--protocol", revision, "--timeout", "60", "--", *command
    )
    assert result.code == 3, result.err
    said = result.err.split("the end of its stderr")[0]
    assert said.count(sys.executable) == 1, result.err
    assert "was killed by signal 9" in said and "tools/call" in said, result.err
