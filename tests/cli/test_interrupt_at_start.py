"""Ctrl-C while the command line is still being read (the commands' modules are imported
then, which takes a moment): exit 130 like an interrupt at any later point, with no
Python traceback."""

from __future__ import annotations

import signal
import sys

import pytest

from cli.helpers import interrupted_at_import

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def test_ctrl_c_while_the_command_line_is_read_exits_130_without_a_traceback() -> None:
    done = interrupted_at_import("check", "--", "true")  # SIGINT as the CLI imports its call command
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
