"""Ctrl-C while the command line is still being read (the commands' modules are imported
then, which takes a moment): exit 130 like an interrupt at any later point, with no
Python traceback."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from support.procs import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A real SIGINT, sent to the process by the system, at the moment the CLI imports the module
# of its call command (while it builds its parser).
INTERRUPTED_AT_IMPORT = """
import signal, sys
from mcp_elicit.cli.main import main

def hook(event, args):
    if event == "import" and args[0] == "mcp_elicit.cli.call":
        signal.raise_signal(signal.SIGINT)

sys.addaudithook(hook)
sys.exit(main(["check", "--", "true"]))
"""


def test_ctrl_c_while_the_command_line_is_read_exits_130_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT_IMPORT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
