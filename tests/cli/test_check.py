"""``mcp-elicit check``: over stdio and Streamable HTTP, against the demo server (exit code 0)
and servers that answer but with something wrong (1), and its usage errors (2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli.helpers import DEMO, RECURSION_LIMITS, demo_stdio, fake, limited_recursion, run

from support.procs import HttpProcess

REVISIONS = ["2026-07-28", "2025-11-25"]


def _declared_nothing(sent: list[dict[str, object]]) -> None:
    """The connection test declares no capabilities and calls no tool."""
    assert sent
    for message in sent:
        params = message.get("params")
        assert isinstance(params, dict) or params is None
        if params is None:
            continue
        meta = params.get("_meta")
        if isinstance(meta, dict) and "io.modelcontextprotocol/clientCapabilities" in meta:
            assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
        if message.get("method") == "initialize":
            assert params["capabilities"] == {}
    assert "tools/call" not in [m.get("method") for m in sent]


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_demo_server_over_stdio_is_clean(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, revision: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rows on one line each, whatever terminal the run has
    result = run(capsys, "check", "--trace", "--protocol", revision, "--", *demo_stdio())
    assert result.code == 0, result.err
    out = result.out
    assert "Table bookings 1.0.0  (name: bookings)" in out
    assert f"MCP {revision}" in out
    assert "declared no capabilities and called no tool" in out
    assert "completions, logging, prompts (listChanged), resources (listChanged, subscribe)," in out
    assert "5, in 1 page" in out
    for tool in ("✓ book_table", "✓ list_bookings", "✓ cancel_booking", "✓ check_availability"):
        assert tool in out
    assert "OK: the server answers and lists its tools." in out
    assert "prompts       1: plan_evening" in out
    assert "resources     1: bookings://restaurants" in out
    assert "templates     1: bookings://menu/{restaurant}" in out
    # the suggested call names the tool's required arguments: without them it only fails
    assert "mcp-elicit call book_table restaurant=VALUE -- " in out
    assert "timings" in out and "connect" in out
    _declared_nothing(result.sent())
    assert result.check_wire(revision) >= 2


def test_the_suggested_call_says_what_its_redacted_target_hides(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess, tmp_path: Path
) -> None:
    """The call to try is printed to be copied, but its TARGET as every line shows it:
    without its key, or a URL argument's password; a line says what REDACTED stands for."""
    result = run(capsys, "check", http_demo.url + "?key=SECRET")
    assert result.code == 0, result.err
    assert "mcp-elicit call 'http://127.0.0.1:" in result.out and "/mcp?REDACTED' book_table" in result.out
    assert "(in the TARGET, REDACTED hides its query: write it out as you gave it)" in result.out
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(
        f"import runpy, sys; sys.argv = ['mcp-elicit', 'serve', {str(DEMO)!r}]; "
        "runpy.run_module('mcp_elicit', run_name='__main__')"
    )
    result = run(capsys, "check", "--", sys.executable, str(wrapper), "--db", "postgres://me:PASSWORD@db/x")
    assert result.code == 0, result.err
    assert "-- " in result.out and "postgres://REDACTED:REDACTED@db/x" in result.out
    assert "(in the command, REDACTED hides the password or key of a URL among its arguments" in result.out
    assert "PASSWORD" not in result.out + result.err and "SECRET" not in result.out + result.err
    result = run(
        capsys, "check", "--json", "--", sys.executable, str(wrapper), "--db", "postgres://me:PASSWORD@db/x"
    )
    assert result.json()["target"]["command"][-1] == "postgres://REDACTED:REDACTED@db/x", result.out
    assert "PASSWORD" not in result.out + result.err
    key = "postgres://db/x?sslpassword=one SECRET"  # a key with a space: the word is known whole
    result = run(capsys, "check", "--", sys.executable, str(wrapper), "--db", key)
    assert result.code == 0, result.err
    assert "'postgres://db/x?REDACTED'" in result.out
    assert "SECRET" not in result.out + result.err
    result = run(capsys, "check", "--json", "--", sys.executable, str(wrapper), "--db", key)
    assert result.json()["target"]["command"][-1] == "postgres://db/x?REDACTED", result.out


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_demo_server_over_http_is_clean(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess, revision: str
) -> None:
    result = run(capsys, "check", http_demo.url, "--json", "--trace", "--protocol", revision)
    assert result.code == 0, result.err
    report = result.json()
    assert report["ok"] is True and report["exit_code"] == 0
    assert report["revision"] == revision
    assert report["server"] == {"name": "bookings", "version": "1.0.0", "title": "Table bookings"}
    assert report["client_capabilities"] == {}
    assert "tools" in report["capabilities"]
    assert [t["name"] for t in report["tools"]] == [
        "book_table",
        "list_bookings",
        "cancel_booking",
        "check_availability",
        "share_to_calendar",
    ]
    assert all(t["ok"] for t in report["tools"])
    assert report["offers"] == {
        "prompts": ["plan_evening"],
        "resources": ["bookings://restaurants"],
        "resource_templates": ["bookings://menu/{restaurant}"],
    }
    assert report["offer_problems"] == {} and report["problems"] == []
    assert set(report["timings_ms"]) == {"connect", "tools_list", "total"}
    assert report["target"] == {"kind": "http", "url": http_demo.url, "headers": []}
    _declared_nothing(result.sent())
    assert result.check_wire(revision) >= 2


