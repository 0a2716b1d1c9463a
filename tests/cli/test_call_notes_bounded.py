"""``mcp-elicit call`` and what a server says while a call runs (progress, log messages):
shown on stderr on one line each, inert and cut short, however much the server sends;
``--json`` keeps them whole under ``notifications``."""

from __future__ import annotations

import json

import pytest

from cli.fake_stdio_server import BIG_LOGS
from cli.helpers import fake, run
from mcp_elicit.cli.call import LOG_LINES
from mcp_elicit.cli.output import HEARD_CHARS, HEARD_COUNT

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


def test_a_tool_the_server_lacks_names_some_of_its_tools_and_where_to_see_them_all(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "call", "nope", "--ui", "none", "--", *fake("many-tools", "modern"))
    assert result.code == 1, result.err[:2000]
    assert "the server has no tool 'nope'; its tools: a\\x1b[2J, echo, tool_0000, tool_0001," in result.err
    assert "and 2981 more" in result.err and "tool_2998" not in result.err
    assert "mcp-elicit check" in result.err
    assert "\x1b" not in result.err


def test_an_argument_a_tool_lacks_names_some_of_those_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "p9999=1", "--ui", "none", "--", *fake("many-tools", "modern"))
    assert result.code == 2, result.err[:2000]
    assert "echo has no argument 'p9999'" in result.err
    assert "it takes: p0000, p0001," in result.err and "and 2980 more" in result.err
    assert "p1500" not in result.err


def test_a_huge_value_breaking_the_output_schema_is_cut_short_in_the_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--", *fake("output-huge", "modern"))
    assert result.code == 0, result.err[:2000]
    assert result.out.strip() == "many"
    assert len(result.err) < 10_000, result.err[:2000]
    assert "warning: the result does not match the tool's outputSchema: at structuredContent.n," in result.err
    assert "characters)" in result.err


@pytest.mark.parametrize(
    ("command", "words", "capability"),
    [("read", ["notes://x"], "resources"), ("prompt", ["plan"], "prompts")],
)
def test_a_method_the_server_does_not_offer_says_so(
    capsys: pytest.CaptureFixture[str], command: str, words: list[str], capability: str
) -> None:
    result = run(capsys, command, *words, "--ui", "none", "--", *fake("good", "modern"))
    assert result.code == 1, result.err
    assert "error -32601" in result.err
    assert f"The server declares no {capability} capability" in result.err
    assert "mcp-elicit check" in result.err


@pytest.mark.parametrize("revision", REVISIONS)
def test_thousands_of_log_messages_print_a_bounded_number_and_say_how_many_more(
    capsys: pytest.CaptureFixture[str], revision: str
) -> None:
    """5000 log messages would scroll a question or a warning off the screen: the first few
    are printed, then, at the end, one line says how many more came and where to see them."""
    server = fake("many-logs", ERAS[revision])
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--protocol", revision, "--", *server)
    assert result.code == 0, result.err[:2000]
    assert result.out.strip() == "echo: hi"
    logs = [line for line in result.err.splitlines() if line.startswith("[info] log ")]
    assert logs == [f"[info] log {n}" for n in range(1, LOG_LINES + 1)], result.err[:2000]
    assert f"{5000 - LOG_LINES} more log messages from the server were not shown" in result.err, result.err[
        -500:
    ]
    assert "--json" in result.err.splitlines()[-1], result.err[-500:]


def test_json_keeps_the_first_notifications_and_counts_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    """A server may send notifications without end: ``--json`` keeps the first
    ``HEARD_COUNT``, whole, and counts the rest (``notifications_left_out``), and the
    closing line on stderr says so."""
    server = fake("many-logs", "modern")
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--json", "--", *server)
    assert result.code == 0, result.err[:2000]
    said = result.json()
    assert [n["params"]["data"] for n in said["notifications"]] == [
        f"log {n}" for n in range(1, HEARD_COUNT + 1)
    ]
    assert said["notifications_left_out"] == 5000 - HEARD_COUNT
    assert len(result.err.splitlines()) == LOG_LINES + 1, result.err[-500:]
    last = result.err.splitlines()[-1]
    assert f"--json lists the first {HEARD_COUNT} notifications" in last, last


