"""How a server's log line names a request: what the client sent is cut and inert, a
resource's URI keeps no key, and a session is named by a prefix only."""

from __future__ import annotations

from mcp_elicit.server.log_labels import request_label, request_where


def test_a_tool_call_in_a_session() -> None:
    label = request_label("tools/call", {"name": "book"}, 7, "3f9c0a1e55aa77bb99cc")
    assert label == "tools/call 'book' (request 7, session 3f9c0a1e)"
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
