"""The command line and stopping: Ctrl-C during a call, stop signals to client commands and
to serve over HTTP, stdin from /dev/null, and serve's options that no request could use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.procs import free_port, refused_at_start, wait_listening

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}

SLOW_APP = """
import asyncio
import os
import sys
from pathlib import Path

from mcp_elicit import Server

app = Server("slow")


@app.tool()
async def slow() -> str:
    "Wait a long time."
    Path(sys.argv[-1]).with_name("started").write_text(str(os.getpid()))
    await asyncio.sleep(600)
    return "done"
"""


def _gone(pid: int, within: float) -> bool:
    import os
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_ctrl_c_during_a_call_exits_130_and_stops_the_server(tmp_path: Path, revision: str) -> None:
    import signal
    import time

    app = tmp_path / "slow_app.py"
    app.write_text(SLOW_APP, encoding="utf-8")
    command = [sys.executable, "-m", "mcp_elicit", "call", "slow", "--ui", "none", "--protocol", revision]
    proc = subprocess.Popen(
        [*command, "--", sys.executable, "-m", "mcp_elicit", "serve", str(app)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a signal of its own, as a terminal would send it
    )
    try:
        started = tmp_path / "started"
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert started.exists(), proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)  # the pid is written; let the file be complete
        server_pid = int(started.read_text())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err, err
    assert out == b""
    assert _gone(server_pid, 10), "the server process outlived the interrupted call"


SILENT_SERVER = """
import os, sys, time
from pathlib import Path
Path(sys.argv[1]).write_text(str(os.getpid()))
time.sleep(600)  # reads nothing, answers nothing: only a signal ends it
"""


@pytest.mark.parametrize(("sig", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_stop_signal_to_a_client_command_stops_its_stdio_server(
    tmp_path: Path, sig: str, code: int, as_json: bool
) -> None:
    """SIGTERM (timeout(1), a CI job cancelled, a supervisor) and SIGHUP (the terminal
    closed) stop the server command as Ctrl-C does, even one that does not end when its stdin closes; the exit is 128 + the signal."""
    import signal
    import time

    server = tmp_path / "silent.py"
    server.write_text(SILENT_SERVER, encoding="utf-8")
    started = tmp_path / "started"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_elicit",
            "check",
            "--timeout",
            "300",
            *(["--json"] if as_json else []),
            "--",
            sys.executable,
            str(server),
            str(started),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    server_pid = None
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert started.exists(), proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
        server_pid = int(started.read_text())
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if server_pid is not None and not _gone(server_pid, 10):
            os.kill(server_pid, signal.SIGKILL)
            raise AssertionError(f"the server process outlived the {sig}ed command")
    assert proc.returncode == code, err
    assert b"Traceback" not in err, err
    if not as_json:
        assert out == b""
        return
    # --json gives one object on every outcome, an interruption too
    failure = json.loads(out)
    assert failure["ok"] is False and failure["exit_code"] == code
    said = {"SIGINT": "interrupted (Ctrl-C)", "SIGTERM": "terminated (SIGTERM)", "SIGHUP": "hung up (SIGHUP)"}
    assert failure["error"] == said[sig]
    assert failure["target"]["kind"] == "stdio"


def test_serve_over_stdio_with_stdin_from_dev_null_ends_at_once() -> None:
    """As under docker run without -i, or a service manager: no input at all is the end of
    the input, not a hang (/dev/null is a character device the event loop cannot watch)."""
    with open(os.devnull, "rb") as nothing:
        done = subprocess.run(
            [sys.executable, "-m", "mcp_elicit", "serve", "examples/demo_server.py"],
            stdin=nothing,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (["--path", "/tools/mcp"], "--path is the MCP endpoint's path over HTTP: it needs --http"),
        (["--path", "/mcp"], "--path is the MCP endpoint's path over HTTP: it needs --http"),
        (
            ["--allow-host", "mcp.example.com"],
            "--allow-host names the Hosts HTTP requests may use: it needs --http",
        ),
    ],
)
def test_serve_over_stdio_refuses_options_only_http_uses(given: list[str], says: str) -> None:
    """Served over stdio they would do nothing: refused, as --route is, not silently ignored."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_elicit",
            "serve",
            "examples/demo_server.py",
            "--store",
            "memory://",
            *given,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 2, done.stderr
    assert says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("path", ["mcp", "http://127.0.0.1:8000/mcp", ""])
