"""A stdio server that writes something other than JSON-RPC on stdout and then never
answers in JSON-RPC is a protocol violation, exit 4, with one message: whether the server
process then waits (the request times out) or exits (its requests end) is a matter of
timing, and must not change what the command says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli.helpers import Run, fake, run


def _error(result: Run, mode: str) -> str:
    """The error on stderr, with the target's command (which names the mode) taken out."""
    return result.err.replace(" ".join(fake(mode)), "TARGET")


@pytest.mark.parametrize(
    "command", [["check"], ["call", "echo", "text=hi", "--ui", "none"]], ids=["check", "call"]
)
@pytest.mark.parametrize(
    ("waits", "exits", "says"),
    [
        ("junk-waits", "junk-exits", "TARGET never answered in JSON-RPC."),
        # call names the step "tools/call" (its listing of the tools is part of it)
        ("junk-on-list-waits", "junk-on-list-exits", "TARGET stopped answering in JSON-RPC at tools/"),
    ],
    ids=["opening", "after-connecting"],
)
def test_non_json_rpc_on_stdout_is_exit_4_whether_the_server_waits_or_exits(
    capsys: pytest.CaptureFixture[str], command: list[str], waits: str, exits: str, says: str
) -> None:
    waited = run(capsys, *command, "--timeout", "0.5", "--", *fake(waits))
    exited = run(capsys, *command, "--timeout", "0.5", "--", *fake(exits))
    assert (waited.code, exited.code) == (4, 4), (waited.err, exited.err)
    assert _error(waited, waits) == _error(exited, exits)
    assert says in _error(exited, exits)
    assert "not JSON-RPC (first: " in exited.err
    assert "print logs to stderr" in exited.err


def test_many_lines_are_counted_and_not_logged_one_by_one(capsys: pytest.CaptureFixture[str]) -> None:
    """The transport logs only the first few of them; the command still says how many."""
    writer = "import sys; sys.stdout.write('junk\\n' * 50); sys.stdout.flush()"
    result = run(capsys, "check", "--timeout", "5", "--", sys.executable, "-c", writer)
    assert result.code == 4, result.err
    assert "wrote 50 lines to stdout that are not JSON-RPC (first: 'junk')" in result.err, result.err
    assert "keeps writing" not in result.err and "skipped" not in result.err, result.err


def test_the_first_line_is_shown_inert_once_not_escaped_twice(capsys: pytest.CaptureFixture[str]) -> None:
    """A terminal escape in it reads as ``\\x1b`` (as the transport's own error has it), not ``\\\\x1b``."""
    writer = "import sys; sys.stdout.write(chr(27) + '[31mred\\n'); sys.stdout.flush()"
    result = run(capsys, "check", "--timeout", "5", "--", sys.executable, "-c", writer)
    assert result.code == 4, result.err
    assert "not JSON-RPC (first: '\\x1b[31mred')" in result.err, result.err
    assert "\x1b" not in result.err


def test_what_the_server_wrote_is_quoted_with_its_urls_redacted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The first line on stdout and the end of stderr, as the command quotes them, keep no
    password or token (a banner's database URL, a page's link); nor does the command line,
    as the error names the server."""
    writer = tmp_path / "writer.py"
    writer.write_text(
        "import sys; sys.stdout.write('db at postgres://me:PASSWORD@db/x?token=SECRET\\n'); "
        "sys.stderr.write('https://me:PASSWORD@h/?token=SECRET' + 'x' * 1490); sys.exit(1)"
    )
    command = [sys.executable, str(writer), "--db", "postgres://me:PASSWORD@db/x"]
    result = run(capsys, "check", "--timeout", "5", "--", *command)
    assert result.code == 4, result.err
    assert "PASS" not in result.err and "SECRET" not in result.err, result.err
    assert "(first: 'db at postgres://REDACTED:REDACTED@db/x?REDACTED')" in result.err, result.err
