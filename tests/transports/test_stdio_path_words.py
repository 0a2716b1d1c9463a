"""A stdio server's command may name its program or script as a ``pathlib.Path``, as
``subprocess`` allows: each such word is taken as its text, so the command is shown, its
secrets hidden, and the server started like any other. A path whose text is bytes is no
word of a command line and is refused as one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcp_elicit.transports.stdio_client import StdioTransport, connect_stdio

from support.procs import ROOT, cli

pytestmark = pytest.mark.anyio

DEMO = ROOT / "examples" / "demo_server.py"


def test_path_words_are_taken_as_their_text_and_shown_with_secrets_hidden() -> None:
    transport = StdioTransport([Path(sys.executable), DEMO, "--token", "sk-hidden-path-1"])
    assert transport.command == [sys.executable, str(DEMO), "--token", "sk-hidden-path-1"]
    assert all(isinstance(word, str) for word in transport.command)
    assert "sk-hidden-path-1" not in transport.where
    assert transport.where.endswith("--token REDACTED")


async def test_a_server_named_by_paths_is_started_and_answers() -> None:
    command = [Path(word) if word.endswith(".py") or os.sep in word else word for word in cli()]
    async with connect_stdio([*command, "serve", DEMO], cwd=ROOT, timeout=30) as client:
        tools = await client.list_tools()
    assert tools, "the demo server lists its tools"


class _BytesPath:
    def __fspath__(self) -> bytes:
        return b"/usr/bin/python3"


def test_a_path_whose_text_is_bytes_is_refused_as_no_word() -> None:
    with pytest.raises(TypeError, match=r"the server command is a list of strings"):
        StdioTransport([_BytesPath(), "server.py"])  # type: ignore[list-item]
