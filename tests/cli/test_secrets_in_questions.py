"""A stdio server's question may quote a secret its command gave it (``--token T``): the
command line shows the question, warns of it (``describe()`` repeats it) and keeps it in
``--json``'s rounds with that secret REDACTED, as it does in the server's errors. The
program run, a real subprocess, is ``mcp-elicit`` itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "sk-Ask7hidden9kept"

_SERVER = """
import os
from mcp_elicit import Context, Form, Server, String

app = Server("secretive", "1.0.0")


@app.tool()
async def login(ctx: Context) -> str:
    await ctx.elicit(f"The token {os.environ['TOKEN_GIVEN']} expired: your name?", Form(name=String()), key="who")
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
def test_a_question_quoting_the_servers_token_is_shown_and_warned_of_redacted(
    tmp_path: Path, json_out: bool
) -> None:
    (tmp_path / "server.py").write_text(_SERVER)
    (tmp_path / "wrapper.py").write_text(_WRAPPER)
    answers = tmp_path / "answers.json"
    answers.write_text('{"answers": []}')  # none fits: a warning quoting the question, then cancel
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = ["call", "login", *(["--json"] if json_out else []), "--answers", str(answers)]
    server = [sys.executable, str(tmp_path / "wrapper.py"), "--token", SECRET]
    done = subprocess.run(
        [sys.executable, "-m", "mcp_elicit", *argv, "--", *server],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # the code imported is PYTHONPATH's, not the working directory's
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "no scripted answer for" in done.stderr, done.stderr  # describe(), in the warning
    assert "('The token REDACTED expired: your name?')" in done.stderr, done.stderr
    if json_out:
        assert json.loads(done.stdout)["rounds"][0]["message"] == "The token REDACTED expired: your name?"
    else:
        assert "  The token REDACTED expired: your name?" in done.stderr, done.stderr
    assert SECRET not in done.stdout + done.stderr
