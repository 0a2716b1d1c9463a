"""Running one server under uvicorn and measuring it with the load generator.

Rules:

* Every server, the floor included, runs under the same uvicorn command: one worker,
  ``--http httptools --loop uvloop --no-access-log --log-level warning``, bound to
  127.0.0.1 on a free port, started from its own environment's interpreter.
* The server is pinned to one core and the load generator (and this harness) to
  another, when the machine has two; nothing else of ours runs during a measurement.
* A server is always stopped, SIGINT then SIGKILL, whatever happened, and its stderr
  is kept so that a failure can say why.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs import BENCH, Env

SERVERS_DIR = BENCH / "servers"
LOADGEN = BENCH / "loadgen.py"
PROFILE_SERVER = BENCH / "profile_server.py"
UVICORN_FLAGS = (
    "--workers",
    "1",
    "--http",
    "httptools",
    "--loop",
    "uvloop",
    "--no-access-log",
    "--log-level",
    "warning",
)


@dataclass(frozen=True)
class ServerSpec:
    """One server of the comparison."""

    name: str
    title: str
    env: Env
    module: str
    package: str
    extra_env: Mapping[str, str] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Cores:
    """Which core the server gets and which the load generator gets (None: no pinning)."""

    server: int | None
    client: int | None

    @classmethod
    def pick(cls) -> Cores:
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            return cls(None, None)
        return cls(server=cores[-1], client=cores[0])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerFailed(RuntimeError):
    """The server did not start, or died under load."""


@dataclass
class RunningServer:
    """A started server: its process, port and log."""

    spec: ServerSpec
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise ServerFailed(f"{self.spec.name} exited with {self.proc.returncode}:\n{self.log_tail()}")


@contextmanager
def serve(
    spec: ServerSpec, cores: Cores, *, timeout: float = 60.0, profile_to: tuple[str, Path] | None = None
) -> Iterator[RunningServer]:
    """Start ``spec`` under uvicorn, wait until it accepts connections, always stop it.

    ``profile_to`` (the profiler's site-packages, the output file) runs it under
    ``profile_server.py`` instead, with the same uvicorn arguments.
    """
    port = free_port()
    if profile_to is None:
        launcher = [spec.env.python, "-m", "uvicorn"]
    else:
        site, out = profile_to
        launcher = [spec.env.python, str(PROFILE_SERVER), "--tools-site", site, "--out", str(out), "--"]
    cmd = [
        *launcher,
        "--app-dir",
        str(SERVERS_DIR),
        f"{spec.module}:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *UVICORN_FLAGS,
    ]
    env = {**os.environ, **spec.extra_env, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    pin = cores.server

    def pin_server() -> None:  # runs in the child before exec: every thread inherits it
        if pin is not None:
            os.sched_setaffinity(0, {pin})

    log_fd, log_name = tempfile.mkstemp(prefix=f"bench-{spec.name}-", suffix=".log")
    log = Path(log_name)
    proc = subprocess.Popen(
        cmd, stdout=log_fd, stderr=log_fd, stdin=subprocess.DEVNULL, env=env, preexec_fn=pin_server
    )
    os.close(log_fd)
    server = RunningServer(spec, proc, port, log)
    try:
        _wait_ready(server, timeout)
        yield server
    finally:
        _stop(proc)
        log.unlink(missing_ok=True)


def _wait_ready(server: RunningServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        server.check_alive()
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise ServerFailed(
                    f"{server.spec.name} did not listen within {timeout:.0f} s:\n{server.log_tail()}"
                ) from None
            time.sleep(0.05)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def start_load(
    server: RunningServer, cores: Cores, *, mode: str, clients: int, warmup: float, duration: float
) -> subprocess.Popen[str]:
    """Start the load generator against ``server``; :func:`finish_load` collects its figures."""
    cmd = [sys.executable, str(LOADGEN), "--port", str(server.port), "--mode", mode]
    cmd += ["--clients", str(clients), "--warmup", str(warmup), "--duration", str(duration)]
    cmd += ["--server-pid", str(server.pid)]
    if cores.client is not None:
        cmd += ["--cpu", str(cores.client)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_load(server: RunningServer, gen: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
    try:
        stdout, stderr = gen.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        gen.kill()
        gen.communicate()
        raise ServerFailed(f"the load generator hung on {server.spec.name}") from None
    server.check_alive()
    if gen.returncode != 0:
        raise ServerFailed(f"load generator failed on {server.spec.name}:\n{stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(stdout)
    return figures


def load(
    server: RunningServer, cores: Cores, *, mode: str, clients: int, warmup: float, duration: float
) -> dict[str, Any]:
    """One load-generator window against ``server``; the figures it printed."""
    gen = start_load(server, cores, mode=mode, clients=clients, warmup=warmup, duration=duration)
    return finish_load(server, gen, timeout=warmup + duration + 60)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1])
    return 0


# ---- profiling -------------------------------------------------------------------------


def profile(
    spec: ServerSpec, cores: Cores, tools_site: str, *, seconds: float, clients: int = 16
) -> dict[str, Any]:
    """Run ``spec`` under pyinstrument while the load generator drives it; the top costs.

    Sampling starts after a second of load and lasts ``seconds``.
    """
    out = Path(tempfile.mkstemp(prefix="bench-profile-", suffix=".txt")[1])
    out.unlink()
    try:
        with serve(spec, cores, profile_to=(tools_site, out)) as server:
            gen = start_load(server, cores, mode="rounds", clients=clients, warmup=1.0, duration=seconds + 1)
            time.sleep(1.0)
            os.kill(server.pid, signal.SIGUSR1)
            time.sleep(seconds)
            os.kill(server.pid, signal.SIGUSR2)
            figures = finish_load(server, gen, timeout=seconds + 60)
            deadline = time.monotonic() + 60
            while not out.exists():
                server.check_alive()
                if time.monotonic() > deadline:
                    raise ServerFailed(f"{spec.name} wrote no profile:\n{server.log_tail()}")
                time.sleep(0.1)
        summary = summarize_profile(out.read_text())
        summary["rounds_per_s_while_profiled"] = figures["per_s"]
        summary["other_busy"] = figures["other_busy"]
        return summary
    finally:
        out.unlink(missing_ok=True)


def _owner_area(frames: list[str]) -> str:
    """The area of the innermost frame that is real code: built-ins, generated code
    (``<string>``, dataclass ``__init__``) and frozen modules count as their caller's."""
    for frame in reversed(frames):
        if "(<" not in frame:
            return _frame_area(frame)
    return _frame_area(frames[-1])


def _frame_area(frame: str) -> str:
    """The package (or mcp_elicit sub-package) a frame ``func (path:line)`` belongs to."""
    start = frame.rfind("(")
    path = frame[start + 1 :].rsplit(":", 1)[0] if start >= 0 else frame
    parts = path.replace("\\", "/").split("/")
    if parts[0] == "mcp_elicit" and len(parts) > 2:
        return f"mcp_elicit.{parts[1]}"
    if parts[0] == "mcp_elicit":
        return f"mcp_elicit.{parts[1].removesuffix('.py')}" if len(parts) > 1 else "mcp_elicit"
    if len(parts) == 1:
        name = parts[0].removesuffix(".py")
        return "stdlib" if name in _STDLIB_TOPS else name
    return parts[0]


_STDLIB_TOPS = frozenset(sys.stdlib_module_names)


def summarize_profile(raw: str, top: int = 15) -> dict[str, Any]:
    """Self and inclusive shares of the sampled CPU time, by function and by package.

    ``raw`` is the collapsed format: ``frame;frame;...;leaf weight`` per line, root first,
    each frame ``function (file:line)`` (what ``profile_server.py`` writes, and what
    ``py-spy record --format raw`` writes too). Inclusive shares count only the stacks
    that start at the most common root (with pyinstrument, all of them).
    """
    stacks: list[tuple[list[str], int]] = []
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = [f.strip() for f in stack.split(";") if f.strip()]
        if frames and count_text.isdigit():
            stacks.append((frames, int(count_text)))
    roots: Counter[str] = Counter()
    for frames, count in stacks:
        roots[frames[0]] += count
    root = roots.most_common(1)[0][0] if roots else ""
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    by_area: Counter[str] = Counter()
    total = complete = 0
    for frames, count in stacks:
        total += count
        self_time[frames[-1]] += count
        by_area[_owner_area(frames)] += count
        if frames[0] == root:
            complete += count
            for frame in set(frames):
                inclusive[frame] += count

    def share(counter: Counter[str], n: int, of: int) -> list[dict[str, Any]]:
        return [{"function": name, "percent": 100.0 * c / of} for name, c in counter.most_common(n) if of]

    return {
        "samples": total,
        "complete_samples": complete,
        "self": share(self_time, top * 2, total),
        "inclusive": share(inclusive, 80, complete),
        "by_package": share(by_area, top, total),
    }