def test_every_page_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--json", "--", *fake("good"))
    assert result.code == 0, result.err
    report = result.json()
    assert report["pages"] == 2
    assert [t["name"] for t in report["tools"]] == ["echo", "ping.v2"]
    assert report["revision"] == "2025-11-25" and report["era"] == "handshake: initialize"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_failed_listing_of_what_else_is_offered_is_a_warning(
    capsys: pytest.CaptureFixture[str], era: str
) -> None:
    result = run(capsys, "check", "--json", "--", *fake("broken-prompts", era))
    assert result.code == 0, result.err
    report = result.json()
    assert report["offers"] == {"resources": ["file:///notes.txt"], "resource_templates": []}
    (problem,) = report["problems"]
    assert problem["severity"] == "warning" and problem["code"] == "list-failed"
    assert "prompts/list failed" in problem["message"] and "no prompts today" in problem["message"]
    human = run(capsys, "check", "--", *fake("broken-prompts", era))
    assert human.code == 0
    assert "resources     1: file:///notes.txt" in human.out
    assert "templates     none" in human.out
    assert "list-failed: prompts/list failed" in human.out
    assert run(capsys, "check", "--strict", "--", *fake("broken-prompts", era)).code == 1


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_faults_in_prompts_resources_and_templates_are_found(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    result = run(capsys, "check", "--json", "--", *fake("bad-offers", era))
    assert result.code == 1, result.err
    report = result.json()
    assert all(t["ok"] for t in report["tools"])
    assert report["offers"] == {
        "prompts": ["plan", "trip"],
        "resources": ["notes.txt"],
        "resource_templates": ["file:///{path"],
    }
    problems = report["offer_problems"]
    assert [(p["severity"], p["code"]) for p in problems["prompts"]] == [
        ("error", "definition"),
        ("warning", "description"),
    ]
    assert problems["prompts"][0]["message"] == (
        "prompt 'trip', arguments[0]: required: must be true or false, not a string"
    )
    ((resource,),) = [problems["resources"]]
    assert resource["code"] == "uri" and resource["message"].startswith(
        "resource 'notes.txt': not an absolute URI"
    )
    ((template,),) = [problems["resource_templates"]]
    assert (
        template["code"] == "uri-template" and "the brace at offset 8 is never closed" in template["message"]
    )
    assert report["errors"] == 3 and report["warnings"] == 1 and report["problems"] == []
    monkeypatch.setenv("COLUMNS", "200")  # each finding on a line of its own
    human = run(capsys, "check", "--", *fake("bad-offers", era))
    assert human.code == 1
    lines = human.out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("prompts "))
    assert "required: must be true or false" in lines[at + 1] and "error" in lines[at + 1]
    assert "warning" in lines[at + 2] and "description: prompt 'trip': no description" in lines[at + 2]
    assert lines[at + 3].startswith("resources ") and "uri: resource 'notes.txt'" in lines[at + 4]
    assert lines[at + 5].startswith("templates ") and "uri-template: resource template" in lines[at + 6]
    assert "FAILED (exit 1): 3 errors, 1 warning" in human.out