def test_serve_http_refuses_a_path_that_no_request_can_reach(path: str) -> None:
    """A request's path starts with '/': an endpoint at 'mcp' would answer 404 to every request
    while saying it serves at http://127.0.0.1:PORTmcp."""
    argv = ["serve", "examples/demo_server.py", "--store", "memory://", "--http", f"127.0.0.1:{free_port()}"]
    done = refused_at_start([*argv, "--path", path], f"--path {path!r}")
    assert f"--path must start with '/' (as /mcp does), not {path!r}" in done.stderr, done.stderr


def test_a_stop_signal_ends_serve_http_with_exit_0() -> None:
    """SIGTERM is how a supervisor stops a server: after its graceful stop the process
    exits 0, as the help says, not by the signal re-raised (which a shell reads as 143)."""
    import signal

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_elicit",
            "serve",
            "examples/demo_server.py",
            "--http",
            f"127.0.0.1:{port}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_listening(proc, port), proc.stderr.read() if proc.stderr else ""
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert b"Traceback" not in err, err


HELD_APP = """
import asyncio
from pathlib import Path

from mcp_elicit import Server

app = Server("held")


@app.tool()
async def held() -> str:
    "Wait until stopped."
    Path(__file__).with_name("started").touch()
    await asyncio.sleep(600)
    return "done"
"""


def test_sigterm_closes_the_listening_socket_and_says_what_it_waits_for(tmp_path: Path) -> None:
    """What the README's "Stopping" says: on SIGTERM a new connection is refused at once
    (a balancer sends it elsewhere), while a request already running gets its grace and
    then a JSON-RPC 503; the log says once that the server stops, and what it waits for."""
    import signal
    import socket
    import threading
    import time

    import httpx

    app = tmp_path / "held_app.py"
    app.write_text(HELD_APP, encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_elicit", "serve", str(app), "--http", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    answers: list[httpx.Response] = []
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "held", "_meta": META}}
    headers = {**HEADERS, "mcp-name": "held"}

    def running_call() -> None:
        answers.append(httpx.post(f"http://127.0.0.1:{port}/mcp", json=call, headers=headers, timeout=60))

    caller = threading.Thread(target=running_call)
    try:
        assert wait_listening(proc, port), proc.stderr.read() if proc.stderr else ""
        deadline = time.monotonic() + 30
        caller.start()
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "started").exists(), proc.stderr.read() if proc.stderr else ""
        proc.send_signal(signal.SIGTERM)
        refused = False
        while not refused and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                time.sleep(0.05)
            except ConnectionRefusedError:
                refused = True
        assert refused, "a new connection was still accepted after SIGTERM"
        assert not answers, "the running request was answered before the new one was refused"
        caller.join(timeout=60)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        caller.join(timeout=60)
    assert proc.returncode == 0, err
    (answer,) = answers
    assert answer.status_code == 503 and "shutting down" in answer.json()["error"]["message"], answer.text
    said = [line for line in err.decode().splitlines() if "stopping" in line]
    assert len(said) == 1, err
    assert "INFO" in said[0] and "for 1 running request;" in said[0], said
    # the grace running out is the documented end of a slow request, said as this server's
    # own warning, not uvicorn's "ERROR:    Cancel 1 running task(s)..." in its own format
    lines = err.decode().splitlines()
    assert not [line for line in lines if "ERROR" in line], err
    (over,) = [line for line in lines if "grace" in line]
    assert "WARNING mcp_elicit.cli" in over and "1 request still running" in over, over
