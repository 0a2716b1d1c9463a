"""``Server(lifespan=...)`` on every transport: ``mcp-elicit serve`` over stdio and
``--http`` (subprocesses), ``StreamableHTTP`` under uvicorn on 127.0.0.1 with its lifespan
and mounted in a Starlette app; entered once before the first request, its value read by
the handler in every round at both revisions, exited after the request in flight at the
stop has ended; a failure on entry refuses to start (exit 2, saying why)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Context, Server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_exchange import Message
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.stdio_client import connect_stdio
from mcp_elicit.transports.stdio_server import StdioServer

from support.http import meta
from support.procs import ROOT, cli, free_port, http_process, refused_at_start, stdio_process, uvicorn_server
from support.readme import REVISIONS
from support.waiting import eventually, hang_guard

pytestmark = pytest.mark.anyio

SERVER = ROOT / "tests" / "transports" / "lifespan_server.py"
TIMEOUT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Three:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.accept(value=3)


@pytest.fixture
def events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "events"
    monkeypatch.setenv("LIFESPAN_EVENTS", str(path))
    monkeypatch.delenv("LIFESPAN_FAIL", raising=False)
    return path


def read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def rounds_of(revision: str) -> int:
    return 2 if revision == "2026-07-28" else 1  # the retry runs the handler again


def check_events(path: Path, revision: str, text: str) -> None:
    """One entry, each round and the call reading what it yielded, then one exit."""
    token, value = text.split()
    assert token.startswith("pool-") and value == "3"
    assert read(path) == [
        f"enter {token}",
        *[f"round {token}"] * rounds_of(revision),
        f"call {token}",
        "exit",
    ]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_over_stdio(events: Path, revision: str) -> None:
    async with connect_stdio(
        [*cli(), "serve", str(SERVER)],
        env=dict(os.environ),
        answerer=Three(),
        versions=(revision,),
        timeout=TIMEOUT,
    ) as client:
        result = await client.call_tool("use_pool")
        assert read(events)[0] == f"enter {result['content'][0]['text'].split()[0]}"
    check_events(events, revision, result["content"][0]["text"])  # exited: the process has ended


@pytest.mark.parametrize("revision", REVISIONS)
async def test_over_http_served_by_the_cli(events: Path, revision: str, tmp_path: Path) -> None:
    with http_process(SERVER, log_dir=tmp_path) as served:
        async with connect_http(
            served.url, answerer=Three(), versions=(revision,), timeout=TIMEOUT
        ) as client:
            result = await client.call_tool("use_pool")
        assert "exit" not in read(events)
    check_events(events, revision, result["content"][0]["text"])  # SIGTERM: stopped gracefully


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_serve_refuses_to_start_when_the_lifespan_fails(
    events: Path, http: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what the database said may hold a terminal's escapes (clear the screen): shown inert,
    # as every text from outside is, over HTTP as over stdio
    monkeypatch.setenv("LIFESPAN_FAIL", "\x1b[2Jgone")
    where = ("--http", f"127.0.0.1:{free_port()}") if http else ()
    done = refused_at_start(["serve", str(SERVER), *where], "the port")
    assert (
        "the lifespan of server 'pooled' failed on entry: ConnectionRefusedError: "
        "the database at db.invalid:5432 refused the connection: \\x1b[2Jgone"
    ) in done.stderr, done.stderr
    assert "\x1b" not in done.stderr, done.stderr
    # said as serve says every configuration error, over HTTP too (not in uvicorn's words)
    assert "mcp-elicit: cannot serve: the lifespan of server 'pooled'" in done.stderr, done.stderr
    assert "Application startup failed" not in done.stderr, done.stderr
    assert not events.exists()  # nothing was entered, so nothing exits


def unusable_store(tmp_path: Path) -> str:
    """A SQLite store URL whose file cannot be made (its directory is a file)."""
    (tmp_path / "a-file").write_text("not a directory", encoding="utf-8")
    return f"sqlite:///{tmp_path / 'a-file' / 'state.db'}"


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_serve_never_enters_the_lifespan_when_the_store_cannot_be_used(
    events: Path, http: bool, tmp_path: Path
) -> None:
    store = unusable_store(tmp_path)
    where = ("--http", f"127.0.0.1:{free_port()}") if http else ()
    done = refused_at_start(["serve", str(SERVER), "--store", store, *where], "the port")
    assert (
        f"mcp-elicit: cannot serve: the URL-mode store {store} cannot be used: cannot open the SQLite store"
        in (done.stderr)
    )
    assert not events.exists()  # the user's pool was never opened, not even for a moment


@pytest.mark.parametrize("mounted", [False, True], ids=["uvicorn-lifespan", "mounted"])
async def test_streamable_http_never_enters_the_lifespan_when_the_store_cannot_be_used(
    tmp_path: Path, mounted: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    # under uvicorn's lifespan (StreamableHTTP as the app, or mounted with lifespan=mcp.lifespan)
    events: list[str] = []
    app, _, _ = recording(events)
    app.configure_url_mode(store=unusable_store(tmp_path))
    mcp = StreamableHTTP(app)
    served = Starlette(routes=[Mount("/tools", app=mcp)], lifespan=mcp.lifespan) if mounted else mcp
    config = uvicorn.Config(served, host="127.0.0.1", port=free_port(), lifespan="on", log_level="error")
    with pytest.raises(SystemExit):
        async with hang_guard("uvicorn refusing to start"):
            await uvicorn.Server(config).serve()  # exits when the start-up fails
    assert "cannot be used: cannot open the SQLite store" in capsys.readouterr().err  # uvicorn's log
    assert events == []


def recording(events: list[str]) -> tuple[Server, asyncio.Event, asyncio.Event]:
    """A server whose lifespan and slow tool say what happens, with the tool's two events:
    set when it has started, and to set to let it end."""
    started, release = asyncio.Event(), asyncio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        events.append("enter")
        yield "pool"
        events.append("exit")

    app = Server("recording", lifespan=lifespan)

    @app.tool
    async def slow(ctx: Context) -> str:
        events.append(f"start {ctx.lifespan_context}")
        await ctx.report_progress(0, 1, "started")
        started.set()
        await release.wait()
        events.append("end")
        return "done"

    return app, started, release


class Stalling(MemoryStore):
    """A store whose writes, once ``stall`` is set, never end (a Redis that stopped answering)."""

    def __init__(self) -> None:
        super().__init__()
        self.stall = False
        self.stalled = asyncio.Event()

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if self.stall:
            self.stalled.set()
            await asyncio.Event().wait()
        await super().put(namespace, key, value, ttl=ttl)


async def test_an_http_start_given_up_lets_go_of_nothing_another_transport_holds() -> None:
    # one Server served over two transports: the second's start-up is cancelled while its
    # store check waits (uvicorn's force exit, serve's stop signal); the first serves on
    events: list[str] = []
    app, _, _ = recording(events)
    store = Stalling()
    app.configure_url_mode(store=store)
    await app.start()  # the other transport (stdio, another app), serving
    try:
        store.stall = True
        startup: asyncio.Queue[Message] = asyncio.Queue()
        startup.put_nowait({"type": "lifespan.startup"})
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        lifespan = asyncio.ensure_future(StreamableHTTP(app)({"type": "lifespan"}, startup.get, send))
        async with hang_guard("the store check starting"):
            await store.stalled.wait()
        lifespan.cancel()
        async with hang_guard("the start-up given up"):
            await asyncio.wait({lifespan})
        assert sent == []
        assert app.lifespan_context == "pool"  # the first transport's share is held still
        assert events == ["enter"]
    finally:
        await app.stop()
    assert events == ["enter", "exit"]


async def refusing(port: int) -> None:
    """Until a connection to ``port`` is refused: the server has begun to stop."""
    async with hang_guard("the server closing its listening socket"):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                return
            writer.close()
            await writer.wait_closed()
            await asyncio.sleep(0.02)


async def test_over_http_it_is_exited_after_the_request_in_flight_at_shutdown() -> None:
    events: list[str] = []
    app, started, release = recording(events)
    async with uvicorn_server(StreamableHTTP(app), lifespan="on") as running:
        assert events == ["enter"]
        async with connect_http(running.url, versions=("2026-07-28",), timeout=TIMEOUT) as client:
            call = asyncio.ensure_future(client.call_tool("slow"))
            async with hang_guard("the tool starting"):
                await started.wait()
            running.server.should_exit = True
            await refusing(running.port)
            assert events == ["enter", "start pool"]  # stopping: the request in flight runs on
            release.set()
            assert (await call)["content"][0]["text"] == "done"
    assert events == ["enter", "start pool", "end", "exit"]


async def test_over_stdio_it_is_exited_after_the_request_in_flight_when_stdin_closes() -> None:
    events: list[str] = []
    app, started, release = recording(events)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = StdioServer(app, grace=60.0)
    with os.fdopen(in_r, "rb", buffering=0) as stdin, os.fdopen(out_w, "wb", buffering=0) as stdout:
        running = asyncio.ensure_future(server.run(stdin, stdout))
        reader = asyncio.StreamReader()
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", buffering=0)
        )
        try:
            for message in (
                {
                    "id": "sub",
                    "method": "subscriptions/listen",
                    "params": {"notifications": {"toolsListChanged": True}, "_meta": meta()},
                },
                {"id": 1, "method": "tools/call", "params": {"name": "slow", "_meta": meta(progressToken=1)}},
            ):
                os.write(in_w, orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n")
            async with hang_guard("the tool starting"):
                await started.wait()
            os.close(in_w)
            in_w = -1
            async with hang_guard("stdin's end reaching the server"):  # the listener is answered then
                while (line := orjson.loads(await reader.readline())).get("id") != "sub":
                    assert line.get("method") != "tools/call", line
            assert events == ["enter", "start pool"]  # in stdin's grace period: the request runs on
            release.set()
            async with hang_guard("the server ending"):
                await running
        finally:
            release.set()
            if in_w >= 0:
                os.close(in_w)
            if not running.done():
                await asyncio.wait_for(running, 10)
            transport.close()
    assert events == ["enter", "start pool", "end", "exit"]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_mounted_in_a_starlette_app_with_its_lifespan(revision: str) -> None:
    events: list[str] = []
    app, _, release = recording(events)
    release.set()
    mcp = StreamableHTTP(app)
    parent = Starlette(routes=[Mount("/tools", app=mcp)], lifespan=mcp.lifespan)
    async with uvicorn_server(parent, lifespan="on") as running:
        url = f"http://127.0.0.1:{running.port}/tools/mcp"
        async with connect_http(url, versions=(revision,), timeout=TIMEOUT) as client:
            assert (await client.call_tool("slow"))["content"][0]["text"] == "done"
    assert events == ["enter", "start pool", "end", "exit"]


async def test_served_without_lifespan_events_it_warns_and_the_handler_is_told_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a parent app that mounts StreamableHTTP without lifespan=mcp.lifespan: nothing enters it
    events: list[str] = []
    app, _, release = recording(events)
    release.set()
    with caplog.at_level(logging.WARNING, logger="mcp_elicit"):
        async with uvicorn_server(StreamableHTTP(app), lifespan="off") as running:
            async with connect_http(running.url, versions=("2026-07-28",), timeout=TIMEOUT) as client:
                result = await client.call_tool("slow")
    assert result["isError"] is True
    assert "the lifespan of server 'recording' is not running" in result["content"][0]["text"]
    assert any("the server's lifespan= is not entered" in r.getMessage() for r in caplog.records)
    assert events == []


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
async def test_over_stdio_a_stop_signal_while_it_opens_stops_the_server(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, code: int
) -> None:
    # a database that does not answer: Ctrl-C (or a SIGTERM) while the lifespan waits for it
    # gives up the opening and ends the process, as it would once serving
    monkeypatch.setenv("LIFESPAN_HANG", "1")
    async with stdio_process(SERVER, log_dir=tmp_path) as served:
        await eventually(lambda: events.exists() and read(events), "the lifespan starting to open")
        served.proc.send_signal(sig)
        async with hang_guard("the server ending"):
            assert await served.proc.wait() == code, served.stderr()
    assert read(events) == ["opening", "opening given up"]


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
async def test_over_http_a_stop_signal_while_it_opens_stops_the_server(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, code: int
) -> None:
    # the same over serve --http: uvicorn would wait for the start-up whatever came, so
    # neither Ctrl-C nor SIGTERM stopped a server whose database does not answer
    monkeypatch.setenv("LIFESPAN_HANG", "1")
    with (tmp_path / "http.stderr").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            *cli(),
            "serve",
            str(SERVER),
            "--http",
            f"127.0.0.1:{free_port()}",
            stdin=asyncio.subprocess.DEVNULL,
            stderr=err,
        )
    try:
        await eventually(lambda: events.exists() and read(events), "the lifespan starting to open")
        proc.send_signal(sig)
        async with hang_guard("the server ending"):
            assert await proc.wait() == code, (tmp_path / "http.stderr").read_text()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    said = (tmp_path / "http.stderr").read_text()
    assert f"{sig.name} received while starting; stopping before serving" in said, said
    assert "serving 'pooled'" not in said and "Traceback" not in said, said
    assert read(events) == ["opening", "opening given up"]
