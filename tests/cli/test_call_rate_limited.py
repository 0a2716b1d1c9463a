"""``mcp-elicit call`` refused by the server's rate limit: one line naming the budget and
the wait, exit 1, at both revisions (a 429 at 2026-07-28, a 200 JSON-RPC error in a
2025-11-25 session). A real server over HTTP on 127.0.0.1 (tests/server/rate_limited_server.py:
two calls at once, then one a minute)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.helpers import run

from support.procs import ROOT, http_process

SERVER = ROOT / "tests" / "server" / "rate_limited_server.py"


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_call_says_it_in_one_line_with_the_wait(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    with http_process(SERVER, log_dir=tmp_path) as server:
        for _ in range(2):
            done = run(capsys, "call", server.url, "hello", "--protocol", revision, "--ui", "none")
            assert done.code == 0, done.err
        refused = run(capsys, "call", server.url, "hello", "--protocol", revision, "--ui", "none")
    assert refused.code == 1
    (line,) = [said for said in refused.err.splitlines() if "rate limit" in said]
    assert line.startswith(
        "mcp-elicit: tools/call: refused by the server's rate limit (max_calls_per_minute); try again in "
    ), refused.err
    wait = int(line.removesuffix(" s").rsplit(" ", 1)[1])
    assert 1 <= wait <= 60
