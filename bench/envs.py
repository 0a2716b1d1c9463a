"""The peers' environments: one virtualenv per peer under ``bench/.envs/<name>``.

Each is built with ``python -m venv`` and ``pip install -r bench/requirements-<name>.txt``
(every package pinned), never in the project's own venv. A stamp file holds the hash
of the requirements it was built from; a changed file rebuilds the env. The project's
server, the floor, the load generator and the micro-benchmarks run from the project
venv (``sys.executable``), which pins the same uvicorn, httptools and uvloop.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ENVS = BENCH / ".envs"
STAMP = ".bench-installed"


@dataclass(frozen=True)
class Env:
    """A peer's environment, or the project venv when ``name`` is None."""

    name: str | None

    @property
    def requirements(self) -> Path | None:
        return None if self.name is None else BENCH / f"requirements-{self.name}.txt"

    @property
    def path(self) -> Path | None:
        return None if self.name is None else ENVS / self.name

    @property
    def python(self) -> str:
        return sys.executable if self.path is None else str(self.path / "bin" / "python")

    def _digest(self) -> str:
        assert self.requirements is not None
        return hashlib.sha256(self.requirements.read_bytes()).hexdigest()

    def ready(self) -> bool:
        """True when the env exists and was built from the current requirements."""
        if self.path is None:
            return True
        stamp = self.path / STAMP
        return stamp.is_file() and stamp.read_text().strip() == self._digest()

    def install(self, log: Path) -> None:
        """(Re)build the env from its pinned requirements; output goes to ``log``."""
        if self.path is None or self.ready():
            return
        assert self.requirements is not None
        base = getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"
        if self.path.exists():
            shutil.rmtree(self.path)
        with log.open("ab") as out:
            subprocess.run([base, "-m", "venv", str(self.path)], check=True, stdout=out, stderr=out)
            pip = [self.python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            subprocess.run([*pip, "-r", str(self.requirements)], check=True, stdout=out, stderr=out)
        (self.path / STAMP).write_text(self._digest() + "\n")

    def versions(self, *packages: str) -> dict[str, str]:
        """Installed versions of ``packages`` in this env (missing ones are left out)."""
        code = (
            "import importlib.metadata as m, json, sys\n"
            "out = {}\n"
            "for p in sys.argv[1:]:\n"
            "    try: out[p] = m.version(p)\n"
            "    except m.PackageNotFoundError: pass\n"
            "print(json.dumps(out))\n"
        )
        done = subprocess.run(
            [self.python, "-c", code, *packages], check=True, capture_output=True, text=True
        )
        result: dict[str, str] = json.loads(done.stdout)
        return result
