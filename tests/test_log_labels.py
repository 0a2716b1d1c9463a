"""How a log line names a request, on either side: what the peer sent is cut and inert, a
resource's URI keeps no key, a session is named by the start of its spans' digest, an
error answered is said in one inert line; and a span's ``jsonrpc.request.id`` is cut."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.errors import InvalidRequest, MethodNotFound, ParseError, ResourceNotFound
from mcp_elicit.log_labels import (
    log_answered_error,
    log_stray_response,
    log_unreadable,
    message_label,
    peer_text,
    request_label,
    request_where,
)
from mcp_elicit.telemetry_attributes import request_id_shown, session_shown
from mcp_elicit.wire import jsonrpc


def test_a_tool_call_in_a_session() -> None:
    sid = "3f9c0a1e55aa77bb99cc"
    label = request_label("tools/call", {"name": "book"}, 7, sid)
    assert label == f"tools/call 'book' (request 7, session {session_shown(sid)[:8]})"
    assert request_where("7") == "request '7'"  # not the request 7


def test_a_resources_uri_keeps_no_key() -> None:
    uri = "https://ada:pw@files.example/report.pdf?sig=ONE-TIME-KEY#page=2"
    label = request_label("resources/read", {"uri": uri}, 1)
    assert label == "resources/read 'https://REDACTED:REDACTED@files.example/report.pdf?REDACTED' (request 1)"


def test_what_the_client_sent_is_cut_and_inert() -> None:
    label = request_label("tools/call", {"name": "x" * 10_000}, "i" * 10_000)
    assert len(label) < 300 and label.endswith("…)")
    odd = request_label("made/up\n2026-01-01 ERROR forged line", {"name": 5}, 1)
    assert "\n" not in odd and odd.startswith("'made/up\\n") and odd.endswith("(request 1)")


def test_a_peers_message_and_text_are_cut_and_inert() -> None:
    method = "evil\r\nFAKE LINE \x1b[31m\u202e"
    asked = jsonrpc.Request(id="7" * 20_000, method=method, params={})
    assert message_label(asked).startswith("'evil\\r\\nFAKE LINE \\x1b[31m\\u202e' (request '777")
    assert len(message_label(asked)) < 300
    assert message_label(jsonrpc.Notification(method=method, params=None)).startswith("'evil\\r")
    assert message_label(jsonrpc.Response(id=3, result={})) == "the answer to request 3"
    said = peer_text("boom\nFAKE LINE https://a.example/cb?token=SECRET " + "x" * 10_000)
    assert said.startswith("boom\\nFAKE LINE https://a.example/cb?REDACTED x") and said.endswith("x…")
    assert len(said) < 600


def test_a_url_cut_inside_its_password_keeps_none_of_it() -> None:
    """The cut comes after the redaction: cut first, the "@" that marks the password as
    one is past the cut, and what is left of the password reads as a host."""
    said = peer_text("failed: https://me:" + "S" * 600 + "@h.example/")
    assert "S" not in said and said.startswith("failed: https://REDACTED:REDACTED@h.example/")
    said = peer_text("x" * 480 + " https://me:" + "S" * 100 + "@h.example/")
    assert "S" not in said and said.endswith(" https://REDACTED:RE…")


def test_a_spans_request_id_is_its_string_form_cut() -> None:
    """As the semantic conventions have it (``10``, ``request-7``), the same for an id of
    either side; past 128 characters, cut."""
    assert request_id_shown(10) == "10" and request_id_shown("request-7") == "request-7"
    assert request_id_shown("x" * 128) == "x" * 128
    assert request_id_shown("x" * 20_000) == "x" * 128 + "…"


def test_a_session_is_named_by_its_digest_not_its_routes_prefix() -> None:
    """An instance's route prefix starts every session id it makes: the id's first
    characters would name all of them alike (and show part of the id)."""
    ids = ["node-east-1." + "A" * 32, "node-east-1." + "B" * 32]
    wheres = [request_where(1, sid) for sid in ids]
    assert wheres[0] != wheres[1]
    for where, sid in zip(wheres, ids, strict=True):
        assert where == f"request 1, session {session_shown(sid)[:8]}"  # as its spans begin
        assert "node-eas" not in where


@pytest.fixture
def debug_log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    log = logging.getLogger("test_log_labels.answered")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    yield log, out
    log.removeHandler(handler)


def test_an_answered_errors_message_is_one_inert_line(debug_log: tuple[logging.Logger, io.StringIO]) -> None:
    """-32601 quotes the method as sent (over stdio no header checks it first): its line
    break, escape, bidirectional override and NUL are written as escapes."""
    log, out = debug_log
    method = "made/up\r\n2026-01-01 ERROR forged line\x1b[31m\u202e\x00"
    log_answered_error(log, method, {}, 1, MethodNotFound(f"Method not found: {method}"))
    written = out.getvalue()
    assert written.count("\n") == 1 and written.endswith("\n"), written
    assert not [c for c in written[:-1] if not c.isprintable()], written
    assert "Method not found: made/up\\r\\n2026-01-01 ERROR forged line\\x1b[31m\\u202e\\x00" in written


@pytest.mark.parametrize(
    "uri",
    ["urn:report?token=SECRET", "db:t/x?token=SECRET" + "x" * 300, "s3:b/k#SECRET\n"],
)
def test_an_answered_errors_repetition_of_the_resource_uri_keeps_no_key(
    debug_log: tuple[logging.Logger, io.StringIO], uri: str
) -> None:
    """-32602 "Resource not found: URI" repeats what the client asked for; a URI with no
    "://" is no URL to find in prose, so the line redacts the request's URI wherever the
    message repeats it (whole, inert, or cut short), as the span's status does."""
    log, out = debug_log
    log_answered_error(log, "resources/read", {"uri": uri}, 1, ResourceNotFound(uri))
    written = out.getvalue()
    assert "SECRET" not in written, written
    assert "Resource not found: " in written and "REDACTED" in written


