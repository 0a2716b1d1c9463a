"""What a benchmark run is measured on: the machine, and the project commit."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from envs import BENCH


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadavg_at_start": os.getloadavg(),
    }


def revision() -> dict[str, Any]:
    """The project commit measured, and the package files that differ from it."""
    root = BENCH.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return done.stdout.rstrip() if done.returncode == 0 else ""

    changed = git("status", "--porcelain", "--", "mcp_elicit")
    return {
        "commit": git("rev-parse", "--short=12", "HEAD") or "unknown",
        "uncommitted": sorted(line[3:] for line in changed.splitlines() if line.strip()),
    }