def test_headers_are_sent_to_an_http_server(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess
) -> None:
    result = run(capsys, "check", http_demo.url, "-H", "Authorization: Bearer t0ken", "--json")
    assert result.code == 0, result.err
    assert result.json()["target"]["headers"] == ["Authorization"]


@pytest.mark.parametrize(("era", "header_severity"), [("modern", "error"), ("legacy", "warning")])
def test_bad_tool_definitions_are_named(
    capsys: pytest.CaptureFixture[str], era: str, header_severity: str
) -> None:
    result = run(capsys, "check", "--json", "--", *fake("bad-tools", era))
    assert result.code == 1, result.err
    report = result.json()
    assert report["ok"] is False and report["pages"] == 2
    problems = {(t["name"], p["code"]): p for t in report["tools"] for p in t["problems"]}
    assert problems[("bad name!", "name")]["severity"] == "error"
    assert problems[("undocumented", "description")]["severity"] == "warning"
    typo = problems[("typo", "input-schema")]
    assert "inputSchema.properties.x.type" in typo["message"] and "'strnig'" in typo["message"]
    assert 'must have "type": "object"' in problems[("array_root", "input-schema")]["message"]
    assert problems[("header", "x-mcp-header")]["severity"] == header_severity
    assert problems[("echo", "duplicate-name")]["message"] == "2 tools are named 'echo'"
    assert [t["ok"] for t in report["tools"]][:2] == [False, True]
    assert report["errors"] == (6 if era == "modern" else 5)


def test_bad_tool_definitions_in_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--", *fake("bad-tools"))
    assert result.code == 1
    assert "✗ bad name!" in result.out
    assert "! undocumented" in result.out
    assert "FAILED (exit 1): 5 errors, 2 warnings; see above." in result.out


