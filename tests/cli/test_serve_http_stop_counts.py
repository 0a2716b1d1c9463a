"""``serve --http`` at SIGTERM: the line saying what it waits for counts only what it
waits for. An open stream (a 2025-11-25 session's standalone stream) ends at once with
its session: it is no running request."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from cli.test_main_stopping import HEADERS, HELD_APP, META

from support.procs import free_port, wait_listening

OLD = "2025-11-25"


def _session(base: str) -> str:
    """A 2025-11-25 session, initialized: its id."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": OLD, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    accept = {"accept": "application/json, text/event-stream"}
    answer = httpx.post(base, json=hello, headers=accept, timeout=30)
    sid = answer.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {**accept, "mcp-session-id": sid, "mcp-protocol-version": OLD}
    assert httpx.post(base, json=done, headers=headers, timeout=30).status_code == 202
    return sid


def test_sigterm_counts_a_running_request_and_not_an_open_stream(tmp_path: Path) -> None:
    app = tmp_path / "held_app.py"
    app.write_text(HELD_APP, encoding="utf-8")
    port = free_port()
    base = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_elicit", "serve", str(app), "--http", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "held", "_meta": META}}
    opened = threading.Event()
    ended: list[int] = []

    def stream(sid: str) -> None:
        headers = {"accept": "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": OLD}
        with httpx.stream("GET", base, headers=headers, timeout=60) as response:
            ended.append(response.status_code)
            opened.set()
            for _ in response.iter_bytes():
                pass

    def running_call() -> None:
        httpx.post(base, json=call, headers={**HEADERS, "mcp-name": "held"}, timeout=60)

    threads: list[threading.Thread] = []
    try:
        assert wait_listening(proc, port), proc.stderr.read() if proc.stderr else ""
        threads.append(threading.Thread(target=stream, args=(_session(base),)))
        threads.append(threading.Thread(target=running_call))
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while not (opened.is_set() and (tmp_path / "started").exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.is_set() and (tmp_path / "started").exists(), "the stream or the call did not start"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for thread in threads:
            thread.join(timeout=60)
    assert proc.returncode == 0, err
    (said,) = [line for line in err.decode().splitlines() if "stopping" in line]
    assert "for 1 running request;" in said, said
    assert "1 session ends now" in said, said
    assert "1 open stream closes now" in said, said
