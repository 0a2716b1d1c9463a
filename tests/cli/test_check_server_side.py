"""What a server receives from ``mcp-elicit check``, recorded on the server's side (not the
client's own trace): over stdio and Streamable HTTP, at both revisions, whatever the server
lists or fails, only the opening requests and the listings; no capability declared, no tool
called. And the exit code each outcome is documented with, over either transport."""

from __future__ import annotations

import http.server
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cli.fake_http import serving
from cli.fake_stdio_server import respond
from cli.helpers import fake, run

#: What the test may send: the opening requests and the listings.
ALLOWED = {
    "server/discover",
    "initialize",
    "notifications/initialized",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
}
#: Each server mode, and the exit code it earns (README: 0 clean or warnings, 1 errors).
MODES = {
    "good": 0,
    "bad-tools": 1,
    "list-error": 1,
    "bad-offers": 1,
    "broken-prompts": 0,
    "no-capabilities": 0,
}


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers each POST as the stdio fake would (its ``respond``), after recording it."""

    mode: ClassVar[str] = "good"
    era: ClassVar[str] = "legacy"
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.received.append(message)
        reply = respond(self.mode, self.era, message)
        if reply is None:
            self.send_response(202)
            self.end_headers()
            return
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_response(405)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("mode", list(MODES))
def test_the_server_receives_no_capability_and_no_call(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    transport: str,
    era: str,
    mode: str,
) -> None:
    if transport == "stdio":
        log = tmp_path / "received.jsonl"
        monkeypatch.setenv("FAKE_RECEIVED", str(log))
        result = run(capsys, "check", "--json", "--", *fake(mode, era))
        received = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    else:
        handler = type("Handler", (_Recorder,), {"mode": mode, "era": era, "received": []})
        with serving(handler) as base:
            result = run(capsys, "check", "--json", f"{base}/mcp")
        received = handler.received
    assert result.code == MODES[mode], result.err
    assert result.json()["exit_code"] == MODES[mode]
    methods = [m.get("method") for m in received if "method" in m]
    assert set(methods) <= ALLOWED, methods
    assert "tools/list" in methods or mode == "no-capabilities"
    assert [m for m in received if "method" not in m] == []  # nothing asked, nothing answered
    for message in received:
        params = message.get("params") or {}
        if message.get("method") == "initialize":
            assert params["capabilities"] == {}
        meta = params.get("_meta") or {}
        if era == "modern" and "id" in message:
            assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
        else:
            assert meta.get("io.modelcontextprotocol/clientCapabilities", {}) == {}