def test_strict_makes_warnings_fail(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    server = tmp_path / "quiet.py"
    server.write_text(
        "from mcp_elicit import Server\n"
        "app = Server('quiet')\n"
        "@app.tool()\n"
        "def hush() -> str:\n"
        "    return 'shh'\n"
    )
    command = ["--", *demo_stdio()[:-1], str(server)]
    lenient = run(capsys, "check", "--json", *command)
    assert lenient.code == 0, lenient.err
    assert lenient.json()["warnings"] == 1
    strict = run(capsys, "check", "--strict", *command)
    assert strict.code == 1
    assert "(--strict: warnings count)" in strict.out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["check"], "give the server"),
        (["check", "ftp://example.com"], "is not an http(s):// URL"),
        # an http(s) URL without its host: not to be run as a command
        (["check", "http://"], "'http://' names no host; give it as http(s)://HOST:PORT/PATH"),
        (["check", "https:///mcp"], "'https:///mcp' names no host; give it as http(s)://HOST:PORT/PATH"),
        (["check", ""], "the TARGET is empty: give an http(s):// URL, or -- and the server command"),
        (["check", "mcp-elicit"], "put its command after --"),
        (["check", "app.py"], "mcp-elicit check -- mcp-elicit serve app.py (an mcp_elicit Server)"),
        (["call", "app.py", "book"], "mcp-elicit call TOOL ... -- python app.py (a script"),
        (["check", "--"], "nothing after --"),
        (["check", "--", "", "serve"], "the server command starts with an empty word"),
        (["check", "http://127.0.0.1:1/mcp", "--", "x"], "not both"),
        (["check", "-H", "X-A: b", "--", "x"], "--header is for HTTP targets"),
        (["check", "http://127.0.0.1:1/mcp", "-H", "no colon"], "wants 'Name: value'"),
        (
            ["check", "http://127.0.0.1:1/mcp", "-H", "X-Team: Zürich"],
            "the value of header 'X-Team' is not ASCII ('ü' at 1)",
        ),
        (["check", "http://127.0.0.1:1/mcp", "--timeout", "0"], "--timeout must be more than 0"),
        (
            ["check", "http://127.0.0.1:1/mcp", "--timeout", "nan"],
            "a finite number of seconds more than 0, not nan",
        ),
        (
            ["check", "http://127.0.0.1:1/mcp", "--timeout", "inf"],
            "a finite number of seconds more than 0, not inf",
        ),
        (["call", "http://127.0.0.1:1/mcp", "t", "--timeout", "NaN"], "a finite number of seconds"),
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    result = run(capsys, *argv)
    assert result.code == 2
    assert fragment in result.err


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://[::1/mcp", "Invalid IPv6 URL"),
        ("http://127.0.0.1:99999/mcp", "Port out of range"),
        ("http://127.0.0.1:abc/mcp", "'abc'"),
    ],
)
@pytest.mark.parametrize("command", ["check", "call"])
def test_a_malformed_url_is_a_usage_error_before_connecting(
    capsys: pytest.CaptureFixture[str], url: str, fragment: str, command: str
) -> None:
    argv = [command, url, "--no-login"] + (["some_tool", "a=1"] if command == "call" else [])
    result = run(capsys, *argv)
    assert result.code == 2, result.err
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert f"{url!r} is not a valid URL" in result.err
    assert fragment in result.err


@pytest.mark.parametrize(
    "url",
    [
        "http://me:PASSWORD@127.0.0.1:99999/mcp?key=SECRET",  # a malformed URL: a usage error
        "http://me:PASSWORD@[::1/mcp?key=SECRET",
        "http://me x:PASSWORD@127.0.0.1:9/mcp?key=SECRET SECRET",  # nothing listens on port 9
        'http://me"x:PASSWORD@127.0.0.1:9/mcp?key=SECRET',
    ],
)
def test_the_targets_password_and_key_are_shown_in_no_error(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    """The TARGET is the person's own, but what the command prints ends up in terminals'
    scrollback and CI logs: its user name and password and its query are redacted, the
    URL taken whole (a space or a quote in it, which httpx sends %-escaped, included)."""
    result = run(capsys, "check", "--json", url, "--no-login")
    assert result.code in (2, 3), result.err
    said = result.err + result.out
    assert "PASSWORD" not in said and "SECRET" not in said, said
    assert "REDACTED" in said


def test_an_unknown_revision_is_refused_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run(capsys, "check", "--protocol", "2024-01-01", "http://127.0.0.1:1/mcp")
    assert exc.value.code == 2


@RECURSION_LIMITS
def test_a_schema_nested_too_deeply_to_check_is_a_finding(
    capsys: pytest.CaptureFixture[str], recursion_limit: int | None
) -> None:
    # 600 levels of "items": jsonschema's checks recurse past Python's limit; check crashed
    # with a RecursionError. With the limit raised the check went on (for seconds) and the
    # schema passed: the verdict depended on the process's recursion limit
    with limited_recursion(recursion_limit):
        result = run(capsys, "check", "--json", "--", *fake("deep-schema"))
    assert result.code == 1
    tools = result.json()["tools"]
    messages = [f["message"] for f in tools[0]["problems"]]
    assert "inputSchema is nested too deeply to check as a JSON Schema" in messages
    assert "outputSchema is nested too deeply to check as a JSON Schema" in messages
