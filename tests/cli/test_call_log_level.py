"""``mcp-elicit call`` prints the server's log messages on stderr as they come, and so asks
for them when told to (``--log-level LEVEL``; by default none is asked for): a server need
send none to a client that did not ask (2026-07-28: each request's ``_meta``; 2025-11-25: ``logging/setLevel``). ``call``
never asked, so the log lines its help promised never came from a real server."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cli.helpers import demo_stdio, run

from support.cli_call import REVISIONS

CHATTY = textwrap.dedent(
    """
    from mcp_elicit import Context, Server

    app = Server("chatty")


    @app.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.debug("too fine to hear")
        await ctx.info("started")
        await ctx.warning("almost out of coffee")
        return "done"
    """
)


def chatty(tmp_path: Path) -> list[str]:
    path = tmp_path / "chatty.py"
    path.write_text(CHATTY, encoding="utf-8")
    return [*demo_stdio()[:-1], str(path)]


@pytest.mark.parametrize("revision", REVISIONS)
def test_log_messages_from_info_up_reach_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    result = run(
        capsys, "call", "chatty", "--protocol", revision, "--log-level", "info", "--", *chatty(tmp_path)
    )
    assert result.code == 0, result.err
    assert result.out.strip() == "done"
    assert "[info] started" in result.err, result.err
    assert "[warning] almost out of coffee" in result.err, result.err
    assert "too fine to hear" not in result.err


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_level_given_is_the_least_severe_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    result = run(
        capsys, "call", "chatty", "--protocol", revision, "--log-level", "warning", "--", *chatty(tmp_path)
    )
    assert result.code == 0, result.err
    assert "[warning] almost out of coffee" in result.err, result.err
    assert "started" not in result.err


def test_off_asks_for_none(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run(capsys, "call", "chatty", "--log-level", "off", "--", *chatty(tmp_path))
    assert result.code == 0, result.err
    assert "coffee" not in result.err and "started" not in result.err


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("command", [["call", "chatty"], ["call", "chatty", "--log-level", "off"], ["check"]])
def test_no_level_is_sent_unless_one_is_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str, command: list[str]
) -> None:
    """Neither ``logging/setLevel`` (2025-11-25) nor the ``_meta`` level (2026-07-28) is sent
    by ``call`` without ``--log-level`` (as the MCP Inspector's CLI and the SDKs' clients, it
    sets no level of its own: a level set changes what the server does), with ``--log-level
    off``, or by ``check``, which declares nothing and asks for nothing; ``--log-level info``
    sends one (so the trace would show it)."""
    result = run(capsys, *command, "--protocol", revision, "--trace", "--", *chatty(tmp_path))
    assert result.code == 0, result.err
    assert "logging/setLevel" not in result.err and "logLevel" not in result.err, result.err
    asked = run(
        capsys,
        "call",
        "chatty",
        "--protocol",
        revision,
        "--log-level",
        "info",
        "--trace",
        "--",
        *chatty(tmp_path),
    )
    assert "logging/setLevel" in asked.err or "io.modelcontextprotocol/logLevel" in asked.err, asked.err
