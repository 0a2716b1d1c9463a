"""``--json`` and a Ctrl-C while the command line is still being read: the JSON object
every outcome prints, saying it was interrupted (exit 130), as a Ctrl-C later does."""

from __future__ import annotations

import json
import signal
import sys

import pytest

from cli.helpers import interrupted_at_import

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--json", "--", "true"],
        ["call", "--json", "http://127.0.0.1:9/mcp", "tool"],
        ["--json", "check", "--", "true"],  # wherever it is before the server command
    ],
)
def test_ctrl_c_while_the_command_line_is_read_prints_the_json_object(argv: list[str]) -> None:
    done = interrupted_at_import(*argv)
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    report = json.loads(done.stdout)
    assert (report["ok"], report["exit_code"]) == (False, 130), report
    assert "interrupted" in report["error"], report
    assert report["target"] is None  # the TARGET was not read yet
    assert "Traceback" not in done.stderr, done.stderr


def test_without_json_nothing_is_printed_on_stdout() -> None:
    done = interrupted_at_import("check", "--", "true", "--json")  # --json here is the server's own
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    assert done.stdout == ""
