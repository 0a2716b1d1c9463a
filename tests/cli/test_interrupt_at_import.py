"""Ctrl-C while the command line's own module is still being imported (the first fraction
of a second of any ``mcp-elicit`` command, before ``main`` runs): exit 130 with no Python
traceback, as a Ctrl-C later does, and with ``--json`` the JSON object saying so.

The SIGINT is a real one, raised in the process by a ``sitecustomize`` on the child's
``PYTHONPATH`` (the test's own directory) at the moment the named module starts to import:
the same point every run. Both ways in are run: ``python -m mcp_elicit`` and the console
script as ``pyproject.toml`` declares it (what its generated wrapper does).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from support.procs import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SITECUSTOMIZE = """
import signal, sys

_sent = []


def _interrupt(event, args):
    if event == "import" and args[0] == {module!r} and not _sent:
        _sent.append(args[0])
        print("SIGINT at the import of " + args[0], file=sys.stderr, flush=True)
        signal.raise_signal(signal.SIGINT)


sys.addaudithook(_interrupt)
"""


def _console_script() -> list[str]:
    """What the generated ``mcp-elicit`` wrapper runs, for the entry point pyproject names."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, function = scripts["mcp-elicit"].partition(":")
    wrapper = f"import re\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n"
    return [sys.executable, "-c", wrapper]


WAYS_IN = {"python -m": lambda: [sys.executable, "-m", "mcp_elicit"], "console script": _console_script}


def _interrupted(tmp: Path, way_in: str, module: str, *argv: str) -> subprocess.CompletedProcess[str]:
    (tmp / "sitecustomize.py").write_text(SITECUSTOMIZE.format(module=module), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(ROOT)])}
    done = subprocess.run(
        [*WAYS_IN[way_in](), *argv],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert f"SIGINT at the import of {module}" in done.stderr, done.stderr  # it came where meant
    return done


# the command line's module, and asyncio, deep in what that module imports
MODULES = ["mcp_elicit.cli.main", "asyncio"]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("way_in", sorted(WAYS_IN))
def test_ctrl_c_while_the_cli_module_is_imported_exits_130_without_a_traceback(
    tmp_path: Path, way_in: str, module: str
) -> None:
    done = _interrupted(tmp_path, way_in, module, "check", "--", "true", "--json")  # the server's --json
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("way_in", sorted(WAYS_IN))
def test_with_json_it_prints_the_object_a_later_ctrl_c_prints(
    tmp_path: Path, way_in: str, module: str
) -> None:
    done = _interrupted(tmp_path, way_in, module, "call", "--json", "http://127.0.0.1:9/mcp", "tool")
    assert done.returncode == 128 + signal.SIGINT, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert (report["ok"], report["exit_code"], report["target"]) == (False, 130, None), report
    assert "interrupted" in report["error"], report
