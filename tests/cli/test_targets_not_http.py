"""A TARGET that is meant as a server's address but is not an http(s):// URL (the scheme
left out, mistyped, or another protocol's) is a usage error that gives the URL to type,
never a hint to run the address as a stdio command."""

from __future__ import annotations

import pytest

from cli.helpers import run


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["check", "127.0.0.1:8000/mcp"], "http://127.0.0.1:8000/mcp"),
        (["check", "localhost:8000"], "http://localhost:8000"),
        (["check", "[::1]:8000/mcp"], "http://[::1]:8000/mcp"),
        (["call", "mcp.example.com:443/mcp", "book_table"], "https://mcp.example.com:443/mcp"),
        (["check", "htp://127.0.0.1:8000/mcp"], "http://127.0.0.1:8000/mcp"),
        (["check", "hhtps://mcp.example.com/mcp"], "https://mcp.example.com/mcp"),
        (["call", "ws://localhost:8000/mcp", "book_table"], "http://localhost:8000/mcp"),
        (["check", "wss://mcp.example.com/mcp"], "https://mcp.example.com/mcp"),
        # port 443 is TLS: a WebSocket or mistyped scheme on it means https
        (["check", "ws://mcp.example.com:443/mcp"], "https://mcp.example.com:443/mcp"),
        (["check", "WS://[2001:db8::1]:443/mcp"], "https://[2001:db8::1]:443/mcp"),
        (["check", "htp://mcp.example.com:443/mcp"], "https://mcp.example.com:443/mcp"),
        (["check", "wss://mcp.example.com:8443/mcp"], "https://mcp.example.com:8443/mcp"),
        (["check", "ws://localhost:4430/mcp"], "http://localhost:4430/mcp"),
        # the colon left out (http:/HOST is told it names no host)
        (["call", "http//localhost:8000/mcp", "book_table"], "http://localhost:8000/mcp"),
        (["check", "https//mcp.example.com/mcp"], "https://mcp.example.com/mcp"),
        (["check", "http//localhost:443/mcp"], "http://localhost:443/mcp"),  # http as typed
    ],
)
def test_an_address_without_http_gives_the_url_to_type(
    capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    done = run(capsys, *argv)
    assert done.code == 2
    assert "is not an http(s):// URL" in done.err
    assert f"give it as {meant}" in done.err
    assert "put its command after --" not in done.err, done.err


@pytest.mark.parametrize("word", ["mcp-elicit", "./server", "node", "ftp://example.com"])
def test_a_command_still_gets_the_hint_to_put_it_after_the_dashes(
    capsys: pytest.CaptureFixture[str], word: str
) -> None:
    done = run(capsys, "check", word)
    assert done.code == 2
    assert f"mcp-elicit check -- {word} ..." in done.err


def test_an_address_with_a_port_out_of_range_is_not_given_a_url_that_fails_the_same_way(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run(capsys, "check", "localhost:99999")
    assert done.code == 2
    assert "give it as http://localhost:99999" not in done.err, done.err
    assert "Port out of range 0-65535" in done.err, done.err


@pytest.mark.parametrize(
    ("argv", "url_first", "command_last"),
    [
        (
            ["call", "book_table", "restaurant=noma"],
            "mcp-elicit call http://127.0.0.1:8000/mcp book_table ...",
            "mcp-elicit call book_table ... -- mcp-elicit serve app.py",
        ),
        (
            ["call", "book_table"],
            "mcp-elicit call http://127.0.0.1:8000/mcp book_table,",
            "mcp-elicit call book_table -- mcp-elicit serve app.py",
        ),
        (
            ["prompt", "plan_evening", 'city:="Oslo"'],
            "mcp-elicit prompt http://127.0.0.1:8000/mcp plan_evening ...",
            "mcp-elicit prompt plan_evening ... -- mcp-elicit serve app.py",
        ),
        (
            ["read", "bookings://menu/noma"],
            "mcp-elicit read http://127.0.0.1:8000/mcp bookings://menu/noma,",
            "mcp-elicit read bookings://menu/noma -- mcp-elicit serve app.py",
        ),
    ],
)
def test_a_tool_given_without_its_server_is_told_where_the_server_goes(
    capsys: pytest.CaptureFixture[str], argv: list[str], url_first: str, command_last: str
) -> None:
    """The first word is what to ask for, not a command: the hint shows the server given
    first as a URL or last after --, never the tool run as a server."""
    done = run(capsys, *argv)
    assert done.code == 2
    assert f"no server given ({argv[1]!r} is not an http(s):// URL, and nothing follows --)" in done.err
    assert url_first in done.err and command_last in done.err, done.err
    assert f"-- {argv[1]} ..." not in done.err, done.err


def test_a_command_given_without_its_dashes_still_gets_the_hint_to_add_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run(capsys, "call", "node", "server.js", "book_table")
    assert done.code == 2
    assert "mcp-elicit call TOOL ... -- node ..." in done.err, done.err
    assert "no server given" not in done.err


def test_a_uri_given_without_its_server_is_shown_without_its_password_or_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The word taken for what is asked is shown three times: as any URL is, redacted."""
    done = run(capsys, "read", "s3://me:SECRET@bucket/key?sig=TOKEN")
    assert done.code == 2
    assert "no server given ('s3://REDACTED:REDACTED@bucket/key?REDACTED' is not" in done.err, done.err
    assert "SECRET" not in done.err and "TOKEN" not in done.err, done.err
