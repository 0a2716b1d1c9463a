"""The command line, in process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_elicit.cli.main import main
from mcp_elicit.sealing import KeyRing


def test_keygen_prints_a_key_file_that_loads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keygen"]) == 0
    text = capsys.readouterr().out
    assert KeyRing.from_text(text).key_ids


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["serve", "does/not/exist.py"], "no such file"),
        (["serve", "examples/demo_server.py:nothing"], "no Server named 'nothing'"),
        (["serve", "examples/demo_server.py", "--http", "nonsense"], "HOST:PORT"),
    ],
)
def test_serve_errors_exit_2_with_a_message(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_bad_key_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys"
    keys.write_text("too-short\n")
    assert main(["serve", "examples/demo_server.py", "--state-key-file", str(keys)]) == 2
    assert "invalid state keys" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "serve" in done.stdout
