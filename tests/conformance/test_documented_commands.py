"""The harness commands the conformance examples document, run as a user runs them: from
the repository root after ``make install``, in a shell, with one scenario each (a free port
for 8000) instead of the whole requirement set, which the other tests here run."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import harness

pytestmark = [pytest.mark.conformance, pytest.mark.xdist_group("conformance")]

EXAMPLES = harness.ROOT / "examples"


def documented(example: str) -> list[str]:
    """The command lines of ``example``'s docstring (its indented lines)."""
    source = (EXAMPLES / example).read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=True) or ""
    return [line.strip() for line in doc.splitlines() if line.startswith("    ")]


def harness_line(lines: list[str], command: str) -> str:
    (line,) = [line for line in lines if re.search(rf"\bconformance {command}\b", line)]
    program = next(word for word in shlex.split(line) if not re.match(r"[A-Za-z_]\w*=", word))
    # the harness pinned in this repository, never a package npx would fetch by that name
    pinned = harness.ROOT / "tools" / "conformance" / "node_modules"
    assert Path(os.path.normpath(harness.ROOT / program)).is_relative_to(pinned), line
    return line


def run(line: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    return subprocess.run(
        f"{line} -o {shlex.quote(str(tmp_path / 'results'))}",
        shell=True,
        cwd=harness.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_server_example_runs_under_the_harness_as_documented(tmp_path: Path) -> None:
    lines = documented("conformance_server.py")
    line = harness_line(lines, "server")
    harness.require_harness()
    (serve,) = [line for line in lines if line.startswith("mcp-elicit serve examples/conformance_server.py")]
    assert serve.endswith("--http 127.0.0.1:8000") and "http://127.0.0.1:8000/mcp" in line
    port = harness.free_port()
    proc = harness.serve("examples/conformance_server.py", port)
    try:
        done = run(line.replace(":8000/", f":{port}/") + " --scenario server-initialize", tmp_path)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        finally:
            if proc.stderr is not None:
                proc.stderr.close()
    assert done.returncode == 0 and re.search(r"Passed: (\d+)/\1, 0 failed", done.stdout + done.stderr), done


def test_the_client_example_runs_under_the_harness_as_documented(tmp_path: Path) -> None:
    line = harness_line(documented("conformance_client.py"), "client")
    harness.require_harness()
    assert "examples/conformance_client.py" in line and line.endswith("--requirements 2026-07-28"), line
    line = line.removesuffix("--requirements 2026-07-28") + "--scenario tools_call"
    done = run(line, tmp_path)
    assert done.returncode == 0 and "OVERALL: PASSED" in done.stdout + done.stderr, done
