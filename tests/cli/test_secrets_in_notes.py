"""A stdio server's progress and log messages may quote a secret its command gave it
(``--token T``): ``call`` prints them on stderr, and keeps them in ``--json``'s
``notifications``, with that secret REDACTED, as it does the server's question."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.helpers import run

SECRET = "sk-Note7hidden9kept"

_SERVER = """
import os
from mcp_elicit import Context, Server

app = Server("secretive", "1.0.0")


@app.tool()
async def login(ctx: Context) -> str:
    await ctx.warning(f"the token {os.environ['TOKEN_GIVEN']} expires soon")
    await ctx.report_progress(1, 2, message=f"signed in with {os.environ['TOKEN_GIVEN']}")
    return "done"
"""
#: Takes ``--token T`` as a real server would, then serves ``server.py`` over stdio.
_WRAPPER = """
import os, runpy, sys
os.environ["TOKEN_GIVEN"] = sys.argv[sys.argv.index("--token") + 1]
sys.argv = ["mcp-elicit", "serve", os.path.join(os.path.dirname(__file__), "server.py")]
runpy.run_module("mcp_elicit", run_name="__main__")
"""


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_progress_and_log_messages_quoting_the_servers_token_are_shown_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    (tmp_path / "server.py").write_text(_SERVER)
    (tmp_path / "wrapper.py").write_text(_WRAPPER)
    server = [sys.executable, str(tmp_path / "wrapper.py"), "--token", SECRET]
    flags = ["--json"] if json_out else []
    done = run(capsys, "call", "login", *flags, "--log-level", "info", "--", *server)
    assert done.code == 0, done.err
    assert "[warning] the token REDACTED expires soon" in done.err, done.err
    assert "… 1/2 signed in with REDACTED" in done.err, done.err
    if json_out:
        notes = {note["method"]: note["params"] for note in json.loads(done.out)["notifications"]}
        assert notes["notifications/message"]["data"] == "the token REDACTED expires soon"
        assert notes["notifications/progress"]["message"] == "signed in with REDACTED"
    assert SECRET not in done.out + done.err
