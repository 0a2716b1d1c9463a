"""The command line's stdout read by a pipe whose reader has gone away (``| head -1``):
exit 141, as a process killed by SIGPIPE would in a shell, with nothing said; a real
``mcp-elicit`` process against a real stdio server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli.helpers import fake

from support.procs import cli

RUN_TIMEOUT = 60


def _with_a_closed_reader(argv: list[str], tmp_path: Path) -> tuple[int, str]:
    """Run the CLI with stdout a pipe whose read end is closed before it starts (so every
    write it makes there fails, whenever it makes it); its exit code and its stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    err_path = tmp_path / "stderr.txt"
    try:
        with err_path.open("wb") as err:
            done = subprocess.run(
                [*cli(), *argv],
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=err,
                timeout=RUN_TIMEOUT,
                check=False,
            )
    finally:
        os.close(write_end)
    return done.returncode, err_path.read_text(encoding="utf-8", errors="replace")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--", *fake("good")],
        ["check", "--json", "--", *fake("good")],
        ["call", "echo", "text=hi", "--ui", "none", "--", *fake("good")],
        ["call", "--json", "echo", "text=hi", "--ui", "none", "--", *fake("good")],
        ["call", "echo", "text=hi", "--", *fake("good")],  # no terminal: a note would follow the result
        # the failure's JSON is what meets the closed pipe (the server exits with code 3)
        ["check", "--json", "--", *fake("exit")],
        # argparse's own error, given as JSON before the usage
        ["check", "--json", "--no-such-option", "--", *fake("good")],
        ["keygen"],
        # argparse's help, which argparse itself would write and forget the failure of
        ["--help"],
        ["check", "--help"],
        ["call", "--help"],
    ],
    ids=[
        "check",
        "check-json",
        "call",
        "call-json",
        "call-no-terminal",
        "failure-json",
        "usage-json",
        "keygen",
        "help",
        "check-help",
        "call-help",
    ],
)
def test_a_reader_gone_away_ends_the_command_with_141_and_nothing_said(
    argv: list[str], tmp_path: Path
) -> None:
    code, err = _with_a_closed_reader(argv, tmp_path)
    assert code == 141, err
    assert err == "", err  # no traceback, no "Exception ignored", no message about the pipe