def test_an_answered_error_is_not_built_above_debug(debug_log: tuple[logging.Logger, io.StringIO]) -> None:
    log, out = debug_log
    log.setLevel(logging.INFO)

    class Unreadable(dict[str, object]):
        def get(self, *args: object) -> object:
            raise AssertionError("the label was built for a line not written")

    log_answered_error(log, "tools/call", Unreadable(), 1, MethodNotFound("Method not found: x"))
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https:/a.example/approve?token=SECRET", "https:/a.example/approve?REDACTED"),
        ("HTTPS:a.example/approve#token=SECRET", "HTTPS:a.example/approve#REDACTED"),
        ("hTTp:/u:SECRET@a.example/", "hTTp:/REDACTED:REDACTED@a.example/"),
        ("HTTPS://u:SECRET@[::1]:8/x?token=SECRET", "HTTPS://REDACTED:REDACTED@[::1]:8/x?REDACTED"),
    ],
)
def test_a_url_written_oddly_keeps_no_key(url: str, shown: str) -> None:
    """A browser opens ``https:/host/?key`` as ``https://host/?key``, and so does the
    client, once the person consents (warned as odd syntax, not refused): a line that
    repeats such a page's URL keeps its key out as it does for one written as usual."""
    if "@" not in url:  # (user-info is refused, but a message may still quote it)
        assert not judge_url(url).refused, judge_url(url).codes
    assert peer_text(f"open {url} now") == f"open {shown} now"


def test_an_unreadable_message_is_named_by_its_size_and_code_never_quoted(
    debug_log: tuple[logging.Logger, io.StringIO],
) -> None:
    log, out = debug_log
    body = b'{"token": "SECRET\r\nERROR forged'
    try:
        jsonrpc.decode(body)
    except ParseError as exc:
        log_unreadable(log, "stdio", exc, len(body), "3f9c0a1e55aa77bb99cc")
    log_unreadable(log, "HTTP", InvalidRequest("Invalid request: SECRET"), 2)
    first, second = out.getvalue().splitlines()
    where = f"stdio, session {session_shown('3f9c0a1e55aa77bb99cc')[:8]}"
    assert (
        first == f"{where}: a message of {len(body)} bytes the server cannot read; answered with error -32700"
    )
    assert second == "HTTP: a message of 2 bytes the server cannot read; answered with error -32600"
    assert "SECRET" not in out.getvalue()


def test_a_stray_response_is_named_by_its_request_cut_and_inert(
    debug_log: tuple[logging.Logger, io.StringIO],
) -> None:
    log, out = debug_log
    rid = "r\r\nERROR forged\x1b[2K" + "r" * 20_000
    log_stray_response(log, "HTTP", jsonrpc.Response(rid, {"token": "SECRET"}), "3f9c0a1e55aa77bb99cc")
    log_stray_response(log, "stdio", jsonrpc.ErrorResponse(None, {"code": 1, "message": "SECRET"}))
    written = out.getvalue()
    first, second = written.splitlines()
    assert first.startswith(
        f"HTTP, session {session_shown('3f9c0a1e55aa77bb99cc')[:8]}: a response to request "
    )
    assert first.endswith("…, which no question of the server's waits for; dropped") and len(first) < 300
    assert "\\r\\nERROR forged\\x1b[2K" in first
    assert (
        second
        == "stdio: an error response to request None, which no question of the server's waits for; dropped"
    )
    assert "SECRET" not in written
    assert written.count("\n") == 2 and not [c for c in written.replace("\n", "") if not c.isprintable()]


def test_neither_line_is_built_above_debug(debug_log: tuple[logging.Logger, io.StringIO]) -> None:
    log, out = debug_log
    log.setLevel(logging.INFO)

    class Unshown:
        def __repr__(self) -> str:
            raise AssertionError("the line was built though not written")

    class Unsized(InvalidRequest):
        @property  # type: ignore[misc]
        def code(self) -> int:
            raise AssertionError("the line was built though not written")

    log_stray_response(log, "stdio", jsonrpc.ErrorResponse(Unshown(), {}), "s")  # type: ignore[arg-type]
    log_unreadable(log, "stdio", Unsized("x"), 1, "s")
    assert out.getvalue() == ""
