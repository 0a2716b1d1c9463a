"""``mcp-elicit check`` against awkward servers: one that speaks only an older revision
(and the closing advice that fits it), one too slow for ``--timeout`` (over stdio and
HTTP, before and after connecting; for ``call``, before or after the tool is called), and one whose ``tools/list`` fails with an error (over
HTTP, a 404 in every session)."""

from __future__ import annotations

import http.server
import json
import time
from typing import ClassVar

import pytest

from cli.fake_http import JsonAnswering, serving
from cli.helpers import fake, run

#: What a timeout says to do, wherever it struck.
SLOWER = "If the server is only slow, give it longer: --timeout SECONDS."


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-03-26"])
def test_a_server_that_speaks_only_an_older_revision_is_reported_at_it(
    capsys: pytest.CaptureFixture[str], revision: str
) -> None:
    result = run(capsys, "check", "--json", "--trace", "--", *fake("good", revision))
    assert result.code == 0, result.err
    report = result.json()
    assert (report["revision"], report["era"]) == (revision, "handshake: initialize")
    assert report["supported_versions"] == [revision]
    assert [t["name"] for t in report["tools"]] == ["echo", "ping.v2"]
    assert report["pages"] == 2 and report["client_capabilities"] == {}
    sent = result.sent()
    assert "tools/call" not in result.sent_methods()
    assert [m["params"]["capabilities"] for m in sent if m.get("method") == "initialize"] == [{}]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--", "sleep", "30"], "started but did not answer"),
        (["--", *fake("list-never")], "answered while connecting, then did not answer tools/list"),
    ],
    ids=["stdio-silent", "stdio-silent-after-connecting"],
)
@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
def test_a_stdio_timeout_says_how_to_allow_more_time(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str, command: list[str]
) -> None:
    result = run(capsys, *command, "--timeout", "0.5", *argv)
    assert result.code == 3
    assert said in result.err and SLOWER in result.err
    assert "may have acted" not in result.err  # no tool was called


def test_a_tool_call_that_times_out_says_the_tool_may_have_acted(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "--timeout", "0.5", "echo", "text=hi", "--", *fake("call-never"))
    assert result.code == 3
    assert "then did not answer tools/call" in result.err and SLOWER in result.err
    assert "the tool may have acted: check what it did before calling it again" in result.err


class _Slow(http.server.BaseHTTPRequestHandler):
    """Answers every POST after longer than the test's --timeout, with a 202."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(1.5)
        self.send_response(202)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_an_http_timeout_says_how_to_allow_more_time(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(_Slow) as base:
        result = run(capsys, "check", "--timeout", "0.5", f"{base}/mcp")
    assert result.code == 3
    assert "within 0.5 s" in result.err and SLOWER in result.err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_failed_tools_list_is_an_error_in_a_report_that_still_names_the_server(
    capsys: pytest.CaptureFixture[str], era: str
) -> None:
    result = run(capsys, "check", "--json", "--trace", "--", *fake("list-error", era))
    assert result.code == 1, result.err
    report = result.json()
    assert "error" not in report
    assert report["exit_code"] == 1 and report["ok"] is False
    assert report["server"]["name"] == "fake"
    assert report["revision"] == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert report["tools_listed"] is False and report["tools"] == []
    [problem] = report["problems"]
    assert (problem["severity"], problem["code"]) == ("error", "list-failed")
    assert "tools/list: the server answered with error -32603: database is down" in problem["message"]
    assert "tools/call" not in result.sent_methods()
    human = run(capsys, "check", "--", *fake("list-error", era))
    assert human.code == 1
    assert "Fake server" in human.out and "list-failed: tools/list" in human.out
    assert "FAILED (exit 1): 1 error" in human.out
    assert "lists its tools" not in human.out


class _Forgetful(JsonAnswering):
    """A 2025-11-25 server over HTTP that opens a session, then answers every tools/list
    in it 404 with the JSON-RPC error the SDKs send: a session it no longer knows."""

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        method, rid = sent.get("method"), sent.get("id")
        if method == "initialize":
            opened = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": SERVER}
            self._answer(200, {"jsonrpc": "2.0", "id": rid, "result": opened}, session="s-1")
        elif rid is None:
            self._answer(202, None)
        else:
            gone = {"code": -32001, "message": self.said}
            self._answer(404 if method == "tools/list" else 400, {"jsonrpc": "2.0", "id": rid, "error": gone})

    said: ClassVar[str] = "Session not found"


class _ForgetfulAtLength(_Forgetful):
    """``_Forgetful`` saying more than an error's message quotes (``SAID_MAX``)."""

    said: ClassVar[str] = "Session not found. " + "The session store was reset. " * 40


