"""``mcp-elicit call`` and what a server sends beyond a plain result: URL-mode questions a
script cannot accept, bidi and control characters kept inert, a tool call that becomes a
task followed to its end, progress shown on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli.helpers import answers_file, fake, run, url_server

from support.cli_call import CONFORMANCE_STDIO, REVISIONS

URL_SERVER = url_server()


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_scripted_url_with_a_user_name_is_declined_naming_where_it_goes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    script = answers_file(tmp_path, [{"mode": "url", "action": "accept"}])
    result = run(
        capsys,
        "call",
        "sign_in",
        "where=tricky",
        "--answers",
        script,
        "--protocol",
        revision,
        "--json",
        "--",
        *URL_SERVER,
    )
    assert result.code == 0, result.err
    outcome = result.json()
    assert outcome["result"]["content"][0]["text"] == "sign-in: decline"  # whatever the script says
    assert outcome["rounds"][0]["action"] == "decline"
    assert outcome["rounds"][0]["url_warnings"] == ["userinfo"]
    assert "url: https://bank.com@evil.example/login  (site: evil.example)" in result.err
    assert "refused: The address has a user name or password before '@' (bank.com)" in result.err
    assert "really goes to evil.example" in result.err


def test_a_refused_url_is_declined_whatever_the_script_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = answers_file(tmp_path, [{"mode": "url", "action": "accept"}])
    result = run(capsys, "call", "sign_in", "where=hidden", "--answers", script, "--", *URL_SERVER)
    assert result.code == 0, result.err
    assert result.out.strip() == "sign-in: decline"
    assert "refused: The address contains spaces, control or invisible characters (U+202E)" in result.err


def test_json_output_keeps_a_servers_bidi_and_control_characters_inert(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--json`` prints what the server sent exactly, but as JSON escapes: a U+202E in a
    URL must not reorder what a terminal shows of the output."""
    script = answers_file(tmp_path, [{"mode": "url", "action": "accept"}])
    result = run(capsys, "call", "sign_in", "where=hidden", "--answers", script, "--json", "--", *URL_SERVER)
    assert result.code == 0, result.err
    assert "\u202e" not in result.out
    assert "\\u202e" in result.out
    assert result.json()["rounds"][0]["url"] == "https://exa\u202emple.com/login"  # the value, exactly


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_tool_call_that_becomes_a_task_is_followed_to_its_end(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    """``call`` declares the tasks extension at 2026-07-28: the conformance server's
    ``confirm_delete`` goes on as a task, asks inside it, and ends; at 2025-11-25 the same
    handler asks in place."""
    script = answers_file(tmp_path, [{"fields": ["confirm"], "content": {"confirm": True}}])
    argv = ["call", "confirm_delete", "filename=notes.txt", "--protocol", revision, "--answers", script]
    result = run(capsys, *argv, "--json", "--trace", "--", *CONFORMANCE_STDIO)
    assert result.code == 0, result.err
    outcome = result.json()
    assert outcome["result"]["content"][0]["text"] == "Deleted notes.txt"
    statuses = [
        n["params"]["status"] for n in outcome["notifications"] if n["method"] == "notifications/tasks"
    ]
    assert (statuses[:2], statuses[-1:]) == (
        (["working", "input_required"], ["completed"]) if revision == "2026-07-28" else ([], [])
    )
    assert [r["action"] for r in outcome["rounds"]] == ["accept"]
    methods = [m["method"] for m in result.sent() if "method" in m and "id" in m]
    if revision == "2026-07-28":
        assert {"tasks/get", "tasks/update"} <= set(methods) and "tasks/cancel" not in methods
        # the task's course is told on stderr as it goes
        told = [line for line in result.err.splitlines() if line.startswith("… task ")]
        course = [line.split(": ", 1)[1] for line in told]
        assert course[:2] == ["working - deleting notes.txt", "input_required - deleting notes.txt"]
        assert course[-1] == "completed"  # the progress shown while it ran is not its outcome
    else:
        assert not [m for m in methods if m.startswith("tasks/")]
    assert result.check_wire(revision) >= 3


@pytest.mark.parametrize("revision", REVISIONS)
def test_progress_is_asked_for_and_shown_on_stderr(capsys: pytest.CaptureFixture[str], revision: str) -> None:
    result = run(
        capsys, "call", "test_tool_with_progress", "--protocol", revision, "--trace", "--", *CONFORMANCE_STDIO
    )
    assert result.code == 0, result.err
    call = next(m for m in result.sent() if m.get("method") == "tools/call")
    assert call["params"]["_meta"]["progressToken"] == call["id"]
    progress = [line for line in result.err.splitlines() if line.startswith("… ") and "task" not in line]
    assert len(progress) == 3 and progress[-1].startswith("… 100/100"), result.err
    assert result.check_wire(revision) >= 2


def test_server_text_in_errors_and_warnings_cannot_act_on_the_terminal() -> None:
    """A server's words reach the error line and the warnings (its title, a URL it asked
    about) shown inert: an escape could set the window title or clear the screen."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_elicit",
            "call",
            "--ui",
            "none",
            "echo",
            "text=hi",
            "--",
            *fake("asks-escapes", "modern"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 4, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "url: https://example.com/\\x1b]0;pwned\\x07], but this client declared no url-mode" in done.stderr
    assert "WARNING: ignoring an unsolicited Request from Fake\\x1b[31m server" in done.stderr
