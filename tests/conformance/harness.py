"""Running the official MCP conformance harness (pinned in tools/conformance) from tests.

``make install`` puts Node 22 in tools/node22 and the harness in tools/conformance; where
they are missing the tests that need them skip, saying how to install them.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "tools" / "node22" / "node_modules" / "node" / "bin"
HARNESS = ROOT / "tools" / "conformance" / "node_modules" / "@modelcontextprotocol" / "conformance"
OK = {"SUCCESS", "INFO", "SKIPPED"}


def require_harness() -> None:
    if not (NODE_BIN / "node").exists() or not HARNESS.exists():
        pytest.skip("the conformance harness is not installed here; `make install` installs Node 22 and it")


def env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    entry = json.loads((HARNESS / "package.json").read_text())["bin"]
    script = HARNESS / (entry if isinstance(entry, str) else next(iter(entry.values())))
    return subprocess.run(
        [str(NODE_BIN / "node"), str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
        cwd=ROOT,
        check=False,
    )


def scored(kind: str, revision: str) -> list[str]:
    """The scenarios the harness scores for ``revision`` (``kind`` is server or client)."""
    out = run("list", "--requirements", revision, timeout=120).stdout
    section = out.split("Server scenarios" if kind == "server" else "Client scenarios", 1)[1]
    section = re.split(r"\n\s*\n", section, maxsplit=1)[0]
    return re.findall(r"^\s+- (\S+)", section, flags=re.MULTILINE)


def extension_scenarios(kind: str, prefix: str) -> list[str]:
    """The harness's scenarios of an extension (not scored) whose names start with ``prefix``."""
    out = run("list", timeout=120).stdout
    section = out.split("Server scenarios" if kind == "server" else "Client scenarios", 1)[1]
    section = re.split(r"\n\s*\n", section, maxsplit=1)[0]
    return re.findall(rf"^\s+- ({re.escape(prefix)}\S*) \[extension\]", section, flags=re.MULTILINE)


@dataclass
class Outcome:
    passed: list[str] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)


def read_results(out_dir: Path, scenarios: list[str], prefix: str = "") -> Outcome:
    """Judge each scored scenario from its checks.json: WARNING and FAILURE both fail."""
    outcome = Outcome()
    dirs = [p for p in out_dir.rglob("checks.json")]
    for name in scenarios:
        # <name>-<timestamp>: "auth/iss-supported" must not take "auth/iss-supported-missing"
        wanted = re.compile(re.escape(f"{prefix}{name}".replace("/", os.sep)) + r"-\d")
        found = [p for p in dirs if wanted.match(str(p.parent.relative_to(out_dir)))]
        if not found:
            outcome.failed[name] = ["no results were written"]
            continue
        bad = []
        for path in found:
            for check in json.loads(path.read_text()):
                if check["status"] not in OK:
                    # a check with no message of its own (a WARNING left standing) says what it saw
                    said = check.get("errorMessage") or json.dumps(check.get("details"), sort_keys=True)
                    bad.append(f"{check['id']} {check['status']}: {said[:300]}")
        if bad:
            outcome.failed[name] = bad + [tail for path in found if (tail := _stderr_tail(path.parent))]
        else:
            outcome.passed.append(name)
    return outcome


def _stderr_tail(scenario_dir: Path, lines: int = 12) -> str:
    """The last lines the program under test wrote to stderr in one scenario (the suite keeps
    them beside checks.json), so that a failure seen only in CI says what the program saw."""
    path = scenario_dir / "stderr.txt"
    if not path.is_file():
        return ""
    tail = path.read_text(errors="replace").strip().splitlines()[-lines:]
    return "its stderr ended with:\n    " + "\n    ".join(tail) if tail else ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Until the server listens (at most ``timeout`` s: a start under parallel load took more than 20)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def serve(target: str, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_elicit",
            "serve",
            target,
            "--http",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc)
    except Exception:
        proc.kill()
        proc.wait()
        raise
    return proc