SERVER = {"name": "forgetful", "version": "1"}


@pytest.mark.parametrize("server", [_Forgetful, _ForgetfulAtLength])
def test_a_tools_list_refused_404_in_every_session_says_the_status(
    capsys: pytest.CaptureFixture[str], server: type[_Forgetful]
) -> None:
    # the client's "(HTTP 404 in a new session too...)" comes after the server's message: a
    # long one is cut short, not the client's words after it, which say the status (once)
    with serving(server) as base:
        result = run(capsys, "check", "--json", f"{base}/mcp")
        human = run(capsys, "check", f"{base}/mcp")
        called = run(capsys, "call", "--json", f"{base}/mcp", "echo")
    assert result.code == 1, result.err
    assert human.code == 1, human.err
    shown = " ".join(human.out.split())  # the report's rows as one text
    assert "(HTTP 404 in a new session too: the server forgets a session" in shown, human.out
    assert "must reach the one that opened it)" in shown, human.out
    assert called.code == 1, called.err
    assert called.json()["error"].endswith("must reach the one that opened it)"), called.out
    assert "(HTTP 404 in a new session too: the server forgets a session" in called.err, called.err
    report = result.json()
    assert report["server"]["name"] == "forgetful"
    [problem] = report["problems"]
    assert problem["code"] == "list-failed" and "-32001: Session not found" in problem["message"]
    assert problem["message"].count("HTTP 404") == 1, problem["message"]  # said once, not twice
    assert "(HTTP 404 in a new session too: the server forgets a session" in problem["message"]
    assert problem["message"].rstrip().endswith("must reach the one that opened it)"), problem["message"]
    assert ("…" in problem["message"]) is (server is _ForgetfulAtLength), problem["message"]


class _ForgetfulInPlainText(_Forgetful):
    """``_Forgetful`` answering its 404 in plain text, as a web framework's default does,
    not with a JSON-RPC error."""

    def _answer(self, status: int, message: dict[str, object] | None, session: str = "") -> None:
        if status == 404:
            _not_found_in_plain_text(self)
        else:
            super()._answer(status, message, session)


def _not_found_in_plain_text(handler: http.server.BaseHTTPRequestHandler) -> None:
    body = b"Not Found"
    handler.send_response(404)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
def test_a_tools_list_refused_404_in_plain_text_in_every_session_is_reported_as_the_json_one(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """The server opened a session (it speaks MCP, at this address): a 404 in plain text in
    the new session too is the server refusing the request, as with a JSON-RPC error in it
    (exit 1, for ``check`` a ``list-failed`` finding in a report naming the server), not a
    server that cannot be reached (exit 3)."""
    with serving(_ForgetfulInPlainText) as base:
        result = run(capsys, command[0], "--json", f"{base}/mcp", *command[1:])
    assert result.code == 1, result.err
    report = result.json()
    if command == ["check"]:
        assert report["server"]["name"] == "forgetful" and report["tools_listed"] is False
        [problem] = report["problems"]
        assert (problem["severity"], problem["code"]) == ("error", "list-failed")
        said = problem["message"]
    else:
        said = report["error"]
    assert said.startswith("tools/list: "), said
    assert "HTTP 404" in said and "Not Found" in said and "in a new session too" in said, said
    assert "/mcp" not in said.partition("Not Found")[2], said  # no hint to change the address


class _NoPromptsInPlainText(_ForgetfulInPlainText):
    """A 2025-11-25 server over HTTP that lists its tools and declares prompts, then answers
    ``prompts/list`` 404 in plain text (in the new session too)."""

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        method, rid = sent.get("method"), sent.get("id")
        if method == "initialize":
            declared = {"tools": {}, "prompts": {}}
            opened = {"protocolVersion": "2025-11-25", "capabilities": declared, "serverInfo": SERVER}
            self._answer(200, {"jsonrpc": "2.0", "id": rid, "result": opened}, session="s-1")
        elif rid is None:
            self._answer(202, None)
        elif method == "tools/list":
            self._answer(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})
        else:
            self._answer(404, None)


