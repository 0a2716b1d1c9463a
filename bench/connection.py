"""The connection test: how long ``mcp-elicit check`` takes against the demo server, next
to the official SDK's client doing the same, and the server's start alone.

What is timed, from spawning the first process to the last one's exit, interleaved
A B C D E F, A B C D E F, ... (after one untimed round that warms the caches):

* ``check`` (A): ``.venv/bin/mcp-elicit check -- .venv/bin/mcp-elicit serve
  examples/demo_server.py``, as a user runs it: spawn the server, ``server/discover``, list
  the tools (every page), check them, print the report, close the server, exit. Exit 0,
  every demo tool on its page.
* ``sdk`` (B): ``bench/clients/sdk_check.py`` under the SDK's environment: the same
  server command through ``mcp.Client(StdioServerParameters(...))`` (its default probe:
  ``server/discover``, ``initialize`` as fallback), ``list_tools()`` every page, exit. Exit
  0, every demo tool seen.
* ``server`` (C): the server's start alone: spawn ``mcp-elicit serve
  examples/demo_server.py``, write one ``server/discover`` line, read the answer, close its
  stdin, wait for its exit. Both clients pay this; what they add to it is the client's own
  share (A - C and B - C, run by run).
* ``help``, ``sdk-import``, ``python`` (D, E, F): what the shares are made of: the CLI's
  start (``mcp-elicit --help``: interpreter, imports, parser), the SDK client's start
  (``python -c "from mcp import Client, StdioServerParameters"``) and a bare interpreter
  (``python -c pass``).

Every process runs on all of the harness's cores (``bench/run.py`` pins itself to one),
from the project root, with bytecode caching on as for a user (``_environment``). An import profile (``python -X importtime``) of one run of each
client says which packages their starts import.

    .venv/bin/python bench/connection.py --runs 9     # alone: prints the results section
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import report_connection
from envs import BENCH, Env

ROOT = BENCH.parent
DEMO = "examples/demo_server.py"
SDK_CHECK = BENCH / "clients" / "sdk_check.py"
DEMO_TOOLS = frozenset(
    {"book_table", "list_bookings", "cancel_booking", "check_availability", "share_to_calendar"}
)
DISCOVER = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                }
            },
        }
    )
    + "\n"
).encode()
TIMEOUT = 60.0


class ConnectionFailed(RuntimeError):
    """A command of the connection test failed, or did not see what it should."""


@dataclass(frozen=True)
class Case:
    """One timed command: its key, what it is, how it is run and how it is shown."""

    key: str
    title: str
    argv: tuple[str, ...]
    shown: str
    verify: Callable[[str], None] | None = None
    script_of: str | None = None  # the interpreter, when argv[0] is a script run by it


def _shown(path: Path | str) -> str:
    path = Path(path)
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def _verify_check(stdout: str) -> None:
    missing = sorted(name for name in DEMO_TOOLS if name not in stdout)
    if "OK:" not in stdout or missing:
        raise ConnectionFailed(
            f"mcp-elicit check did not list every demo tool (missing {missing}):\n{stdout}"
        )


def _verify_sdk(stdout: str) -> None:
    seen = json.loads(stdout.strip().splitlines()[-1])
    if set(seen["tools"]) != DEMO_TOOLS:
        raise ConnectionFailed(f"the SDK client saw the tools {seen['tools']}, not the demo's")


def cases(project: Env, sdk: Env | None) -> list[Case]:
    """The commands, A B C D E F (without the SDK's when its env is missing)."""
    python = os.path.normpath(project.python)  # not resolved: a venv's python is a symlink
    cli = Path(python).with_name("mcp-elicit")
    server = (str(cli), "serve", DEMO)
    server_shown = f"{_shown(cli)} serve {DEMO}"
    out = [
        Case(
            "check",
            "`mcp-elicit check` (A)",
            (str(cli), "check", "--", *server),
            f"{_shown(cli)} check -- {server_shown}",
            _verify_check,
            script_of=python,
        )
    ]
    if sdk is not None:
        out.append(
            Case(
                "sdk",
                "the official SDK's `Client` (B)",
                (sdk.python, str(SDK_CHECK), "--", *server),
                f"{_shown(sdk.python)} {_shown(SDK_CHECK)} -- {server_shown}",
                _verify_sdk,
            )
        )
    out.append(Case("server", "the server's start alone (C): one `server/discover`", server, server_shown))
    out.append(Case("help", "`mcp-elicit --help`", (str(cli), "--help"), f"{_shown(cli)} --help"))
    if sdk is not None:
        code = "from mcp import Client, StdioServerParameters"
        out.append(
            Case(
                "sdk-import",
                "the SDK client's imports",
                (sdk.python, "-c", code),
                f'{_shown(sdk.python)} -c "{code}"',
            )
        )
    out.append(Case("python", "a bare interpreter", (python, "-c", "pass"), f"{_shown(python)} -c pass"))
    return out


def _environment() -> dict[str, str]:
    """Ours, minus what would make a run unlike a user's: an extra path, import profiling,
    and ``PYTHONDONTWRITEBYTECODE`` (a user's Python caches bytecode; the warm-up round
    writes what is missing, so no timed run compiles)."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env


def _unpin(cpus: Sequence[int] | None) -> Callable[[], None] | None:
    if not cpus:
        return None
    wanted = set(cpus)

    def run_on_all() -> None:  # in the child, before exec: the server it spawns inherits it
        os.sched_setaffinity(0, wanted)

    return run_on_all


def run_case(case: Case, cpus: Sequence[int] | None) -> float:
    """Run ``case`` once; its wall time in seconds."""
    if case.key == "server":
        return _server_start(case.argv, cpus)
    started = time.perf_counter()
    done = subprocess.run(
        case.argv,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env=_environment(),
        preexec_fn=_unpin(cpus),
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise ConnectionFailed(f"{case.shown} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    if case.verify is not None:
        case.verify(done.stdout)
    return elapsed


def _server_start(argv: Sequence[str], cpus: Sequence[int] | None) -> float:
    """Spawn the server, one ``server/discover``, close its stdin, wait for its exit."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=ROOT,
            env=_environment(),
            preexec_fn=_unpin(cpus),
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            proc.stdin.write(DISCOVER)
            proc.stdin.flush()
            answer = _read_line(proc.stdout.fileno(), started + TIMEOUT)
            proc.stdin.close()
            code = proc.wait(timeout=TIMEOUT)
            elapsed = time.perf_counter() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        errors.seek(0)
        tail = errors.read().decode(errors="replace")[-2000:]
    try:
        result = json.loads(answer)["result"]
    except (ValueError, KeyError, TypeError):
        raise ConnectionFailed(
            f"the server answered server/discover with {answer[:300]!r}:\n{tail}"
        ) from None
    if code != 0 or "2026-07-28" not in result.get("supportedVersions", ()):
        raise ConnectionFailed(f"the server exited with {code} after answering {answer[:300]!r}:\n{tail}")
    return elapsed


def _read_line(fd: int, deadline: float) -> bytes:
    data = b""
    while b"\n" not in data:
        left = deadline - time.perf_counter()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise ConnectionFailed("the server did not answer server/discover in time")
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0]


