"""The request-header helpers of the Streamable HTTP server, without a server."""

from __future__ import annotations

from mcp_elicit.errors import InvalidRequest
from mcp_elicit.transports.http_exchange import acceptable, repeated_headers
from tests.support.deadline import within


def test_repeated_accept_lines_are_joined_into_one_list() -> None:
    raw = [(b"Accept", b"application/json"), (b"host", b"h"), (b"accept", b"text/event-stream;q=0.5")]
    headers = {"accept": "text/event-stream;q=0.5", "host": "h"}
    assert repeated_headers(raw, headers) is None
    assert headers["accept"] == "application/json, text/event-stream;q=0.5"
    assert acceptable(headers["accept"]) == (True, True)


def test_a_single_value_header_sent_twice_differently_is_refused() -> None:
    raw = [(b"accept", b"a/b"), (b"accept", b"c/d"), (b"origin", b"http://a"), (b"origin", b"http://b")]
    problem = repeated_headers(raw, {"accept": "c/d", "origin": "http://b"})
    assert isinstance(problem, InvalidRequest)
    assert "Origin header is sent more than once" in str(problem)


def test_a_million_accept_lines_are_joined_in_linear_time() -> None:
    # uvicorn (httptools) hands the app every header line, megabytes of them: joining
    # each Accept line onto the list so far copied the list each time (quadratic).
    lines = 1_000_000
    raw = [(b"accept", b"image/png")] * (lines - 1) + [(b"accept", b"application/json")]
    headers = {"accept": "application/json"}
    with within(60, "joining a million Accept lines"):
        assert repeated_headers(raw, headers) is None
        assert acceptable(headers["accept"]) == (True, False)
    assert headers["accept"].count(", ") == lines - 1
    assert headers["accept"].startswith("image/png, image/png")
    assert headers["accept"].endswith(", application/json")