def test_a_prompts_list_refused_404_in_plain_text_is_a_warning_in_the_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving(_NoPromptsInPlainText) as base:
        result = run(capsys, "check", "--json", f"{base}/mcp")
    assert result.code == 0, result.err
    [problem] = result.json()["problems"]
    assert (problem["severity"], problem["code"]) == ("warning", "list-failed"), problem
    assert problem["message"].startswith("prompts/list failed: ") and "HTTP 404" in problem["message"]


def test_a_bare_internal_error_from_tools_list_keeps_the_end_of_the_servers_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "check", "--json", "--", *fake("list-internal"))
    assert result.code == 1, result.err
    [problem] = result.json()["problems"]
    assert problem["code"] == "list-failed"
    assert "-32603: Internal error" in problem["message"] and "The end of its stderr" in problem["message"]
    assert "the database at port 5432 refused the connection" in problem["message"]


@pytest.mark.parametrize(("revision", "can_ask"), [("2025-06-18", True), ("2025-03-26", False)])
def test_the_closing_advice_offers_an_elicitation_flow_only_where_the_revision_has_one(
    capsys: pytest.CaptureFixture[str], revision: str, can_ask: bool
) -> None:
    result = run(capsys, "check", "--", *fake("good", revision))
    assert result.code == 0, result.err
    assert ("To try an" in result.out) is can_ask
    assert (f"MCP {revision} has no elicitation" in result.out) is not can_ask
    assert "mcp-elicit call echo text=VALUE -- " in result.out


class _NoToolsList(_Forgetful):
    """A 2025-11-25 server over HTTP without sessions (no ``Mcp-Session-Id``) that answers
    ``tools/list`` HTTP 404 with the JSON-RPC ``error`` in the body; ``modern``: a
    2026-07-28 server that does the same."""

    modern = False
    error: ClassVar[dict[str, object]] = {"code": -32601, "message": "Method not found"}

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        method, rid = sent.get("method"), sent.get("id")
        if method == "server/discover" and self.modern:
            meta = {"io.modelcontextprotocol/serverInfo": SERVER}
            found = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
            }
            self._answer(200, {"jsonrpc": "2.0", "id": rid, "result": {**found, "_meta": meta}})
        elif method == "initialize":
            opened = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": SERVER}
            self._answer(200, {"jsonrpc": "2.0", "id": rid, "result": opened})
        elif rid is None:
            self._answer(202, None)
        else:
            self._answer(404, {"jsonrpc": "2.0", "id": rid, "error": self.error})


class _NoToolsListModern(_NoToolsList):
    modern = True