def test_json_keeps_a_bounded_size_of_notifications(capsys: pytest.CaptureFixture[str]) -> None:
    """Fewer but bigger notifications: what ``--json`` keeps is bounded in size too, the
    first ones whole, the rest counted."""
    server = fake("big-logs", "modern")
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--json", "--", *server)
    assert result.code == 0, result.err[:2000]
    said = result.json()
    kept = said["notifications"]
    assert 1 <= len(kept) < BIG_LOGS
    assert [n["params"]["data"].split(" ")[:2] for n in kept] == [
        ["big", str(n)] for n in range(1, len(kept) + 1)
    ]
    assert all(n["params"]["data"].endswith("x" * 1000) for n in kept)  # each whole
    assert sum(len(json.dumps(n, ensure_ascii=False)) for n in kept) <= HEARD_CHARS
    assert said["notifications_left_out"] == BIG_LOGS - len(kept)


def test_json_leaving_out_a_few_huge_notifications_says_so_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Fewer log messages than ``LOG_LINES``, but too large for ``--json`` to keep them all:
    stderr says how many it left out and where to see them, as it does past the log-line
    cap."""
    assert BIG_LOGS <= LOG_LINES  # the cap is not what is passed here
    server = fake("big-logs", "modern")
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--json", "--", *server)
    assert result.code == 0, result.err[:2000]
    said = result.json()
    left_out = said["notifications_left_out"]
    assert left_out > 0
    lines = [line for line in result.err.splitlines() if "notifications_left_out" in line]
    assert len(lines) == 1, result.err[-1000:]
    assert f"--json lists the first {len(said['notifications'])} notifications" in lines[0], lines[0]
    assert f"the other {left_out} under notifications_left_out" in lines[0], lines[0]
    assert "--trace prints every message" in lines[0], lines[0]


def test_json_says_none_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "call", "echo", "text=hi", "--ui", "none", "--json", "--", *fake("huge-notes", "modern")
    )
    assert result.code == 0, result.err[:2000]
    assert result.json()["notifications_left_out"] == 0


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_failed_call_after_many_log_messages_does_not_promise_them_in_json(
    capsys: pytest.CaptureFixture[str], json_flag: list[str]
) -> None:
    """A failure's ``--json`` object has no ``notifications``: the closing line points only
    to ``--trace`` then, and still counts the messages not shown."""
    server = fake("many-logs", "modern")
    result = run(capsys, "call", "echo", "text=fail", "--ui", "none", *json_flag, "--", *server)
    assert result.code != 0, result.err[-500:]
    if json_flag:
        assert "notifications" not in result.json()
    said = [line for line in result.err.splitlines() if "more log messages" in line]
    assert len(said) == 1, result.err[-1000:]
    assert f"{5000 - LOG_LINES} more log messages from the server were not shown" in said[0]
    assert "--trace prints every message" in said[0] and "--json" not in said[0], said[0]


def test_json_leaves_out_a_notification_too_deep_to_write(capsys: pytest.CaptureFixture[str]) -> None:
    """A log message nested deeper than JSON is written out does not fit what ``--json``
    keeps: it is counted, not kept, and the call's answer is still written (it was not
    too deep)."""
    result = run(
        capsys, "call", "echo", "text=hi", "--ui", "none", "--json", "--", *fake("deep-log", "modern")
    )
    assert result.code == 0, result.err[:2000]
    said = result.json()
    assert [n["params"]["data"] for n in said["notifications"]] == ["first"]
    assert said["notifications_left_out"] == 2


def test_without_json_nothing_is_said_of_what_json_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``--json`` there is no list to leave notifications out of, and every log
    message was shown (fewer than the cap): no closing line about ``notifications_left_out``."""
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--", *fake("big-logs", "modern"))
    assert result.code == 0, result.err[:2000]
    assert "--json" not in result.err and "notifications_left_out" not in result.err, result.err[-1000:]
