"""Running the command line in process (or, to interrupt it as it starts, in a subprocess), the
servers it is run against, and reading what it printed."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from client.recorder import Recorder

from mcp_elicit.cli.main import main

from support.procs import ROOT, cli
from support.wire import WireChecker

HERE = Path(__file__).resolve().parent
DEMO = ROOT / "examples" / "demo_server.py"
TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()


def demo_stdio() -> list[str]:
    """The demo server over stdio, as a command."""
    return [*cli(), "serve", str(DEMO)]


def url_server() -> list[str]:
    """The URL-mode demo server (url_server.py) over stdio, as a command."""
    return [*demo_stdio()[:-1], str(HERE / "url_server.py")]


# A real SIGINT, sent to the process by the system, when the CLI imports the module of its call
# command (while it builds its parser), with the words given after the script.
_INTERRUPTED_AT_IMPORT = """
import signal, sys
from mcp_elicit.cli.main import main

def hook(event, args):
    if event == "import" and args[0] == "mcp_elicit.cli.call":
        signal.raise_signal(signal.SIGINT)

sys.addaudithook(hook)
sys.exit(main(sys.argv[1:]))
"""


def interrupted_at_import(*argv: str) -> subprocess.CompletedProcess[str]:
    """``mcp-elicit ARGV`` in a subprocess, interrupted (SIGINT) while it reads its command line."""
    return subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_AT_IMPORT, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


#: A terminal that can only show ASCII: the C locale, without Python's UTF-8 mode.
ASCII_ONLY = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def fake(mode: str, era: str = "legacy") -> list[str]:
    """The misbehaving stdio server (fake_stdio_server.py) in ``mode``."""
    return [sys.executable, str(HERE / "fake_stdio_server.py"), mode, "--era", era]


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        value = json.loads(self.out)
        assert isinstance(value, dict)
        return value

    def wire(self) -> list[tuple[str, dict[str, Any]]]:
        """The messages ``--trace`` printed: ("send" | "receive", message)."""
        out = []
        for line in self.err.splitlines():
            if line.startswith(("→ ", "← ")):
                out.append(("send" if line[0] == "→" else "receive", json.loads(line[2:])))
        return out

    def sent(self) -> list[dict[str, Any]]:
        return [m for d, m in self.wire() if d == "send"]

    def sent_methods(self) -> list[str]:
        return [m["method"] for m in self.sent() if "method" in m and "id" in m]

    def check_wire(self, revision: str) -> int:
        """Every message the client sent is valid at ``revision``; how many."""
        recorder = Recorder()
        for direction, message in self.wire():
            recorder("send" if direction == "send" else "receive", message)
        return recorder.check(WireChecker.load(revision))


#: Recursion limits a process may run with: Python's default, and one raised as a program
#: embedding mcp-elicit (or a test library, for its own run) may set it. How deep a value
#: is "too deep" must not depend on it.
RECURSION_LIMITS = pytest.mark.parametrize(
    "recursion_limit", [None, 5000], ids=["default-limit", "raised-limit"]
)


@contextlib.contextmanager
def limited_recursion(limit: int | None) -> Iterator[None]:
    """The process's recursion limit set to ``limit`` (None: left as it is) in the block."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit or before)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def answers_file(tmp: Path, script: object) -> str:
    path = tmp / "answers.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    return str(path)


BOOKING = {
    "answers": [
        {"fields": ["party_size"], "content": {"party_size": 2, "date": TOMORROW, "seating": "terrace"}},
        {"fields": ["confirm"], "content": {"confirm": True}},
        {"fields": ["mood"], "content": {"mood": "lively"}},
        {"fields": ["course"], "content": {"course": "mains"}},
    ]
}
