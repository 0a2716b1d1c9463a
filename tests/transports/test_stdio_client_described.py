"""A library caller of ``connect_stdio`` gets a stdio server's question described without
the secrets its command gave it (``ServerInfo.secrets``): a scripted answerer's warning
quotes ``describe()``, which repeats the question, and a long question is cut only after
the secret is hidden, so no part of it is left. A real subprocess server."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from mcp_elicit.client.answerers import Scripted
from mcp_elicit.transports.stdio_client import connect_stdio

pytestmark = pytest.mark.anyio

SECRET = "sk-Desc7hidden9kept"

_SERVER = """
import os
from mcp_elicit import Context, Form, Server, String

app = Server("secretive", "1.0.0")


@app.tool()
async def login(ctx: Context, padding: int = 0) -> str:
    said = "x" * padding + f" the token {os.environ['TOKEN_GIVEN']} expired: your name?"
    await ctx.elicit(said, Form(name=String()), key="who")
    return "done"
"""
#: Takes ``--token T`` as a real server would, then serves ``server.py`` over stdio.
_WRAPPER = """
import os, runpy, sys
os.environ["TOKEN_GIVEN"] = sys.argv[sys.argv.index("--token") + 1]
sys.argv = ["mcp-elicit", "serve", os.path.join(os.path.dirname(__file__), "server.py")]
runpy.run_module("mcp_elicit", run_name="__main__")
"""


@pytest.mark.parametrize("padding", [0, 170], ids=["whole", "cut"])
async def test_a_question_quoting_the_servers_token_is_warned_of_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, padding: int
) -> None:
    """``cut``: the question is longer than ``describe()`` quotes, and the cut falls
    inside the token."""
    (tmp_path / "server.py").write_text(_SERVER)
    (tmp_path / "wrapper.py").write_text(_WRAPPER)
    caplog.set_level(logging.WARNING)
    command = [sys.executable, str(tmp_path / "wrapper.py"), "--token", SECRET]
    answerer = Scripted([])  # no answer fits: a warning quoting the question, then cancel
    async with connect_stdio(command, answerer=answerer, timeout=60) as client:
        await client.call_tool("login", {"padding": padding})
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "no scripted answer for" in warned, warned
    if padding:
        assert "x the token REDACTED expired...')" in warned, warned
    else:
        assert "' the token REDACTED expired: your name?'" in warned, warned
    assert SECRET[:8] not in warned + " ".join(answerer.reports)
