"""``mcp-elicit call`` (and ``prompt``, ``read``): a whole elicitation round over stdio and
Streamable HTTP at both revisions, every message schema-checked, and every exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli.fake_http import fake_http
from cli.helpers import BOOKING, TOMORROW, answers_file, demo_stdio, fake, run

from support.procs import ROOT, HttpProcess, free_port

REVISIONS = ["2026-07-28", "2025-11-25"]
BOOKED = re.compile(rf"Booked #\d+: Noma, Copenhagen, 2 people on {TOMORROW}, terrace\.")


# ---- 0: a result --------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_booking_over_stdio(capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str) -> None:
    script = answers_file(tmp_path, BOOKING)
    result = run(
        capsys,
        "call",
        "book_table",
        "restaurant=noma",
        "--answers",
        script,
        "--trace",
        "--protocol",
        revision,
        "--",
        *demo_stdio(),
    )
    assert result.code == 0, result.err
    assert BOOKED.fullmatch(result.out.strip()), result.out
    # The rounds, as they happened.
    assert "? Table bookings asks (" in result.err
    assert "Booking a table at Noma, Copenhagen: how many, and when?" in result.err
    assert f'→ accept  party_size=2, date="{TOMORROW}", seating="terrace"' in result.err
    assert "→ accept  confirm=true" in result.err
    # Every message the client sent is valid at its revision.
    assert result.check_wire(revision) >= 4
    sent = result.sent()
    if revision == "2026-07-28":
        calls = [m for m in sent if m.get("method") == "tools/call"]
        assert len(calls) == 3
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for m in calls)
        assert "inputResponses" in calls[1]["params"] and "requestState" in calls[1]["params"]
    else:
        init = next(m for m in sent if m.get("method") == "initialize")
        assert init["params"]["capabilities"] == {"elicitation": {"form": {}, "url": {}}}
        assert [m["result"]["action"] for m in sent if "result" in m] == ["accept", "accept"]


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_booking_over_http_as_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, http_demo: HttpProcess, revision: str
) -> None:
    script = answers_file(tmp_path, BOOKING)
    result = run(
        capsys,
        "call",
        http_demo.url,
        "book_table",
        "restaurant=noma",
        "--answers",
        script,
        "--json",
        "--trace",
        "--protocol",
        revision,
    )
    assert result.code == 0, result.err
    outcome = result.json()
    assert outcome["revision"] == revision
    assert outcome["server"]["name"] == "bookings"
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}} if revision == "2026-07-28" else {}
    assert outcome["client_capabilities"] == {"elicitation": {"form": {}, "url": {}}, **tasks}
    assert BOOKED.fullmatch(outcome["result"]["content"][0]["text"])
    assert [r["action"] for r in outcome["rounds"]] == ["accept", "accept"]
    assert outcome["rounds"][0]["content"]["party_size"] == 2
    assert outcome["rounds"][1]["message"].startswith("Please confirm: Noma, Copenhagen")
    assert set(outcome["timings_ms"]) == {"connect", "request"}
    assert result.check_wire(revision) >= 4


def test_the_trace_shortens_request_state(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = answers_file(tmp_path, BOOKING)
    result = run(
        capsys, "call", "book_table", "restaurant=noma", "--answers", script, "--trace", "--", *demo_stdio()
    )
    assert result.code == 0
    states = [m["params"]["requestState"] for m in result.sent() if "requestState" in m.get("params", {})]
    assert len(states) == 2
    assert all(re.fullmatch(r"v2\.[^…]{13}…\[\d+ chars\]", s) for s in states), states


def test_declining_is_a_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = answers_file(tmp_path, [{"fields": ["party_size"], "action": "decline"}])
    result = run(capsys, "call", "book_table", "restaurant=noma", "--answers", script, "--", *demo_stdio())
    assert result.code == 0
    assert result.out.startswith("No booking made at Noma, Copenhagen.")
    assert "→ decline" in result.err


def test_a_question_the_script_does_not_answer_is_cancelled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = answers_file(tmp_path, [])
    result = run(capsys, "call", "book_table", "restaurant=noma", "--answers", script, "--", *demo_stdio())
    assert result.code == 0
    assert result.out.startswith("Booking not finished")
    assert "→ cancel" in result.err
    assert "no scripted answer for Table bookings" in caplog.text


def test_without_an_answerer_the_client_declares_no_elicitation(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "call", "book_table", "restaurant=noma", "--ui", "none", "--trace", "--", *demo_stdio()
    )
    assert result.code == 0
    assert "Your client cannot show forms" in result.out
    for message in result.sent():
        meta = message.get("params", {}).get("_meta", {})
        caps = meta.get("io.modelcontextprotocol/clientCapabilities", {})
        assert caps in ({}, {"extensions": {"io.modelcontextprotocol/tasks": {}}})  # call follows tasks


CONFORMANCE_STDIO = [*demo_stdio()[:-1], str(ROOT / "examples" / "conformance_server.py")]


@pytest.mark.parametrize("ui", ["auto", "none"])
def test_a_question_the_client_cannot_answer_says_how_to_answer_it(
    capsys: pytest.CaptureFixture[str], ui: str
) -> None:
    # no terminal here (the output is captured): the call declares no elicitation
    result = run(capsys, "call", "confirm_delete", "filename=a.txt", "--ui", ui, "--", *CONFORMANCE_STDIO)
    assert result.code == 1
    assert "error -32021" in result.err
    assert "declared no elicitation" in result.err
    assert "--answers FILE" in result.err and "--ui web" in result.err


@pytest.mark.parametrize("revision", REVISIONS)
def test_root_declares_roots_and_answers_with_the_directories(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b c").mkdir()
    argv = ["call", "test_input_required_result_list_roots", "--protocol", revision, "--json", "--trace"]
    result = run(
        capsys,
        *argv,
        "--root",
        str(tmp_path / "a"),
        "--root",
        str(tmp_path / "b c"),
        "--",
        *CONFORMANCE_STDIO,
    )
    assert result.code == 0, result.err
    outcome = result.json()
    uris = [(tmp_path / "a").resolve().as_uri(), (tmp_path / "b c").resolve().as_uri()]
    assert outcome["result"]["content"][0]["text"] == "Roots: " + ", ".join(uris)
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}} if revision == "2026-07-28" else {}
    assert outcome["client_capabilities"] == {"roots": {}, **tasks}
    assert result.check_wire(revision) >= 2


def test_without_root_the_client_declares_no_roots(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "call", "test_input_required_result_list_roots", "--ui", "none", "--", *CONFORMANCE_STDIO
    )
    assert result.code == 1
    assert "needs the client capability roots" in result.err


def test_arguments_are_read_by_the_tool_schema(capsys: pytest.CaptureFixture[str]) -> None:
    typed = run(
        capsys, "call", "cancel_booking", "booking_id=41", "--ui", "none", "--trace", "--", *demo_stdio()
    )
    assert typed.out.strip() == "There is no booking #41."
    call = next(m for m in typed.sent() if m.get("method") == "tools/call")
    assert call["params"]["arguments"] == {"booking_id": 41}
    as_json = run(
        capsys, "call", "cancel_booking", "--args", '{"booking_id": 7}', "--ui", "none", "--", *demo_stdio()
    )
    assert as_json.out.strip() == "There is no booking #7."


TYPED_APP = """
import json

