"""``serve --http``'s limits and waits as an operator sets them: ``--max-body``,
``--body-timeout``, ``--keepalive``, ``--verify-timeout``, ``--resume-within`` and
``--shutdown-grace``. Each shows in ``--help`` with its unit and its default (the
defaults are ``StreamableHTTP``'s), a value that cannot work is refused at start-up on one
line (exit 2), each needs ``--http``, and each changes what a real ``mcp-elicit serve
--http`` process on 127.0.0.1 does (``--resume-within``, whose effect needs a dropped
stream and its wait, through the app ``serve`` builds, in process). Every JSON-RPC message
read is checked against its revision's schema."""

from __future__ import annotations

import asyncio
import inspect
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from cli.helpers import DEMO
from mcp_elicit import Server
from mcp_elicit.cli.main import _parse, main
from mcp_elicit.cli.serve_http import SHUTDOWN_GRACE
from mcp_elicit.cli.serve_http_options import DEFAULTS, checked, http_app
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import check_error, meta, mirrored_headers, raw_request
from support.procs import free_port, http_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

#: How long a test waits for any answer before calling it a hang: well under each
#: default (30 s for a body, 15 s for a keep-alive), so only the option can make it come.
WAIT = 12.0
LIMITS = ("--max-body", "--body-timeout", "--keepalive", "--verify-timeout", "--resume-within")
OLD = "2025-11-25"

HELD_APP = """
import asyncio
from pathlib import Path

from mcp_elicit import Server

app = Server("held")


@app.tool()
async def held() -> str:
    "Wait until stopped."
    Path(__file__).with_name("started").touch()
    await asyncio.sleep(600)
    return "done"
"""

