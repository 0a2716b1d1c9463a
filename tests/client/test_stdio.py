"""The client over stdio with real server processes: the demo server at both revisions, a
legacy server that ignores the probe, a server that dies, and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client, Scripted
from mcp_elicit.errors import ProtocolViolation, RequestTimeout, TransportError
from mcp_elicit.transports.stdio_client import StdioTransport, connect_stdio
from mcp_elicit.wire.jsonrpc import Notification

from support.procs import ROOT, cli
from support.waiting import HOURS, hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

DEMO = ROOT / "examples" / "demo_server.py"
TOMORROW = (dt.date.today() + dt.timedelta(days=1)).isoformat()
BOOKING = [
    {"fields": ["party_size", "date"], "content": {"party_size": 3, "date": TOMORROW, "seating": "terrace"}},
    {"fields": ["confirm"], "action": "accept"},
]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_the_demo_server_books_a_table_over_stdio(revision: str) -> None:
    recorder = Recorder()
    answers = Scripted.from_script(BOOKING)
    async with connect_stdio(
        [*cli(), "serve", str(DEMO)], answerer=answers, versions=[revision], cwd=str(ROOT), trace=recorder
    ) as client:
        assert client.revision == revision
        assert client.server_info.name == "bookings"
        assert "stdio" not in client.server_info.where and "serve" in client.server_info.where
        tools = await client.list_tools()
        assert "book_table" in [t["name"] for t in tools]
        out = await client.call_tool("book_table", {"restaurant": "noma"})
        text = out["content"][0]["text"]
        assert text.startswith("Booked #")
        assert "3 people" in text
        assert "terrace" in text
        pid = client.transport.pid  # type: ignore[attr-defined]
    assert answers.reports == []
    assert recorder.check(WireChecker.load(revision)) > 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_the_era_is_probed_and_found_modern_over_stdio() -> None:
    recorder = Recorder()
    async with connect_stdio([*cli(), "serve", str(DEMO)], cwd=str(ROOT), trace=recorder) as client:
        assert client.revision == "2026-07-28"
    assert recorder.methods() == ["server/discover"]


LEGACY = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "legacy", "version": "0"}}
        elif msg.get("method") == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        else:
            continue  # no answer to anything else before or after initialize, like some old servers
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


async def test_a_legacy_server_that_ignores_the_probe_gets_initialize_after_the_timeout(
    tmp_path: Path,
) -> None:
    script = tmp_path / "legacy.py"
    script.write_text(LEGACY)
    loop = asyncio.get_running_loop()
    start = loop.time()
    async with connect_stdio([sys.executable, str(script)], probe_timeout=0.5) as client:
        assert loop.time() - start >= 0.5
        assert client.revision == "2025-06-18"
        assert [t["name"] for t in await client.list_tools()] == ["echo"]


RED = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {},
                      "serverInfo": {"name": "\\x1b[31mred", "version": "1\\x1b[0m"}}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


async def test_the_servers_name_and_command_reach_the_log_escaped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "red.py"
    script.write_text(RED)
    caplog.set_level(logging.INFO, logger="mcp_elicit.client")
    async with connect_stdio([sys.executable, str(script), "\x1b[31m"], versions=["2025-11-25"]) as client:
        assert client.server_info.name == "\x1b[31mred"  # the value itself stays as sent
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("connected to ")]
    assert len(logged) == 1
    assert "\x1b" not in logged[0]
    assert logged[0].startswith(r"connected to \x1b[31mred 1\x1b[0m (")
    assert logged[0].endswith(r" '\x1b[31m') at MCP 2025-11-25")


async def test_a_servers_name_with_an_ideographic_space_reaches_the_log_as_it_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only what a terminal acts on is escaped: an ideographic or no-break space (not
    printable to ``str.isprintable``, harmless on a terminal) was logged as ``\\u3000``, so a
    Japanese server's name read as code in every message naming it."""
    script = tmp_path / "named.py"
    script.write_text(RED.replace("\\x1b[31mred", "\\u30c7\\u30e2\\u3000\\xa0\\u202ered"))
    caplog.set_level(logging.INFO, logger="mcp_elicit.client")
    async with connect_stdio([sys.executable, str(script)], versions=["2025-11-25"]) as client:
        assert client.server_info.name == "\u30c7\u30e2\u3000\xa0\u202ered"
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("connected to ")]
    assert len(logged) == 1
    assert logged[0].startswith("connected to \u30c7\u30e2\u3000\xa0\\u202ered 1\\x1b[0m ("), logged[0]


