"""``--json`` and a Ctrl-C while the command line is still being read: the JSON object
every outcome prints, saying it was interrupted (exit 130), as a Ctrl-C later does."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from support.procs import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A real SIGINT, sent to the process by the system, when the CLI imports the module of
# its call command (while it builds its parser), with the words given after the script.
INTERRUPTED_AT_IMPORT = """
import signal, sys
from mcp_elicit.cli.main import main

def hook(event, args):
    if event == "import" and args[0] == "mcp_elicit.cli.call":
        signal.raise_signal(signal.SIGINT)

sys.addaudithook(hook)
sys.exit(main(sys.argv[1:]))
"""


def _interrupted(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT_IMPORT, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--json", "--", "true"],
        ["call", "--json", "http://127.0.0.1:9/mcp", "tool"],
        ["--json", "check", "--", "true"],  # wherever it is before the server command
    ],
)
def test_ctrl_c_while_the_command_line_is_read_prints_the_json_object(argv: list[str]) -> None:
    done = _interrupted(*argv)
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    report = json.loads(done.stdout)
    assert (report["ok"], report["exit_code"]) == (False, 130), report
    assert "interrupted" in report["error"], report
    assert report["target"] is None  # the TARGET was not read yet
    assert "Traceback" not in done.stderr, done.stderr


def test_without_json_nothing_is_printed_on_stdout() -> None:
    done = _interrupted("check", "--", "true", "--json")  # --json here is the server's own
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    assert done.stdout == ""
