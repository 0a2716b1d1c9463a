"""The connection test (``mcp-elicit check``) against servers nobody here wrote: built with
the official TypeScript SDK (v1 and v2), the official Python SDK and FastMCP, over stdio
and over Streamable HTTP.

Each run must say the server answers and lists its tools, at the revision that server
speaks, and the trace of every message must show what the test promises: no client
capabilities declared, no tool called, nothing asked of the user.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.peers import TS_PEERS, fastmcp_python, peer_http, sdk_python, ts_node
from support.procs import ROOT, cli

__all__ = ["fastmcp_python", "sdk_python", "ts_node"]  # fixtures

pytestmark = pytest.mark.slow

#: fixture giving the interpreter, script, the revision it speaks, some of its tools
PEERS = {
    "ts-v1": ("ts_node", TS_PEERS / "server_v1.mjs", "2025-11-25", {"plan_trip", "connect_bank"}),
    "ts-v2": ("ts_node", TS_PEERS / "server_v2.mjs", "2026-07-28", {"plan_trip", "pick_dish"}),
    "python-sdk": ("sdk_python", ROOT / "tests/peers/sdk_server.py", "2026-07-28", {"book_table"}),
    "fastmcp": ("fastmcp_python", ROOT / "tests/peers/fastmcp_server.py", "2026-07-28", {"pick_color"}),
}


@pytest.mark.parametrize("peer", list(PEERS))
def test_check_reports_a_third_party_server_without_asking_or_calling(
    peer: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    fixture, script, revision, tools = PEERS[peer]
    interpreter: Path = request.getfixturevalue(fixture)
    _check_clean([str(interpreter), str(script)], revision, tools, tmp_path)


@pytest.mark.parametrize("peer", list(PEERS))
def test_check_reports_a_third_party_http_server_without_asking_or_calling(
    peer: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    fixture, script, revision, tools = PEERS[peer]
    interpreter: Path = request.getfixturevalue(fixture)
    argv = [str(interpreter), str(script)]
    with peer_http(lambda port: [*argv, "--http", str(port)], tmp_path / "peer.log") as url:
        _check_clean([url], revision, tools, tmp_path)


def _check_clean(target: list[str], revision: str, tools: set[str], tmp_path: Path) -> None:
    """``check --json --trace`` on ``target`` (a URL, or a command to run after ``--``) is
    clean at ``revision``, lists ``tools`` among others, and declared, called and answered
    nothing on the wire."""
    words = target if target[0].startswith("http") else ["--", *target]
    done = subprocess.run(
        [*cli(), "check", "--json", "--trace", *words],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FASTMCP_LOG_LEVEL": "WARNING"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["exit_code"] == 0
    assert report["revision"] == revision
    assert report["client_capabilities"] == {}
    assert report["tools_listed"] is True
    assert tools <= {t["name"] for t in report["tools"]}
    assert all(t["ok"] for t in report["tools"]), report["tools"]
    sent = [json.loads(line[2:]) for line in done.stderr.splitlines() if line.startswith("→ {")]
    methods = [m.get("method") for m in sent if "method" in m]
    assert "tools/list" in methods and "tools/call" not in methods, methods
    for message in sent:  # nothing declared: no capability, in _meta or in initialize
        params = message.get("params") or {}
        declared = params.get(
            "capabilities", params.get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {})
        )
        assert declared == {}, message
    answered = [m for m in sent if "method" not in m]
    assert answered == [], answered  # the server had no reason or permission to ask anything