async def test_a_server_that_dies_says_how_with_its_stderr(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("import sys\nsys.stderr.write('cannot open the database\\n')\nsys.exit(3)\n")
    with pytest.raises(TransportError) as caught:
        async with connect_stdio([sys.executable, str(script)]):
            pass
    text = str(caught.value)
    assert "exited with code 3" in text
    assert "cannot open the database" in text


async def test_a_missing_command_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="cannot start the server command"):
        async with connect_stdio(["/nonexistent/mcp-server"]):
            pass


@pytest.mark.parametrize("command", [f"{sys.executable} server.py", b"python", [sys.executable, 3]])
def test_a_command_that_is_not_a_list_of_strings_is_refused_saying_so(command: object) -> None:
    # A string was read as a list of its characters: the process 'p' could not be started.
    with pytest.raises(TypeError, match=r"the server command is a list of strings .*shlex\.split"):
        StdioTransport(command)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("python server.py --api-key=SECRET", "not 'python server.py --api-key=REDACTED'"),
        ("python server.py --token SECRET 'a b", "not 'python server.py --token REDACTED"),
        (b"python server.py --api-key=SECRET", "not b'python server.py --api-key=REDACTED'"),
        (
            ["python", "https://me:SECRET@h/", "--password", "SECRET", 3],
            "not ['python', 'https://REDACTED:REDACTED@h/', '--password', 'REDACTED', 3]",
        ),
    ],
)
def test_a_command_refused_is_shown_without_its_secrets(command: object, shown: str) -> None:
    """The error that refuses a command given as one string (or bytes, or with a word that
    is not a string) quotes it as ``command_redaction`` shows a command: a secret option's
    value, a URL's password left out, as the error reaches logs and tracebacks."""
    with pytest.raises(TypeError) as caught:
        StdioTransport(command)  # type: ignore[arg-type]
    assert "SECRET" not in str(caught.value) and shown in str(caught.value), caught.value


async def test_a_server_that_ignores_stdin_closing_is_terminated(tmp_path: Path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text(
        f"import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep({HOURS})\n"
    )
    transport = StdioTransport([sys.executable, str(script)], stop_timeout=0.3)

    async def nothing(_: object) -> None:
        return None

    await transport.open(nothing)
    async with hang_guard("closing a server that ignores stdin closing and SIGTERM"):
        await transport.aclose()
    assert transport._proc is not None
    assert transport._proc.returncode == -signal.SIGKILL, "killed: it would have slept for hours"


async def test_lines_that_are_not_json_rpc_are_skipped(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            print("hello, I am a banner", flush=True)
            print("", flush=True)
            for line in sys.stdin:
                msg = json.loads(line)
                if "id" not in msg:
                    continue
                print("{broken", flush=True)
                result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}
                if msg["method"] != "server/discover":
                    result = {"tools": [], "resultType": "complete"}
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
            """
        )
    )
    async with Client(StdioTransport([sys.executable, str(script)])) as client:
        assert client.revision == "2026-07-28"
        assert await client.list_tools() == []


PUSHING = ROOT / "tests" / "transports" / "pushing_server.py"


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_an_answerer_learns_that_the_server_saw_the_url_step_finished(revision: str) -> None:
    """2025-11-25: a URL question with an elicitationId carries ``finished``, which returns
    when notifications/elicitation/complete arrives, while the person is still asked. On
    2026-07-28 nobody will say so: no ``finished``."""
    from mcp_elicit.client import ElicitAnswer
    from mcp_elicit.core.client_inputs import ElicitationRequest

    class WaitsForTheServer:
        modes = frozenset({"url"})
        saw_finished: bool | None = None

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            self.saw_finished = request.finished is not None
            if request.finished is not None:
                await asyncio.wait_for(request.finished(), 5)
            return ElicitAnswer.accept()

        async def url_done(self, request: ElicitationRequest) -> None:
            return None

    user = WaitsForTheServer()
    async with connect_stdio(
        [*cli(), "serve", str(PUSHING)], answerer=user, versions=[revision], cwd=str(ROOT)
    ) as client:
        out = await client.call_tool("sign_in")
    assert out["content"][0]["text"] == "sign-in: accept"
    assert user.saw_finished is (revision == "2025-11-25")


MALFORMED = textwrap.dedent(
    """
    import json, sys
    kind = sys.argv[1]
    bad = {
        "result": {"result": "a string"},
        "error": {"error": {"message": "no code"}},
        "surrogate": {"result": {"tools": [], "resultType": "complete", "note": "\\ud800"}},
    }.get(kind)
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg["method"] == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        elif kind == "cut":  # the answer's line ends halfway through its JSON
            print('{"jsonrpc": "2.0", "id": %s, "result": {"tools": [' % json.dumps(msg["id"]), flush=True)
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **bad}), flush=True)
    """
)


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        ("result", '"result" must be an object'),
        ("error", '"error" must be an object'),
        ("surrogate", "not valid JSON (no low surrogate in string)"),
        ("cut", "not valid JSON (unexpected end of data)"),
    ],
)
async def test_a_malformed_response_fails_its_request_at_once(tmp_path: Path, kind: str, what: str) -> None:
    script = tmp_path / "malformed.py"
    script.write_text(MALFORMED)
    async with Client(StdioTransport([sys.executable, str(script), kind]), timeout=5) as client:
        with pytest.raises(ProtocolViolation, match="malformed response") as caught:
            await client.list_tools()
    assert what in str(caught.value)


UNTERMINATED = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg["method"] == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        else:
            result = {"tools": [{"name": "last", "inputSchema": {"type": "object"}}], "resultType": "complete"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            sys.exit(0)  # the last answer, with no newline after it
    """
)


