"""``serve``'s target written as a module (``app:app``, ``app``), run by the ``mcp-elicit``
console script from the directory that holds ``app.py``: found there, as ``python -m`` and
uvicorn find such a module, not refused as a module nobody can import.

The console script (not ``python -m mcp_elicit``, which puts the directory first on the
path by itself) is what a user types, so it is what runs here, as a real process whose
working directory is the app's.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.procs import cli

APP = "from mcp_elicit import Server\n\napp = Server('from-here')\nother = Server('the-other')\n"


def _check(tmp_path: Path, target: str) -> subprocess.CompletedProcess[str]:
    """``mcp-elicit check --json -- mcp-elicit serve TARGET``, both run from ``tmp_path``."""
    return subprocess.run(
        [*cli(), "check", "--json", "--", *cli(), "serve", target],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=90,
    )


@pytest.mark.parametrize(
    ("target", "name"), [("app:app", "from-here"), ("app", "from-here"), ("app:other", "the-other")]
)
def test_a_module_in_the_working_directory_is_served(tmp_path: Path, target: str, name: str) -> None:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    done = _check(tmp_path, target)
    report = json.loads(done.stdout)
    assert report["exit_code"] == 0, (report, done.stderr)
    assert report["server"]["name"] == name, report


def test_a_module_that_is_nowhere_is_still_named(tmp_path: Path) -> None:
    done = _check(tmp_path, "no_such_app:app")
    report = json.loads(done.stdout)
    assert report["exit_code"] == 3, report
    assert "cannot import module 'no_such_app'" in report["error"], report
