"""A stdio server that answers -32603 "Internal error" keeps the reason in its log, which
the command captured and never showed: the author of a prompt that failed saw "Internal
error" and nothing else. The end of the server's stderr now follows such an error, as it
does after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.helpers import run

from support.procs import cli

SERVER = '''
from mcp_elicit import Server, ToolError

app = Server("menus")


@app.prompt()
async def menu(restaurant: str) -> str:
    """The menu of a restaurant."""
    raise RuntimeError(f"the menu database of {restaurant} is down")


@app.prompt()
async def closed(restaurant: str) -> str:
    """A prompt that fails on purpose, saying why."""
    raise ToolError(f"{restaurant} is closed today")
'''


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    path = tmp_path / "menus.py"
    path.write_text(SERVER, encoding="utf-8")
    return [*cli(), "serve", str(path)]


def test_an_internal_error_shows_the_end_of_the_servers_log(
    capsys: pytest.CaptureFixture[str], server: list[str]
) -> None:
    result = run(capsys, "prompt", "menu", "restaurant=noma", "--ui", "none", "--", *server)
    assert result.code == 1, result.err
    assert "the server answered with error -32603: Internal error" in result.err
    assert "The end of its stderr" in result.err
    assert "the menu database of noma is down" in result.err


def test_an_error_that_says_why_shows_no_log(capsys: pytest.CaptureFixture[str], server: list[str]) -> None:
    result = run(capsys, "prompt", "closed", "restaurant=noma", "--ui", "none", "--", *server)
    assert result.code == 1, result.err
    assert "noma is closed today" in result.err
    assert "The end of its stderr" not in result.err