GUARDED_APP = """
import asyncio

from mcp_elicit import Principal, Server


class Hanging:
    "A token verifier whose introspection endpoint never answers."

    async def verify(self, token: str) -> Principal | None:
        await asyncio.Event().wait()
        return None


app = Server("guarded", auth=Hanging())


@app.tool()
async def hello() -> str:
    "Say hello."
    return "hello"
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def tools_list(**params: Any) -> tuple[bytes, dict[str, str]]:
    every = {"_meta": meta(), **params}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": every})
    return body, mirrored_headers("tools/list", every)


def held_call() -> tuple[bytes, dict[str, str]]:
    params = {"name": "held", "arguments": {}, "_meta": meta()}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    return body, mirrored_headers("tools/call", params)


# ---- what --help says, and what it refuses ----------------------------------------------


def test_help_gives_each_option_its_unit_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    # each option's own entry ("[--max-body BYTES]" in the usage has no space before it)
    entries = {
        option: text.split(f" {option} ", 1)[1].split(" --", 1)[0] for option in (*LIMITS, "--shutdown-grace")
    }
    assert entries["--max-body"].startswith("BYTES ") and "default 4194304, 4 MiB" in entries["--max-body"]
    for option, default in [
        ("--body-timeout", "off: no limit; default 30"),
        ("--keepalive", "off: never; default 15"),
        ("--verify-timeout", "off: no limit; default 10"),
        ("--resume-within", "default 60"),
        ("--shutdown-grace", "0: at once; default 10"),
    ]:
        assert entries[option].startswith("SECONDS ") and default in entries[option], (
            option,
            entries[option],
        )


def test_the_defaults_said_are_the_app_s_own() -> None:
    http = inspect.signature(StreamableHTTP.__init__).parameters
    assert {name: http[name].default for name in DEFAULTS} == DEFAULTS
    # and not given, the app serve builds keeps them
    options = checked(_parse(["serve", "app.py", "--http", "127.0.0.1:8000"]))
    assert options is not None and options.limits == {} and options.shutdown_grace == SHUTDOWN_GRACE
    app = http_app(Server("defaults"), options)
    assert {name: getattr(app, name) for name in DEFAULTS} == DEFAULTS


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (("--max-body", "4"), "--max-body '4': expected 1024 bytes or more: no MCP request is smaller"),
        (("--max-body", "4MiB"), "--max-body '4MiB': expected a whole number of bytes, without a suffix"),
        (("--max-body", "-2048"), "--max-body '-2048': expected a whole number of bytes, without a suffix"),
        (("--max-body", "9" * 19), "expected a number of bytes of at most 18 digits"),
        (
            ("--body-timeout", "0"),
            "--body-timeout '0': expected a number of seconds above 0, or off (no limit)",
        ),
        (("--body-timeout", "-1"), "--body-timeout '-1': expected a number of seconds above 0"),
        (("--keepalive", "nan"), "--keepalive 'nan': expected a number of seconds above 0, or off (never)"),
        (("--verify-timeout", "inf"), "--verify-timeout 'inf': expected a number of seconds above 0"),
        (("--resume-within", "off"), "--resume-within 'off': expected a number of seconds above 0"),
        (("--resume-within", "soon"), "--resume-within 'soon': expected a number of seconds above 0"),
        (("--shutdown-grace", "-1"), "--shutdown-grace '-1': expected a number of seconds, 0 or more"),
    ],
)
def test_a_value_that_cannot_work_is_refused_on_one_line(
    given: tuple[str, str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", str(DEMO), "--http", f"127.0.0.1:{free_port()}", *given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mcp-elicit: "), err
    assert said in err, err


@pytest.mark.parametrize("option", [*LIMITS, "--shutdown-grace"])
def test_each_needs_http(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    value = "4096" if option == "--max-body" else "5"
    assert main(["serve", str(DEMO), option, value]) == 2
    err = capsys.readouterr().err
    assert f"mcp-elicit: {option} " in err and "it needs --http" in err, err


def test_a_verify_timeout_for_a_server_without_a_verifier_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["serve", str(DEMO), "--http", f"127.0.0.1:{free_port()}", "--verify-timeout", "5"]
    assert main([*argv, "--store", "memory://"]) == 2
    err = capsys.readouterr().err
    assert "--verify-timeout bounds the token verifier's answer, and server 'bookings' has none" in err, err


def test_the_options_given_reach_the_app() -> None:
    limits = ["--max-body", "65536", "--body-timeout", "off", "--keepalive", "2.5", "--verify-timeout", "off"]
    waits = ["--resume-within", "7", "--shutdown-grace", "0"]
    args = _parse(["serve", "app.py", "--http", "127.0.0.1:8000", *limits, *waits])
    options = checked(args)
    assert options is not None and options.shutdown_grace == 0.0
    app = http_app(Server("limited", auth=_Never()), options)
    assert (app.max_body, app.body_timeout, app.keepalive, app.verify_timeout, app.resume_within) == (
        65536,
        None,
        2.5,
        None,
        7.0,
    )


class _Never:
    async def verify(self, token: str) -> None:
        return None


# ---- what each changes in a real process -------------------------------------------------


async def test_max_body_refuses_a_larger_body_with_413(tmp_path: Path, wire: WireChecker) -> None:
    with http_process(DEMO, log_dir=tmp_path, args=("--store", "memory://", "--max-body", "2048")) as served:
        async with httpx.AsyncClient(timeout=WAIT) as http:
            body, headers = tools_list(cursor="x" * 2100)
            big = await http.post(served.url, content=body, headers=headers)
            body, headers = tools_list()
            small = await http.post(served.url, content=body, headers=headers)
    assert big.status_code == 413, big.text
    message = big.json()
    assert message["error"] == {"code": -32600, "message": "Request body too large (limit 2048 bytes)"}
    check_error(wire, message)
    assert small.status_code == 200, small.text
    wire.response("tools/list", small.json())


async def test_body_timeout_cuts_a_slow_body(tmp_path: Path, wire: WireChecker) -> None:
    body, headers = tools_list()
    with http_process(
        DEMO, log_dir=tmp_path, args=("--store", "memory://", "--body-timeout", "0.5")
    ) as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        try:
            writer.write(raw_request(served.port, body[:10], headers, length=len(body)))  # and no more
            await writer.drain()
            async with asyncio.timeout(WAIT):  # the default, 30 s, would not answer in time
                head = await reader.readuntil(b"\r\n\r\n")
                rest = await reader.read()  # to its end: the server closes the connection
        finally:
            writer.close()
            await writer.wait_closed()
    assert head.startswith(b"HTTP/1.1 408 "), head
    message = orjson.loads(rest)
    assert message["error"] == {
        "code": -32600,
        "message": "Request body not received within 0.5 s: send it again, at once",
    }
    check_error(wire, message)


async def test_keepalive_comments_a_silent_response(tmp_path: Path) -> None:
    app = written(tmp_path, "held_app.py", HELD_APP)
    body, headers = held_call()
    with http_process(app, log_dir=tmp_path, args=("--keepalive", "0.2")) as served:
        async with (
            httpx.AsyncClient(timeout=WAIT) as http,
            http.stream("POST", served.url, content=body, headers=headers) as response,
        ):
            async with asyncio.timeout(WAIT):  # the default, 15 s, would not comment in time
                first = await anext(response.aiter_raw())
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert first.startswith(b":\n\n"), first  # an SSE comment, before any event


async def test_verify_timeout_bounds_a_verifier_that_hangs(tmp_path: Path) -> None:
    app = written(tmp_path, "guarded_app.py", GUARDED_APP)
    body, headers = tools_list()
    args = ("--store", "memory://", "--verify-timeout", "0.3")
    with http_process(app, log_dir=tmp_path, args=args) as served:
        async with httpx.AsyncClient(timeout=WAIT) as http:  # the default, 10 s, would answer in time too
            refused = await http.post(
                served.url, content=body, headers={**headers, "authorization": "Bearer abc"}
            )
        log = served.stderr()
    assert refused.status_code == 503, refused.text
    assert "retry-after" in refused.headers
    assert "the token verifier did not answer within 0.3 s, the request is refused" in log, log


def test_shutdown_grace_is_how_long_a_stop_waits(tmp_path: Path) -> None:
    app = written(tmp_path, "held_app.py", HELD_APP)
    body, headers = held_call()
    answers: list[httpx.Response] = []
    with http_process(app, log_dir=tmp_path, args=("--shutdown-grace", "0.2")) as served:

        def call() -> None:
            answers.append(httpx.post(served.url, content=body, headers=headers, timeout=60))

        caller = threading.Thread(target=call)
        caller.start()
        deadline = time.monotonic() + 30
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "started").exists(), served.stderr()
        served.proc.send_signal(signal.SIGTERM)
        try:
            # the default grace, 10 s, would also end within this: the log says which applied
            assert served.proc.wait(30) == 0, served.stderr()
        except subprocess.TimeoutExpired:
            raise AssertionError(f"not stopped: {served.stderr()}") from None
        caller.join(30)
        log = served.stderr()
    assert "waiting up to 0.2 s for 1 running request" in log, log
    assert "the 0.2 s grace is over: 1 request still running is cut short" in log, log
    assert [answer.status_code for answer in answers] == [503]
    assert (
        answers[0].json()["error"]["message"].startswith("Service unavailable: the server is shutting down")
    )


SCOPED_APP = """
from mcp_elicit import Server

app = Server("scoped")


@app.tool(scopes=["admin"])
async def wipe() -> str:
    "Wipe everything."
    return "wiped"
"""


def test_a_server_that_cannot_be_served_over_http_is_said_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a tool that needs scopes, and no auth= to verify tokens: a configuration error, exit 2,
    # said as every other one is (it was a traceback)
    app = written(tmp_path, "scoped_app.py", SCOPED_APP)
    assert main(["serve", str(app), "--http", f"127.0.0.1:{free_port()}", "--store", "memory://"]) == 2
    err = capsys.readouterr().err
    assert (
        "mcp-elicit: cannot serve: tool 'wipe' needs scopes: serving it over HTTP needs auth= to verify tokens"
    ) in err, err
    assert "Traceback" not in err
