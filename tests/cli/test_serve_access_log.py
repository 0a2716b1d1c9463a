"""``serve --http --log-level debug`` adds uvicorn's access log to what it logs on stderr,
as its ``--help`` says: uvicorn writes that log to stdout by itself, where a deployment
keeping the server's stderr never saw it. A real ``serve`` in a subprocess, its two
streams kept apart, on 127.0.0.1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from support.procs import ROOT, _env, cli, on_a_free_port

APP = ROOT / "tests" / "integration" / "app.py"


def test_the_access_log_goes_to_stderr_without_the_links_query(tmp_path: Path) -> None:
    out, err = tmp_path / "serve.stdout", tmp_path / "serve.stderr"

    def start(port: int) -> subprocess.Popen[bytes]:
        with out.open("wb") as stdout, err.open("wb") as stderr:
            command = [*cli(), "serve", str(APP), "--http", f"127.0.0.1:{port}", "--store", "memory://"]
            return subprocess.Popen(
                [*command, "--log-level", "debug"],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=ROOT,
                env=_env(),
            )

    with on_a_free_port(start, output=lambda _port: err.read_text(), name="serve") as (_, port):
        link = f"http://127.0.0.1:{port}/mcp-elicit/flows/nosuch?t=ONE-TIME-TOKEN"
        assert httpx.get(link, timeout=20).status_code in (303, 404, 410)
    logged = err.read_text(encoding="utf-8")
    assert '"GET /mcp-elicit/flows/nosuch?… HTTP/1.1"' in logged, logged
    assert "ONE-TIME-TOKEN" not in logged
    assert out.read_text(encoding="utf-8") == ""
