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


@pytest.mark.parametrize(
    "word", ["mcp-elicit", "./server", "node", "ftp://example.com", "me@host/mcp", "git@example.com:org/repo"]
)
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


@pytest.mark.parametrize(
    ("argv", "typed", "meant", "hidden"),
    [
        (
            ["check", "htps://me:SECRET@mcp.example.com/mcp"],
            "htps://REDACTED:REDACTED@mcp.example.com/mcp",
            "https://REDACTED:REDACTED@mcp.example.com/mcp",
            "its user name and password",
        ),
        (
            ["check", "ws://u:SECRET@localhost:443"],
            "ws://REDACTED:REDACTED@localhost:443",
            "https://REDACTED:REDACTED@localhost:443",
            "its user name and password",
        ),
        (
            ["check", "localhost:8000/mcp?token=SECRET"],
            "localhost:8000/mcp?REDACTED",
            "http://localhost:8000/mcp?REDACTED",
            "its query",
        ),
        # the scheme left out before a user name and password: with a port or without
        (
            ["check", "me:SECRET@localhost:8000/mcp"],
            "REDACTED:REDACTED@localhost:8000/mcp",
            "http://REDACTED:REDACTED@localhost:8000/mcp",
            "its user name and password",
        ),
        (
            ["call", "me:SECRET@mcp.example.com/mcp", "book_table"],
            "REDACTED:REDACTED@mcp.example.com/mcp",
            "http://REDACTED:REDACTED@mcp.example.com/mcp",
            "its user name and password",
        ),
        (
            ["call", "http//me:SECRET@localhost:8000/mcp?k=SECRET", "book_table"],
            "http//REDACTED:REDACTED@localhost:8000/mcp?REDACTED",
            "http://REDACTED:REDACTED@localhost:8000/mcp?REDACTED",
            "its user name and password and its query",
        ),
    ],
)
def test_an_address_with_a_password_or_key_is_given_back_redacted(
    capsys: pytest.CaptureFixture[str], argv: list[str], typed: str, meant: str, hidden: str
) -> None:
    """The address as typed and the URL to type instead both hide the same parts, and the
    message says which, to be written out as given (a redirect's hint does the same)."""
    done = run(capsys, *argv)
    assert done.code == 2
    assert f"{typed!r} is not an http(s):// URL; give it as {meant}" in done.err, done.err
    assert f"(REDACTED hides {hidden}: write it out as you gave it)" in done.err, done.err
    assert "SECRET" not in done.out + done.err


@pytest.mark.parametrize(
    ("word", "shown"),
    [
        (
            "htps://me:SECRET@localhost:99999/mcp",
            "'htps://REDACTED:REDACTED@localhost:99999/mcp' is not a valid",
        ),
        ("localhost:99999/mcp?token=SECRET", "'localhost:99999/mcp?REDACTED' is not a valid address"),
    ],
)
def test_an_address_with_a_bad_port_and_a_key_is_quoted_redacted(
    capsys: pytest.CaptureFixture[str], word: str, shown: str
) -> None:
    done = run(capsys, "check", word)
    assert done.code == 2
    assert shown in done.err, done.err
    assert "Port out of range 0-65535" in done.err, done.err
    assert "SECRET" not in done.err


@pytest.mark.parametrize(
    ("word", "shown"),
    [
        ("ftp://me:SECRET@example.com/x", "ftp://REDACTED:REDACTED@example.com/x"),
        ("s3://me:SECRET@bucket/app.py", "s3://REDACTED:REDACTED@bucket/app.py"),  # the .py hint
        ("./server?token=SECRET", "./server?REDACTED"),
        ("me:SECRET@host/app.py", "REDACTED:REDACTED@host/app.py"),  # the .py hint
    ],
)
def test_a_word_that_is_no_url_is_quoted_and_suggested_redacted(
    capsys: pytest.CaptureFixture[str], word: str, shown: str
) -> None:
    done = run(capsys, "check", word)
    assert done.code == 2
    assert f"{shown!r} is not an http(s):// URL" in done.err, done.err
    assert "SECRET" not in done.err


def test_a_url_given_with_a_command_too_is_quoted_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "check", "https://me:SECRET@h.example/mcp?k=SECRET", "--", "node", "server.js")
    assert done.code == 2
    assert "not both ('https://REDACTED:REDACTED@h.example/mcp?REDACTED' and a command)" in done.err, done.err
    assert "SECRET" not in done.err
