"""``mcp-elicit call`` (and ``prompt``, ``read``): a whole elicitation round over stdio and
Streamable HTTP at both revisions, every message schema-checked; exit code 0 for a result
and 1 for an error result."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from cli.helpers import BOOKING, TOMORROW, answers_file, demo_stdio, fake, run
from mcp_elicit.cli.tool_schemas import output_mismatch

from support.cli_call import CONFORMANCE_STDIO, REVISIONS
from support.procs import HttpProcess
from support.raw_http import Seen, raw_server, response

BOOKED = re.compile(rf"Booked #\d+: Noma, Copenhagen, 2 people on {TOMORROW}, terrace\.")


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


def test_prompt_and_read(capsys: pytest.CaptureFixture[str], tmp_path: Path, http_demo: HttpProcess) -> None:
    script = answers_file(tmp_path, BOOKING)
    prompt = run(capsys, "prompt", http_demo.url, "plan_evening", "city=Oslo", "--answers", script)
    assert prompt.code == 0, prompt.err
    assert "[user] Plan a lively evening in Oslo" in prompt.out
    read = run(capsys, "read", "bookings://menu/noma", "--answers", script, "--", *demo_stdio())
    assert read.code == 0, read.err
    assert read.out.startswith("bookings://menu/noma")
    assert "Noma, Copenhagen — mains" in read.out


@pytest.mark.parametrize(
    "uri",
    ["bookings://me:SECRET@menu/none?token=SECRET", "urn:menu?token=SECRET", "bookings://menu/x?k=SEC RET"],
)
def test_a_resource_not_found_names_the_uri_without_its_key(
    capsys: pytest.CaptureFixture[str], uri: str
) -> None:
    """The server's "Resource not found: URI" repeats what was asked for: printed where
    others read it (a terminal's scrollback, CI), its password and query are redacted,
    also of a URI with no "://" and one with a space in its query."""
    result = run(capsys, "read", uri, "--ui", "none", "--", *demo_stdio())
    assert result.code != 0
    assert "REDACTED" in result.err, result.err
    assert "SEC" not in result.err + result.out, result.err


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


def test_a_mistyped_tool_is_told_the_closest_name(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "book_tabel", "restaurant=noma", "--", *demo_stdio())
    assert result.code == 1
    assert "the server has no tool 'book_tabel' (did you mean 'book_table'?); its tools: " in result.err


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


@pytest.mark.anyio
async def test_an_output_schema_naming_a_remote_reference_is_not_fetched() -> None:
    """A server's outputSchema whose ``$ref`` names a URL (here one a real server on
    127.0.0.1 answers) is not fetched to check the result: the server would make the
    client request any address it likes. Before: jsonschema's fallback resolver fetched it."""

    async def serve(seen: Seen, writer: asyncio.StreamWriter) -> None:
        writer.write(response("200 OK", {"Content-Type": "application/json"}, b'{"type": "string"}'))
        await writer.drain()

    async with raw_server(serve) as raw:
        schema = {"type": "object", "properties": {"n": {"$ref": f"http://127.0.0.1:{raw.port}/n.json"}}}
        result = {"content": [], "structuredContent": {"n": 1}}
        said = await asyncio.wait_for(asyncio.to_thread(output_mismatch, schema, result), 10)
    assert raw.seen == []
    assert "not fetched" in said and f"127.0.0.1:{raw.port}/n.json" in said