async def test_a_last_answer_without_a_newline_is_read(tmp_path: Path) -> None:
    script = tmp_path / "unterminated.py"
    script.write_text(UNTERMINATED)
    async with Client(StdioTransport([sys.executable, str(script)]), timeout=5) as client:
        assert [t["name"] for t in await client.list_tools()] == ["last"]


HELPER_HOLDS_STDOUT = textwrap.dedent(
    """
    import json, os, subprocess, sys
    # a helper process that inherits stdout and outlives the server, until its stdin ends
    subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"])
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg["method"] != "server/discover":
            sys.stderr.write("the database went away\\n")
            sys.stderr.flush()
            os._exit(5)
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


async def test_a_server_that_dies_fails_its_requests_at_once_though_a_helper_holds_its_output(
    tmp_path: Path,
) -> None:
    script = tmp_path / "dies_with_helper.py"
    script.write_text(HELPER_HOLDS_STDOUT)
    async with Client(StdioTransport([sys.executable, str(script)]), timeout=HOURS) as client:
        with pytest.raises(TransportError) as caught:
            async with hang_guard("a request to a server that died, a helper holding its output"):
                await client.list_tools()
    text = str(caught.value)
    assert "exited with code 5" in text and "closed its output" not in text  # a helper still holds it
    assert "the database went away" in text


STUBBORN_WITH_HELPER = textwrap.dedent(
    """
    import json, signal, subprocess, sys, time
    helper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3 * 3600)"], stdin=subprocess.DEVNULL
    )
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    note = {"jsonrpc": "2.0", "method": "notifications/helper", "params": {"pid": helper.pid}}
    print(json.dumps(note), flush=True)
    time.sleep(3 * 3600)
    """
)


async def test_closing_a_stubborn_server_ends_though_a_helper_holds_its_output(tmp_path: Path) -> None:
    script = tmp_path / "stubborn_with_helper.py"
    script.write_text(STUBBORN_WITH_HELPER)
    transport = StdioTransport([sys.executable, str(script)], stop_timeout=0.3)
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def helper_started(message: object) -> None:
        assert isinstance(message, Notification) and message.params is not None
        started.set_result(message.params["pid"])

    await transport.open(helper_started)
    helper = await asyncio.wait_for(started, 5)
    try:
        async with hang_guard("closing a stubborn server whose helper holds its output for hours"):
            await transport.aclose()
        assert transport._proc is not None and transport._proc.returncode == -signal.SIGKILL
    finally:
        os.kill(helper, 9)


STOPS_READING = textwrap.dedent(
    """
    import json, sys, time
    msg = json.loads(sys.stdin.readline())
    result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    time.sleep(3 * 3600)  # stdin is never read again: its pipe fills up
    """
)


async def test_a_request_to_a_server_that_stopped_reading_times_out(tmp_path: Path) -> None:
    """The request is bigger than the pipe holds: sending it cannot finish, and the request's
    timeout still applies (the write used to wait for ever)."""
    script = tmp_path / "stops_reading.py"
    script.write_text(STOPS_READING)
    async with hang_guard("a request to a server that stopped reading"):
        async with Client(
            StdioTransport([sys.executable, str(script)], stop_timeout=0.5), timeout=1
        ) as client:
            with pytest.raises(RequestTimeout, match=r"no answer from .* within 1 s"):
                await client.call_tool("echo", {"text": "x" * 2_000_000})


HUGE_ANSWER = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}
        if msg["method"] != "server/discover":
            tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(5000)]
            result = {"tools": tools, "resultType": "complete"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    """
)


async def test_an_answer_over_the_line_limit_fails_its_request_at_once(tmp_path: Path) -> None:
    script = tmp_path / "huge_answer.py"
    script.write_text(HUGE_ANSWER)
    transport = StdioTransport([sys.executable, str(script)], max_line=64 * 1024)
    async with Client(transport, timeout=HOURS) as client:
        with pytest.raises(TransportError, match=r"response of \d+ bytes, over this client's limit of 65536"):
            async with hang_guard("a request whose answer is over the line limit"):
                await client.list_tools()


