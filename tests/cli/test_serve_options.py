"""``serve``'s options as an operator meets them: each says what it does and its default,
an empty ``--allow-host`` is refused, and ``$MCP_ELICIT_STORE`` is read as the URL it holds
(spaces around it are no part of it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_elicit.cli.main import main

from support.procs import free_port, refused_at_start


def test_help_describes_the_log_level_and_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    said = text.split("--log-level", 2)[2].split(" --", 1)[0]  # the option's own entry
    assert "stderr" in said and "default: info" in said, said


@pytest.mark.parametrize("host", ["", " "])
def test_an_empty_allow_host_is_refused(host: str) -> None:
    argv = ["serve", "examples/demo_server.py", "--http", f"127.0.0.1:{free_port()}", "--allow-host", host]
    done = refused_at_start(argv, f"--allow-host {host!r}")
    assert "--allow-host" in done.stderr and "empty" in done.stderr, done.stderr


def test_spaces_around_the_store_url_from_the_environment_are_not_kept() -> None:
    env = {**os.environ, "MCP_ELICIT_STORE": "  memory://\n"}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit", "serve", "examples/demo_server.py"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "URL mode keeps its state in memory://\n" in done.stderr, done.stderr


def test_serve_over_stdio_started_by_a_client_says_nothing_of_a_terminal() -> None:
    """The line for a person at a terminal (tests/cli/test_pty.py) is not written when a
    client starts the server: its stdin is then a pipe."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit", "serve", "examples/demo_server.py", "--store", "memory://"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "over stdio: an MCP client starts this command" not in done.stderr, done.stderr


def test_a_state_key_file_that_is_not_text_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "keys"
    path.write_bytes(b"\xff\xfe\x00garbage")
    path.chmod(0o600)
    assert main(["serve", "examples/demo_server.py", "--state-key-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "not UTF-8 text" in err and "keygen" in err, err