@pytest.mark.parametrize("era", [_NoToolsList, _NoToolsListModern], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize(
    ("code", "message"), [(-32601, "Method not found"), (-32000, "Not Found: /mcp")], ids=["-32601", "-32000"]
)
@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
def test_a_json_rpc_error_in_an_http_404_without_a_session_says_both(
    capsys: pytest.CaptureFixture[str], era: type[_NoToolsList], code: int, message: str, command: list[str]
) -> None:
    handler = type("Handler", (era,), {"error": {"code": code, "message": message}})
    with serving(handler) as base:
        result = run(capsys, command[0], "--json", f"{base}/mcp", *command[1:])
    assert result.code == 1, result.err
    report = result.json()
    said = report["problems"][0]["message"] if command == ["check"] else report["error"]
    assert f"tools/list: HTTP 404, and the server answered with error {code}: {message}" in said


class _PlainToolsList(_NoToolsList):
    """A 2025-11-25 server over HTTP (``modern``: 2026-07-28) that answers the opening
    request as MCP, then ``tools/list`` HTTP 200 in plain text (a terminal escape in it)."""

    def _answer(self, status: int, message: dict[str, object] | None, session: str = "") -> None:
        if message is None or "result" in message:
            super()._answer(status, message, session)
            return
        body = b"Service paused\x1b[2J for maintenance"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _PlainToolsListModern(_PlainToolsList):
    modern = True


class _NotFoundInPlainTextModern(_NoToolsListModern):
    """A 2026-07-28 server (no sessions) that answers ``server/discover``, then
    ``tools/list`` 404 in plain text."""

    def _answer(self, status: int, message: dict[str, object] | None, session: str = "") -> None:
        if status == 404:
            _not_found_in_plain_text(self)
        else:
            super()._answer(status, message, session)


@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
def test_a_tools_list_refused_404_in_plain_text_without_a_session_is_refused_too(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    with serving(_NotFoundInPlainTextModern) as base:
        result = run(capsys, command[0], "--json", f"{base}/mcp", *command[1:])
    assert result.code == 1, result.err
    report = result.json()
    said = report["problems"][0]["message"] if command == ["check"] else report["error"]
    assert said == "tools/list: the server answered HTTP 404 and no JSON-RPC response: Not Found", said


@pytest.mark.parametrize("era", [_PlainToolsList, _PlainToolsListModern], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
def test_plain_text_from_a_server_that_has_spoken_mcp_is_a_protocol_violation(
    capsys: pytest.CaptureFixture[str], era: type[_PlainToolsList], command: list[str]
) -> None:
    """The address is right (the server answered the opening request as MCP): a 2xx that
    is neither JSON nor an event stream is that server breaking the transport's rules, exit 4,
    not a server that cannot be reached (exit 3)."""
    with serving(era) as base:
        result = run(capsys, command[0], "--json", f"{base}/mcp", *command[1:])
    assert result.code == 4, result.err
    said = result.json()["error"]
    assert "answered while connecting, then answered tools/list with HTTP 200 in text/plain" in said, said
    assert "It began: 'Service paused\\x1b[2J for maintenance'" in said and "\x1b" not in said, said
    assert "/mcp" not in said.partition("It began")[2], said  # no hint to change the address


class _AllNotFound(_Forgetful):
    """A JSON-RPC server over HTTP that answers every POST HTTP 404 with the error
    -32601 in the body (a router that knows no such path, in JSON-RPC's words)."""

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        error = {"code": -32601, "message": self.said}
        self._answer(404, {"jsonrpc": "2.0", "id": sent.get("id"), "error": error})

    said: ClassVar[str] = "Method not found"


class _AllNotFoundSayingSo(_AllNotFound):
    """``_AllNotFound`` whose error says the status itself, as some routers write it."""

    said: ClassVar[str] = "HTTP 404: no route for POST /rpc"


@pytest.mark.parametrize("offered", [[], ["--protocol", "2025-11-25"]], ids=["any", "2025-11-25"])
@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
@pytest.mark.parametrize("server", [_AllNotFound, _AllNotFoundSayingSo])
def test_a_json_rpc_error_in_an_http_404_to_the_opening_request_says_both(
    capsys: pytest.CaptureFixture[str], offered: list[str], command: list[str], server: type[_AllNotFound]
) -> None:
    """As for a later request: the status says as much as the body (a wrong path, most
    likely), so both are said, with where MCP endpoints usually are; the status once, and
    the hint too when the error says the status itself (it lost the hint)."""
    with serving(server) as base:
        result = run(capsys, command[0], "--json", *offered, f"{base}/rpc", *command[1:])
    assert result.code == 4, result.err
    said = result.json()["error"]
    status = "" if server is _AllNotFoundSayingSo else "HTTP 404, and "
    assert f"{base}/rpc answered the opening request with {status}error -32601: {server.said}" in said, said
    assert said.count("HTTP 404") == 1, said
    assert f"try {base}/mcp" in said, said
