"""``mcp-elicit call`` and values nested deeper than ``json.dumps`` can write: results,
traced messages, output schemas and notifications are still read, shown or warned about."""

from __future__ import annotations

import pytest

from cli.helpers import RECURSION_LIMITS, fake, limited_recursion, run


def test_a_result_nested_too_deeply_to_show_is_still_given(capsys: pytest.CaptureFixture[str]) -> None:
    # 1000 levels: a JSON reader takes them (1024), json.dumps and repr recurse past Python's limit
    result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--", *fake("deep"))
    assert result.code == 0
    assert "(nested too deeply to show)" in result.out


@RECURSION_LIMITS
def test_a_traced_message_nested_too_deeply_to_show_is_still_read(
    capsys: pytest.CaptureFixture[str], recursion_limit: int | None
) -> None:
    # the trace raised RecursionError where the message was read: it was lost, and the call
    # waited out its 30 s for an answer that had come. With the limit raised, the 1000
    # levels were traced in full
    with limited_recursion(recursion_limit):
        result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--trace", "--", *fake("deep"))
    assert result.code == 0
    assert "← (a message nested too deeply to show)" in result.err.splitlines()
    assert "(nested too deeply to show)" in result.out


def test_a_result_nested_too_deeply_to_write_as_json_fails_in_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--json", "--", *fake("deep"))
    assert result.code == 1
    failure = result.json()
    assert failure["ok"] is False and failure["exit_code"] == 1
    assert "nested too deeply to write as JSON" in failure["error"]


@RECURSION_LIMITS
def test_an_output_schema_nested_too_deeply_to_check_is_a_warning(
    capsys: pytest.CaptureFixture[str], recursion_limit: int | None
) -> None:
    # with the recursion limit raised the result was checked, and no warning said otherwise
    with limited_recursion(recursion_limit):
        result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--", *fake("deep-schema", "modern"))
    assert result.code == 0  # the result is still given
    assert "ok" in result.out
    assert (
        "mcp-elicit: warning: the tool's outputSchema or its result is nested too deeply to check; "
        "the result was not checked"
    ) in result.err


def test_notifications_with_values_nested_too_deeply_are_still_narrated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 1000 levels (a JSON reader takes 1024): str() of them raised RecursionError, and the
    # line was lost to a traceback in the log
    from mcp_elicit.cli.call import narrate

    deep: object = 1
    for _ in range(1000):
        deep = [deep]
    narrate("notifications/progress", {"progressToken": 1, "progress": deep, "total": deep, "message": deep})
    narrate("notifications/tasks", {"taskId": deep, "status": deep, "statusMessage": deep})
    narrate("notifications/message", {"level": deep, "logger": deep, "data": deep})
    assert capsys.readouterr().err.splitlines() == [
        "… [[[[...]]]]/[[[[...]]]] [[[[...]]]]",
        "… task [[[[...]: [[[[...]]]] - [[[[...]]]]",
        "[[[[[...]]]]] [[[[...]]]]: (nested too deeply to show)",
    ]


def test_results_with_values_nested_too_deeply_are_still_printed(capsys: pytest.CaptureFixture[str]) -> None:
    # 1000 levels (a JSON reader takes 1024): str() of them raised RecursionError, and
    # mcp-elicit prompt, read or call printed a traceback instead of the result
    from mcp_elicit.cli.output import print_result

    deep: object = "x"
    for _ in range(1000):
        deep = [deep]
    print_result("prompts/get", {"description": "d", "messages": [{"role": deep, "content": deep}]})
    print_result("resources/read", {"contents": [{"uri": deep, "mimeType": deep, "text": "t"}]})
    blocks = [
        {"type": "text", "text": deep},
        {"type": "image", "data": "AA==", "mimeType": deep},
        {"type": "resource_link", "uri": deep},
        {"type": "resource", "resource": {"uri": deep}},
    ]
    print_result("tools/call", {"content": blocks})
    assert capsys.readouterr().out.splitlines() == [
        "d",
        "[[[[[...]]]]] (nested too deeply to show)",
        "[[[[...]]]] ([[[[...]]]])",
        "t",
        "[[[[...]]]]",
        "[image: [[[[...]]]], 4 base64 characters]",
        "[link: [[[[...]]]]]",
        "[resource: [[[[...]]]]]",
    ]
