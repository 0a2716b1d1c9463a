"""``mcp-elicit call``: the exit codes of what goes wrong before or outside a result: usage
errors (2), a server it cannot reach or start (3), a protocol violation (4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.fake_http import fake_http
from cli.helpers import fake, run

from support.procs import ROOT, free_port


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["call"], "give the server"),
        (["call", "http://127.0.0.1:1/mcp"], "give the tool after the TARGET"),
        (["call", "book_table", "--"], "nothing after --"),
        (["call", "book_table", "restaurant", "--", "x"], "arguments are NAME=VALUE"),
        (["call", "t", "--args", "[1]", "--", "x"], "--args must be a JSON object"),
        (["call", "t", "--args", "{", "--", "x"], "--args is not valid JSON"),
        (["call", "t", "--answers", "a.json", "--ui", "terminal", "--", "x"], "not both"),
        (["call", "t", "--answers", "/does/not/exist.json", "--", "x"], "cannot read the answer script"),
        (["read", "a://b", "c=d", "--", "x"], "read takes one URI"),
        (["call", "mcp-elicit", "serve", "t"], "(e.g. mcp-elicit call TOOL ... -- mcp-elicit ...)"),
        (
            ["prompt", "ftp://example.com", "p"],
            "(e.g. mcp-elicit prompt PROMPT ... -- ftp://example.com ...)",
        ),
        (["call", "t", "--ui", "terminal", "--", "x"], "--ui terminal needs a terminal"),
        (["call", "t", "--root", "/does/not/exist", "--", "x"], "--root /does/not/exist: not a directory"),
        # the TARGET in the wrong place: said so, not read as a tool, an argument or a command
        (
            ["call", "list_bookings", "http://127.0.0.1:9/mcp"],
            "the URL comes first: mcp-elicit call http://127.0.0.1:9/mcp list_bookings ...",
        ),
        (
            ["read", "bookings://restaurants", "https://mcp.example.com/mcp"],
            "the URL comes first: mcp-elicit read https://mcp.example.com/mcp bookings://restaurants ...",
        ),
        (  # its key shown as every line shows it, and said to be hidden
            ["call", "list_bookings", "http://me:pw@127.0.0.1:9/mcp?key=K"],
            "the URL comes first: mcp-elicit call http://REDACTED:REDACTED@127.0.0.1:9/mcp?REDACTED "
            "list_bookings ... (REDACTED hides its user name and password and its query: write it out",
        ),
        (
            ["call", "http://127.0.0.1:9/mcp", "list_bookings", "--", "x"],
            "give the server as a URL or as a command after --, not both ('http://127.0.0.1:9/mcp' and a command)",
        ),
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    result = run(capsys, *argv)
    assert result.code == 2, result.err
    assert fragment in result.err


def test_a_broken_answer_script(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"action": "maybe"}]))
    result = run(capsys, "call", "book_table", "--answers", str(bad), "--", "x")
    assert result.code == 2
    assert "action must be accept, decline or cancel" in result.err


def test_an_answer_script_that_is_not_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes('{"answers": [{"content": {"name": "café"}}]}'.encode("latin-1"))
    result = run(capsys, "call", "book_table", "--answers", str(bad), "--", "x")
    assert result.code == 2
    assert f"the answer script {bad} is not UTF-8 text" in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


def test_connection_refused(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", f"http://127.0.0.1:{free_port()}/mcp", "list_bookings", "--json")
    assert result.code == 3
    assert result.json()["exit_code"] == 3
    assert "connection refused" in result.err


def test_a_server_command_that_fails(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "--", *fake("exit"))
    assert result.code == 3
    assert "fake: cannot open the database" in result.err


def test_an_unknown_result_type_over_stdio(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "text=hi", "--", *fake("bogus-result", "modern"))
    assert result.code == 4
    assert "resultType 'bogus'" in result.err


def test_an_unknown_result_type_over_http(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "call", f"{base}/bogus", "echo")
    assert result.code == 4
    assert "resultType 'bogus'" in result.err


def test_the_demo_answers_file_fits_the_demo_server() -> None:
    script = json.loads((ROOT / "examples" / "demo_answers.json").read_text())
    fields = [set(entry["fields"]) for entry in script["answers"]]
    assert fields == [{"party_size", "date"}, {"confirm"}, {"mood"}, {"course"}]
