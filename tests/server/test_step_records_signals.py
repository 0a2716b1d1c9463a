"""``complete_elicitation`` called from a signal handler (``signal.signal``), which Python
runs on the main thread between any two bytecodes, whatever that thread holds then: a
completion made that way, at every line of the code that records completions (a lock held
there, or not), returns at once and is recorded. The completions took a lock that the
interrupted code could be holding (when a write ended, or while the server settled them),
and the process hung for good, its event loop with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.waiting import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]

if not hasattr(os, "kill") or sys.platform == "win32":  # pragma: no cover
    pytest.skip("POSIX signals", allow_module_level=True)

#: A webhook's process: each line run in ``step_records.py`` or ``step_line.py`` (each once) is interrupted by
#: a signal whose handler completes another step. Says how many, then which were recorded.
_SIGNALLED = """
import asyncio, faulthandler, signal, sys
from mcp_elicit import KeyRing, Server
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import open_store

faulthandler.dump_traceback_later(float(sys.argv[2]), exit=True)  # a hang says where
url = sys.argv[1]
app = Server("shop", state_keys=KeyRing([bytes(range(40, 72))]), store=url)
steps, seen, handling = ["pay-0"], set(), [False]

def on_signal(signum, frame):
    handling[0] = True
    try:
        steps.append(f"sig-{len(steps)}")
        app.complete_elicitation(steps[-1], "alice")
    finally:
        handling[0] = False

def trace(frame, event, arg):
    if not frame.f_code.co_filename.endswith(("step_records.py", "step_line.py")):
        return None
    where = (frame.f_code.co_name, frame.f_lineno)
    if event == "line" and not handling[0] and where not in seen:
        seen.add(where)
        signal.raise_signal(signal.SIGUSR1)  # handled as this line goes on
    return trace

signal.signal(signal.SIGUSR1, on_signal)

async def main():
    sys.settrace(trace)
    try:
        app.complete_elicitation("pay-0", "alice")
        await app.url_mode.close()
    finally:
        sys.settrace(None)
    print("signals", len(steps) - 1, flush=True)
    reader = StepCompletions(open_store(url), ttl=600.0)
    try:
        lost = [step for step in steps if not await reader.marker(step, "alice")]
    finally:
        await reader.store.close()
    print("lost", *lost, flush=True)

asyncio.run(main())
"""


def test_complete_elicitation_from_a_signal_handler_at_any_line_never_hangs(tmp_path: Path) -> None:
    url = "sqlite:///" + str(tmp_path / "state.db").lstrip("/")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SIGNALLED, url, str(HANG_GUARD / 2)],
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG_GUARD,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:  # pragma: no cover - faulthandler ends it first
        pytest.fail(f"hung: {exc.stderr!r}")
    assert done.returncode == 0, f"hung or failed:\n{done.stderr}"
    said = done.stdout.splitlines()
    assert said[0].startswith("signals ") and int(said[0].split()[1]) >= 20, done.stdout
    assert said[1:] == ["lost"], f"completions made in a signal handler were lost: {done.stdout}"