def _running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, ended but not yet reaped, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_a_stubborn_server_is_stopped_with_the_processes_it_started(tmp_path: Path) -> None:
    """Past the wait, SIGTERM and SIGKILL go to the server's whole process group, so a
    helper it started (a wrapper's real server, say) does not outlive it."""
    script = tmp_path / "stubborn_with_helper.py"
    script.write_text(STUBBORN_WITH_HELPER)
    transport = StdioTransport([sys.executable, str(script)], stop_timeout=0.3)
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def helper_started(message: object) -> None:
        assert isinstance(message, Notification) and message.params is not None
        started.set_result(message.params["pid"])

    await transport.open(helper_started)
    helper = await asyncio.wait_for(started, 5)
    try:
        await transport.aclose()
        assert not _running(helper)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(helper, 9)


async def test_a_stubborn_server_is_stopped_though_closing_it_is_cancelled(tmp_path: Path) -> None:
    """Closing cut short (a second Ctrl-C, the deadline of a cancel scope around the
    client) still stops the server the transport started, before the cancellation goes on,
    instead of leaving it running once the graceful wait is abandoned."""
    script = tmp_path / "stubborn.py"
    script.write_text("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n")
    transport = StdioTransport([sys.executable, str(script)], stop_timeout=30)

    async def nothing(_: object) -> None:
        return None

    await transport.open(nothing)
    proc = transport._proc
    assert proc is not None
    closing = asyncio.ensure_future(transport.aclose())
    await asyncio.sleep(0.2)  # it waits for the server to exit on its own
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    try:
        await asyncio.wait_for(proc.wait(), 10)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None


MORTAL = """
import json, os, sys
with open(sys.argv[1], "a") as starts:
    starts.write(f"{os.getpid()}\\n")
DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mortal", "version": "1"}},
}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "server/discover":
        result = DISCOVERED
    elif message["params"].get("name") == "die":
        sys.exit(3)
    else:
        result = {"resultType": "complete", "content": [{"type": "text", "text": str(os.getpid())}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


async def test_a_server_that_exited_is_started_again_for_the_next_call(tmp_path: Path) -> None:
    """stdio, Unexpected Termination: the client starts the server again. The call in
    flight when it exited is lost with it (said so, never sent again: a tool may have
    acted); the next calls, together, find one new process, probed again."""
    script, starts = tmp_path / "mortal.py", tmp_path / "starts"
    script.write_text(MORTAL)
    recorder = Recorder()
    async with connect_stdio(
        [sys.executable, str(script), str(starts)], trace=recorder, timeout=20
    ) as client:
        first = await client.call_tool("pid")
        with pytest.raises(TransportError, match="exited with code 3"):
            await client.call_tool("die")
        again = await asyncio.gather(client.call_tool("pid"), client.call_tool("pid"))
    pids = starts.read_text().split()
    assert len(pids) == 2
    assert first["content"][0]["text"] == pids[0]
    assert [out["content"][0]["text"] for out in again] == [pids[1], pids[1]]
    assert recorder.methods() == [
        "server/discover",
        "tools/call",
        "tools/call",
        "server/discover",
        "tools/call",
        "tools/call",
    ]


async def test_a_server_that_cannot_be_started_again_fails_that_call_and_the_next_tries_again(
    tmp_path: Path,
) -> None:
    script, starts = tmp_path / "mortal", tmp_path / "starts"
    script.write_text(f"#!{sys.executable}\n{MORTAL}")
    script.chmod(0o755)
    async with connect_stdio([str(script), str(starts)], timeout=20) as client:
        with pytest.raises(TransportError, match="exited with code 3"):
            await client.call_tool("die")
        script.unlink()
        with pytest.raises(TransportError, match="mortal"):
            await client.call_tool("pid")
        script.write_text(f"#!{sys.executable}\n{MORTAL}")
        script.chmod(0o755)
        out = await client.call_tool("pid")
    pids = starts.read_text().split()
    assert len(pids) == 2
    assert out["content"][0]["text"] == pids[1]


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_a_killed_server_is_started_again_at_either_revision(revision: str) -> None:
    """At 2025-11-25 the new process gets its own ``initialize``: a session is the process's."""
    recorder = Recorder()
    transport = StdioTransport([sys.executable, "-m", "mcp_elicit", "serve", str(DEMO)], trace=recorder)
    async with Client(transport, versions=[revision], timeout=20) as client:
        first = transport.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        async with asyncio.timeout(20):
            assert "signal 9" in await transport.gone()
        assert "book_table" in {tool["name"] for tool in await client.list_tools()}
        assert transport.pid not in (None, first)
        assert client.revision == revision
    opening = ["server/discover"] if revision == "2026-07-28" else ["initialize"]
    assert recorder.methods() == [*opening, *opening, "tools/list"]