from mcp_elicit import Server

app = Server("typed")
UNSET = object()


@app.tool(input_schema={
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "maybe_n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "one_of": {"oneOf": [{"type": "number"}, {"type": "boolean"}]},
        "level": {"enum": [1, 2, 3]},
        "int_or_text": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "x": {"type": "number"},
    },
})
async def echo(
    text=UNSET, maybe_n=UNSET, tags=UNSET, one_of=UNSET, level=UNSET, int_or_text=UNSET, x=UNSET
) -> str:
    given = dict(text=text, maybe_n=maybe_n, tags=tags, one_of=one_of, level=level, int_or_text=int_or_text, x=x)
    return json.dumps({k: v for k, v in given.items() if v is not UNSET})
"""


def _typed_app(tmp: Path) -> list[str]:
    app = tmp / "typed_app.py"
    app.write_text(TYPED_APP, encoding="utf-8")
    return [sys.executable, "-m", "mcp_elicit", "serve", str(app)]


@pytest.mark.parametrize(
    ("pair", "sent"),
    [
        ("maybe_n=5", {"maybe_n": 5}),
        ("maybe_n=null", {"maybe_n": None}),
        ('tags=["a", "b=c"]', {"tags": ["a", "b=c"]}),
        ("one_of=true", {"one_of": True}),
        ("one_of=2.5", {"one_of": 2.5}),
        ("level=2", {"level": 2}),
        ("int_or_text=5", {"int_or_text": "5"}),  # text is allowed: what was typed
        ("text=a=b", {"text": "a=b"}),
        ("text=42", {"text": "42"}),
        ("text=ünï 😀", {"text": "ünï 😀"}),
    ],
)
def test_arguments_follow_any_of_and_enum_in_the_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pair: str, sent: dict[str, object]
) -> None:
    result = run(capsys, "call", "echo", pair, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 0, result.err
    call = next(m for m in result.sent() if m.get("method") == "tools/call")
    assert call["params"]["arguments"] == sent
    assert json.loads(result.out) == sent


@pytest.mark.parametrize(
    "given",
    [
        ["x:=NaN"],
        ["x=1e400"],
        ["x=-Infinity"],
        ["--args", '{"x": Infinity}'],
        ["--args", '{"x": [1e999]}'],
        ["maybe_n=123456789012345678901234567890"],
        ["x:=-9223372036854775809"],
        ["x:=" + "9" * 5000],  # past the digits int() reads at all
        ["--args", '{"x": ' + "9" * 5000 + "}"],
    ],
)
def test_a_number_json_cannot_carry_is_refused_before_calling(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, given: list[str]
) -> None:
    result = run(capsys, "call", "echo", *given, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert "tools/call" not in result.sent_methods()
    assert "not a number JSON can carry" in result.err, result.err
    assert "Traceback" not in result.err


def test_options_may_come_between_the_words(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess
) -> None:
    result = run(capsys, "call", http_demo.url, "--ui", "none", "list_bookings")
    assert result.code == 0, result.err


def test_prompt_and_read(capsys: pytest.CaptureFixture[str], tmp_path: Path, http_demo: HttpProcess) -> None:
    script = answers_file(tmp_path, BOOKING)
    prompt = run(capsys, "prompt", http_demo.url, "plan_evening", "city=Oslo", "--answers", script)
    assert prompt.code == 0, prompt.err
    assert "[user] Plan a lively evening in Oslo" in prompt.out
    read = run(capsys, "read", "bookings://menu/noma", "--answers", script, "--", *demo_stdio())
    assert read.code == 0, read.err
    assert read.out.startswith("bookings://menu/noma")
    assert "Noma, Copenhagen — mains" in read.out


# ---- 1: an error result --------------------------------------------------------------------


def test_a_tool_error_exits_1(capsys: pytest.CaptureFixture[str], http_demo: HttpProcess) -> None:
    result = run(capsys, "call", http_demo.url, "book_table", "restaurant=atlantis", "--ui", "none")
    assert result.code == 1
    assert "the tool reported an error" in result.err
    assert "Unknown restaurant 'atlantis'" in result.out


def test_an_unknown_tool_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "book_a_flight", "--", *demo_stdio())
    assert result.code == 1
    assert (
        "the server has no tool 'book_a_flight'; its tools: book_table, cancel_booking, "
        "check_availability, list_bookings, share_to_calendar" in result.err
    )


def test_a_json_rpc_error_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "prompt", "no_such_prompt", "--", *demo_stdio())
    assert result.code == 1
    assert "prompts/get: the server answered with error -326" in result.err


def test_an_is_error_result_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "text=x", "--json", "--", *fake("tool-error"))
    assert result.code == 1
    outcome = result.json()
    assert outcome["result"]["isError"] is True
    # the same two keys as check's report and every failure's object, so one test reads them all
    assert outcome["ok"] is False and outcome["exit_code"] == 1


def test_a_result_as_json_says_ok_and_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "list_bookings", "--json", "--ui", "none", "--", *demo_stdio())
    assert result.code == 0, result.err
    outcome = result.json()
    assert list(outcome)[:2] == ["ok", "exit_code"]
    assert outcome["ok"] is True and outcome["exit_code"] == 0


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        (
            "output-bad",
            "the result does not match the tool's outputSchema: at structuredContent.n, 'many' is not of type",
        ),
        ("output-missing", "the tool lists an outputSchema, but its result has no structuredContent"),
    ],
)
def test_a_result_that_breaks_the_output_schema_is_a_warning(
    capsys: pytest.CaptureFixture[str], mode: str, fragment: str
) -> None:
    result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--", *fake(mode, "modern"))
    assert result.code == 0  # the result is still given
    assert f"mcp-elicit: warning: {fragment}" in result.err
    as_json = run(capsys, "call", "echo", "text=x", "--ui", "none", "--json", "--", *fake(mode))
    assert fragment in as_json.json()["output_mismatch"]


def test_a_result_that_fits_the_output_schema_has_no_warning(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--json", "--", *fake("good"))
    assert result.json()["output_mismatch"] == ""


# ---- 2: usage --------------------------------------------------------------------------------


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


@pytest.mark.parametrize("given", [["n:=5"], ["--args", '{"city": "Oslo", "n": [1]}']])
def test_prompt_arguments_given_as_json_are_refused_before_connecting(
    capsys: pytest.CaptureFixture[str], given: list[str]
) -> None:
    result = run(capsys, "prompt", "plan_evening", *given, "--trace", "--", *demo_stdio())
    assert result.code == 2
    assert "prompt arguments are text; n given as JSON" in result.err
    assert result.sent() == []  # nothing started, nothing sent


@pytest.mark.parametrize(
    "given",
    [
        ["echo", "text=caf\udce9"],  # what Python makes of b"caf\xe9" (Latin-1) in a UTF-8 locale
        ["ech\udcff"],
        ["echo", "--args", '{"text": "caf\udce9"}'],
    ],
)
def test_arguments_that_are_not_utf8_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, given: list[str]
) -> None:
    result = run(capsys, "call", *given, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert "is not valid UTF-8" in result.err
    assert "set the terminal to UTF-8" in result.err
    assert result.sent() == []


def test_a_value_that_must_be_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "cancel_booking", "booking_id=one", "--", *demo_stdio())
    assert result.code == 2
    # the schema wants an integer, so quoting the word as text would only fail on the server
    assert "'booking_id' is integer in the tool's input schema, and 'one' is not JSON" in result.err
    assert ":='\"...\"'" not in result.err, result.err


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        ("maybe_n=five", "'maybe_n' is integer or null in the tool's input schema"),
        ("level=high", "'level' is integer in the tool's input schema"),
    ],
)
def test_a_value_the_schema_types_names_the_type_not_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pair: str, said: str
) -> None:
    result = run(capsys, "call", "echo", pair, "--ui", "none", "--trace", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert said in result.err, result.err
    assert "quote text" not in result.err, result.err
    assert "tools/call" not in result.sent_methods()


def test_a_value_given_as_json_that_is_not_json_says_how_to_quote_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "call", "echo", "text:=hello", "--ui", "none", "--", *_typed_app(tmp_path))
    assert result.code == 2, result.err
    assert (
        "the value of 'text' must be JSON here ('hello' is not); quote text as text:='\"...\"'" in result.err
    )


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


# ---- 3: cannot connect -------------------------------------------------------------------------


def test_connection_refused(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", f"http://127.0.0.1:{free_port()}/mcp", "list_bookings", "--json")
    assert result.code == 3
    assert result.json()["exit_code"] == 3
    assert "connection refused" in result.err


def test_a_server_command_that_fails(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "--", *fake("exit"))
    assert result.code == 3
    assert "fake: cannot open the database" in result.err


# ---- 4: protocol violations ----------------------------------------------------------------------


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


# ---- URL mode ------------------------------------------------------------------------------------

URL_SERVER = [*demo_stdio()[:-1], str(Path(__file__).resolve().parent / "url_server.py")]


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
        assert course[-1] == "completed - deleting notes.txt"
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


# ---- a result nested deeper than json.dumps can write -----------------------------------------


def test_a_result_nested_too_deeply_to_show_is_still_given(capsys: pytest.CaptureFixture[str]) -> None:
    # 1000 levels: a JSON reader takes them (1024), json.dumps and repr recurse past Python's limit
    result = run(capsys, "call", "echo", "text=x", "--ui", "none", "--", *fake("deep"))
    assert result.code == 0
    assert "(nested too deeply to show)" in result.out


def test_a_traced_message_nested_too_deeply_to_show_is_still_read(capsys: pytest.CaptureFixture[str]) -> None:
    # the trace raised RecursionError where the message was read: it was lost, and the call
    # waited out its 30 s for an answer that had come
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


def test_an_output_schema_nested_too_deeply_to_check_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
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