def import_profile(case: Case, cpus: Sequence[int] | None, top: int = 12) -> dict[str, Any]:
    """One run of ``case`` (a Python command) under ``-X importtime``: import time by package.

    Each module's own ("self") time goes to its top-level package, so the packages add up
    to the whole. ``-X importtime`` itself slows imports down; read these as shares.
    """
    argv = case.argv if case.script_of is None else (case.script_of, *case.argv)
    command = [argv[0], "-X", "importtime", *argv[1:]]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env=_environment(),
        preexec_fn=_unpin(cpus),
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise ConnectionFailed(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return summarize_importtime(done.stderr.splitlines(), top)


def summarize_importtime(lines: Iterable[str], top: int = 12) -> dict[str, Any]:
    """Total import time and its split by top-level package, from ``-X importtime`` lines."""
    by_package: Counter[str] = Counter()
    modules = 0
    for line in lines:
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        try:
            own, _, name = line.split(":", 1)[1].split("|")
            by_package[name.strip().split(".")[0]] += int(own)
        except ValueError:
            continue
        modules += 1
    total = sum(by_package.values())
    return {
        "total_ms": total / 1000,
        "modules": modules,
        "by_package": [{"package": p, "ms": us / 1000} for p, us in by_package.most_common(top)],
    }


def measure(
    runs: int,
    *,
    project: Env,
    sdk: Env | None,
    cpus: Sequence[int] | None,
    warmup: bool = True,
    profile: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """``runs`` interleaved rounds of every case (raw seconds), and the import profiles."""
    todo = cases(project, sdk)
    if warmup:
        for case in todo:
            run_case(case, cpus)
    samples: dict[str, list[float]] = {case.key: [] for case in todo}
    for r in range(runs):
        if log is not None:
            log(f"connection test: run {r + 1}/{runs}")
        for case in todo:
            samples[case.key].append(run_case(case, cpus))
    profiles: dict[str, Any] = {}
    if profile:
        for case in todo:
            if case.key in ("check", "sdk"):
                profiles[case.key] = import_profile(case, cpus)
    return {
        "runs": runs,
        "cpus": list(cpus) if cpus else None,
        "commands": {case.key: {"title": case.title, "shown": case.shown} for case in todo},
        "samples_s": samples,
        "import_profiles": profiles,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=9, help="interleaved runs (default 9)")
    parser.add_argument("--no-sdk", action="store_true", help="leave out the official SDK's client")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    sdk = Env("mcp")
    if not args.no_sdk and not sdk.ready():
        print("bench/.envs/mcp is not built (make bench builds it); use --no-sdk", file=sys.stderr)
        return 2
    raw = measure(
        args.runs,
        project=Env(None),
        sdk=None if args.no_sdk else sdk,
        cpus=sorted(os.sched_getaffinity(0)),
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    raw["summary"] = report_connection.connection_summary(raw)
    if args.json:
        print(json.dumps(raw, indent=1))
    else:
        print("\n".join(report_connection.render_connection(raw, report_connection.connection_targets(raw))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
