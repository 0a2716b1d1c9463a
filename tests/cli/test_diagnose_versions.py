"""No protocol revision in common while connecting (-32022): what the CLI says is true of
what the server did, and its advice is the CLI's own (``--protocol``), not the library's
``versions=[...]``."""

from __future__ import annotations

import http.server
import sys
from pathlib import Path

import pytest

from cli.fake_http import serving
from cli.helpers import fake, run

HOSTILE = Path(__file__).resolve().parent.parent / "client" / "hostile_server.py"


class _NotModern(http.server.BaseHTTPRequestHandler):
    """Answers every POST to /accepted with 202 and no body (as a 2025-11-25-only server
    can), anything else with a web page."""

    def log_message(self, format: str, *args: object) -> None:
        return None

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/accepted" and self.command == "POST":
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET = do_DELETE = _answer


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/accepted", "server/discover was answered with HTTP 202"),
        ("/page", "server/discover was answered with HTTP 200 and no modern JSON-RPC error"),
    ],
)
def test_a_server_that_does_not_answer_discover_is_not_said_to_answer_minus_32022(
    capsys: pytest.CaptureFixture[str], path: str, said: str
) -> None:
    """With --protocol 2026-07-28, a server answering server/discover with 202 or a page
    was said to have "answered the opening request with error -32022", and the advice was
    the library's versions=[...]. The server sent no error: the CLI says what it did and
    how to reach it from the command line."""
    with serving(_NotModern) as base:
        result = run(capsys, "check", f"{base}{path}", "--protocol", "2026-07-28", "--timeout", "10")
    assert result.code == 4, result.err
    assert "answered the opening request with error" not in result.err
    assert "versions=" not in result.err
    assert "does not speak 2026-07-28" in result.err and said in result.err
    assert "--protocol 2025-11-25" in result.err


def test_a_2025_11_25_server_over_stdio_gets_the_clis_advice(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "check", "--protocol", "2026-07-28", "--", sys.executable, str(HOSTILE), "legacy-ask"
    )
    assert result.code == 4, result.err
    assert "server/discover was answered with error -32601" in result.err
    assert "answered the opening request with error" not in result.err and "versions=" not in result.err
    assert "--protocol 2025-11-25" in result.err


def test_a_server_that_speaks_only_2025_11_25_and_is_offered_2026_07_28_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The fake legacy server refuses server/discover (-32601): the same, for another server."""
    result = run(capsys, "check", "--protocol", "2026-07-28", "--", *fake("good"))
    assert result.code == 4, result.err
    assert "--protocol 2025-11-25" in result.err and "versions=" not in result.err
