"""``mcp-elicit call`` and what a server says while a call runs (progress, log messages):
shown on stderr on one line each, inert and cut short, however much the server sends;
``--json`` keeps them whole under ``notifications``."""

from __future__ import annotations

import pytest

from cli.helpers import fake, run

from support.cli_call import REVISIONS

ERAS = {"2026-07-28": "modern", "2025-11-25": "legacy"}


@pytest.mark.parametrize("revision", REVISIONS)
def test_huge_progress_and_log_messages_are_cut_short(
    capsys: pytest.CaptureFixture[str], revision: str
) -> None:
    server = fake("huge-notes", ERAS[revision])
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--protocol", revision, "--", *server)
    assert result.code == 0, result.err[:2000]
    assert result.out.strip() == "echo: hi"
    assert len(result.err) < 10_000, result.err[:2000]
    lines = result.err.splitlines()
    assert lines[0].startswith("… 1/2 Working\\x1b[2J xxx") and lines[0].endswith("(2000016 characters)")
    assert lines[1].startswith("[info] fake\\x1b[31m: Working\\x1b[2J xxx"), lines[1][:200]
    assert lines[1].endswith("(2000016 characters)")
    assert "\x1b" not in result.err


def test_json_keeps_what_the_server_said_whole(capsys: pytest.CaptureFixture[str]) -> None:
    server = fake("huge-notes", "modern")
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--json", "--", *server)
    assert result.code == 0, result.err[:2000]
    notes = result.json()["notifications"]
    assert [n["params"]["message" if "progress" in n["method"] else "data"][-4:] for n in notes] == [
        " END",
        " END",
    ]
    assert len(result.err) < 10_000
