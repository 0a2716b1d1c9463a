"""A public transport's constructor given a wrong argument refuses it at once, saying what
the option takes: ``StdioTransport(3)`` said Python's own "'int' object is not iterable",
``StreamableHTTP(3)`` "'int' object has no attribute 'sessions'", and others took a wrong
value without a word, to fail when the process or the connection started, or never. An
error about a mapping names the key, never its value (an environment's token)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import StaticTokens
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.memory import MemoryTransport
from mcp_elicit.transports.stdio_client import StdioTransport

CMD = [sys.executable, "-c", "pass"]
URL = "http://127.0.0.1:9/mcp"

REFUSED: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    (
        "stdio 3",
        lambda: StdioTransport(3),
        TypeError,
        "the server command is a list of strings (['python', 'server.py']), not 3",
    ),  # type: ignore[arg-type]
    (
        "stdio None",
        lambda: StdioTransport(None),
        TypeError,
        "a list of strings (['python', 'server.py']), not None",
    ),  # type: ignore[arg-type]
    (
        "stdio env",
        lambda: StdioTransport(CMD, env=3),
        TypeError,
        "env takes a mapping of variable names to strings ({'PATH': '/usr/bin'}), or None, not int",
    ),  # type: ignore[arg-type]
    (
        "stdio env value",
        lambda: StdioTransport(CMD, env={"TOKEN": 12345}),
        TypeError,
        "env['TOKEN'] is int; each value is a string",
    ),  # type: ignore[dict-item]
    (
        "stdio env name",
        lambda: StdioTransport(CMD, env={1: "x"}),
        TypeError,
        "env: the name 1 is int, not a string",
    ),  # type: ignore[dict-item]
    (
        "stdio cwd",
        lambda: StdioTransport(CMD, cwd=3),
        TypeError,
        "cwd takes a directory as a string or a pathlib.Path, or None, not int",
    ),  # type: ignore[arg-type]
    (
        "stdio stderr",
        lambda: StdioTransport(CMD, stderr="quiet"),
        ConfigError,
        "stderr 'quiet': expected 'capture' (kept for errors) or 'inherit'",
    ),  # type: ignore[arg-type]
    (
        "stdio max_line type",
        lambda: StdioTransport(CMD, max_line="1M"),
        TypeError,
        "max_line takes a whole number of bytes, at least 1, not str",
    ),  # type: ignore[arg-type]
    (
        "stdio max_line 0",
        lambda: StdioTransport(CMD, max_line=0),
        ConfigError,
        "max_line 0: expected a whole number of bytes, at least 1",
    ),
    (
        "stdio stop_timeout",
        lambda: StdioTransport(CMD, stop_timeout=-1),
        ConfigError,
        "stop_timeout -1: expected a finite number of seconds, above 0",
    ),
    (
        "stdio trace",
        lambda: StdioTransport(CMD, trace="yes"),
        TypeError,
        "trace takes a function trace(direction, message), or None, not str",
    ),  # type: ignore[arg-type]
    (
        "http headers",
        lambda: HttpTransport(URL, headers=3),
        TypeError,
        "headers takes a mapping of header names to values ({'X-Team': 'blue'}), or None, not int",
    ),  # type: ignore[arg-type]
    (
        "http client",
        lambda: HttpTransport(URL, client=3),
        TypeError,
        "client takes an httpx.AsyncClient, or None, not int",
    ),  # type: ignore[arg-type]
    (
        "http auth",
        lambda: HttpTransport(URL, auth="Bearer x"),
        TypeError,
        "auth takes an httpx.Auth (OAuth(...), httpx.BasicAuth(...)), a function auth(request) -> request, "
        "a (user, password) pair, or None, not str",
    ),  # type: ignore[arg-type]
    (
        "http connect_timeout",
        lambda: HttpTransport(URL, connect_timeout="10"),
        ConfigError,
        "connect_timeout '10': expected a finite number of seconds, above 0",
    ),  # type: ignore[arg-type]
    (
        "http trace",
        lambda: HttpTransport(URL, trace=3),
        TypeError,
        "trace takes a function trace(direction, message), or None, not int",
    ),  # type: ignore[arg-type]
    (
        "memory 3",
        lambda: MemoryTransport(3),
        TypeError,
        "server takes the Server to connect to in this process (Server('name')), not int",
    ),  # type: ignore[arg-type]
    (
        "asgi 3",
        lambda: StreamableHTTP(3),
        TypeError,
        "server takes the Server to serve (Server('name')), not int",
    ),  # type: ignore[arg-type]
    (
        "asgi path",
        lambda: StreamableHTTP(Server("s"), path=3),
        TypeError,
        "path takes the endpoint's path as a string ('/mcp'), not int",
    ),  # type: ignore[arg-type]
    (
        "asgi auth",
        lambda: StreamableHTTP(Server("s"), auth="secret"),
        TypeError,
        "auth takes a token verifier (an object with async verify(token), such as StaticTokens), not str",
    ),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("made", "error", "said"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED]
)
def test_a_wrong_argument_is_refused_saying_what_it_takes(
    made: Callable[[], object], error: type[Exception], said: str
) -> None:
    with pytest.raises(error) as refused:
        made()
    assert said in str(refused.value)
    assert "12345" not in str(refused.value)  # an environment's value is never shown


def test_the_arguments_they_take_still_go() -> None:
    stdio = StdioTransport(
        (sys.executable, "-c", "pass"),
        env={"A": "b"},
        cwd=Path("."),
        stderr="inherit",
        max_line=1,
        stop_timeout=1,
    )
    assert stdio.command == CMD and stdio.env == {"A": "b"} and stdio.stop_timeout == 1.0
    with pytest.raises(ValueError, match="the server command is empty"):
        StdioTransport("")
    with pytest.raises(TypeError, match=r"not 'python server\.py'; split a command line with shlex\.split"):
        StdioTransport("python server.py")
    assert (
        HttpTransport(
            URL, headers={"X-Team": "blue"}, client=httpx.AsyncClient(), connect_timeout=3
        ).connect_timeout
        == 3
    )
    assert MemoryTransport(Server("s")).server.name == "s"
    assert StreamableHTTP(Server("s"), path="/", auth=StaticTokens({})).path == "/"
