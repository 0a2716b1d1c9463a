"""Closing a client while calls are in flight: each call ends at once with a
``TransportError`` saying the client was closed, and a question a person is on is
withdrawn. Before, a call went on waiting for its answer over a connection that was gone,
until the request's timeout, and then blamed the server for not answering."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_elicit.client import Client, ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import TransportError
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.procs import cli, http_process
from support.waiting import HOURS, eventually, hang_guard

pytestmark = pytest.mark.anyio

SERVER = textwrap.dedent(
    """
    import asyncio
    from mcp_elicit import Context, Form, Server, String

    app = Server("closing")

    @app.tool()
    async def ask(ctx: Context) -> str:
        '''Asks a name.'''
        answer = await ctx.elicit("Name?", Form(name=String()))
        return answer.action

    @app.tool()
    async def wait() -> str:
        '''Never answers.'''
        await asyncio.sleep(3600)
        return "late"
    """
)


class Thinking:
    """A person who has not answered yet; ``withdrawn`` once the question is taken back."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.withdrawn = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.set()
        try:
            await asyncio.sleep(HOURS)
        except asyncio.CancelledError:
            self.withdrawn.set()
            raise
        return ElicitAnswer.cancel()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "closing_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


@pytest.fixture
def http_url(server_file: Path, tmp_path: Path) -> Iterator[str]:
    with http_process(server_file, log_dir=tmp_path) as server:
        yield server.url


async def _waiting_call(client: Client) -> asyncio.Task[dict[str, object]]:
    """A call of the tool ``wait`` (which never answers), running in a task of its own."""
    started = asyncio.Event()

    async def call() -> dict[str, object]:
        started.set()
        return await client.call_tool("wait")

    task = asyncio.ensure_future(call())
    await started.wait()
    await asyncio.sleep(0.5)  # the request is on its way (it fails the same way if not)
    return task


async def _close_under(
    client: Client, call: asyncio.Task[dict[str, object]], ready: asyncio.Event | None = None
) -> None:
    if ready is not None:
        async with hang_guard("the call to be under way"):
            await ready.wait()
    async with hang_guard("the close"):
        await client.aclose()
    async with hang_guard("the call to end once the client was closed"):
        with pytest.raises(TransportError, match="the client was closed"):
            await call


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_closing_ends_a_call_waiting_for_its_answer(
    revision: str, transport: str, server_file: Path, request: pytest.FixtureRequest
) -> None:
    if transport == "stdio":
        made: StdioTransport | HttpTransport = StdioTransport([*cli(), "serve", str(server_file)])
    else:
        made = HttpTransport(request.getfixturevalue("http_url"))
    client = Client(made, versions=[revision], timeout=HOURS, answerer=Thinking())
    await client.connect()
    task = await _waiting_call(client)
    await _close_under(client, task)


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_closing_withdraws_the_question_and_ends_its_call(revision: str, server_file: Path) -> None:
    person = Thinking()
    client = Client(
        StdioTransport([*cli(), "serve", str(server_file)]),
        versions=[revision],
        timeout=HOURS,
        answerer=person,
    )
    await client.connect()
    task = asyncio.ensure_future(client.call_tool("ask"))
    await _close_under(client, task, person.asked)
    assert person.withdrawn.is_set()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_closing_ends_a_subscription_being_iterated(
    transport: str, server_file: Path, request: pytest.FixtureRequest
) -> None:
    """Over HTTP the iteration waited on the subscription's stream for ever."""
    if transport == "stdio":
        made: StdioTransport | HttpTransport = StdioTransport([*cli(), "serve", str(server_file)])
    else:
        made = HttpTransport(request.getfixturevalue("http_url"))
    client = Client(made, versions=["2026-07-28"], timeout=HOURS)
    await client.connect()
    listening = asyncio.Event()

    async def listen() -> list[str]:
        async with client.listen(tools=True) as changes:
            listening.set()
            return [method async for method, _ in changes]

    task = asyncio.ensure_future(listen())
    async with hang_guard("the subscription to open"):
        await listening.wait()
    async with hang_guard("the close"):
        await client.aclose()
    async with hang_guard("the iteration to end once the client was closed"):
        assert await task == []


def _stdio(server_file: Path, revision: str, answerer: object = None) -> Client:
    return Client(
        StdioTransport([*cli(), "serve", str(server_file)]),
        versions=[revision],
        timeout=HOURS,
        answerer=answerer,  # type: ignore[arg-type]
    )


async def test_closing_waits_for_the_call_not_for_its_callers_task(server_file: Path) -> None:
    """A caller that catches the error and goes on with other work held the close until
    its whole task ended: the close waited on the callers' tasks, not on their calls."""
    client = _stdio(server_file, "2026-07-28")
    await client.connect()
    started, release = asyncio.Event(), asyncio.Event()

    async def caller() -> BaseException | None:
        started.set()
        try:
            await client.call_tool("wait")
        except TransportError as exc:
            await release.wait()  # the caller's task goes on with other work
            return exc
        return None

    task = asyncio.ensure_future(caller())
    await started.wait()
    await asyncio.sleep(0.5)  # the request is on its way (it fails the same way if not)
    try:
        async with hang_guard("the close, while the caller's task goes on"):
            await client.aclose()
    finally:
        release.set()
    assert "the client was closed" in str(await task)


async def test_two_closes_at_once_end_the_call_once(server_file: Path) -> None:
    """Each close cancelled the call's task: it raised ``CancelledError``, not the
    ``TransportError``, and its caller's task stayed cancelled."""
    client = _stdio(server_file, "2026-07-28")
    await client.connect()
    task = await _waiting_call(client)
    async with hang_guard("the two closes"):
        assert await asyncio.gather(client.aclose(), client.aclose()) == [None, None]
    async with hang_guard("the call to end once the client was closed"):
        with pytest.raises(TransportError, match="the client was closed"):
            await task
    assert not task.cancelled()


class Closing:
    """A person whose answerer closes the client (``fails``: then raises its own error);
    ``saw`` is what ``aclose`` raised there."""

    modes = frozenset({"form"})

    def __init__(self, *, fails: bool = False) -> None:
        self.client: Client | None = None
        self.fails = fails
        self.saw: list[type[BaseException]] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert self.client is not None
        try:
            await self.client.aclose()
        except BaseException as exc:
            self.saw.append(type(exc))
            if self.fails:
                raise LookupError("the answerer's own error, once the client is closed") from None
            raise
        return ElicitAnswer.cancel()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_close_from_an_answerer_completes(
    revision: str, transport: str, server_file: Path, request: pytest.FixtureRequest
) -> None:
    """The close cut the call, whose question withdrawn cancelled the answerer running
    the close: the session was never ended (over HTTP at 2025-11-25 its event stream's
    listener was left running)."""
    before = asyncio.all_tasks()
    person = Closing()
    if transport == "stdio":
        made: StdioTransport | HttpTransport = StdioTransport([*cli(), "serve", str(server_file)])
    else:
        made = HttpTransport(request.getfixturevalue("http_url"))
    client = person.client = Client(made, versions=[revision], timeout=HOURS, answerer=person)
    await client.connect()
    async with hang_guard("the call to end once its answerer closed the client"):
        with pytest.raises(TransportError, match="the client was closed"):
            await client.call_tool("ask")
    await eventually(
        lambda: all(task.done() for task in asyncio.all_tasks() - before), "nothing left running"
    )
    with pytest.raises(TransportError, match="the client was closed"):
        await client.list_tools()
    assert person.saw == [asyncio.CancelledError]  # its question withdrawn by the close


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_answerer_failing_after_its_close_leaves_nothing_behind(
    revision: str,
    transport: str,
    server_file: Path,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An answerer that closes the client, then raises its own error: the call raises that
    error (as any answerer's own), the close completes, and nothing is left for asyncio to
    report. Over HTTP at 2026-07-28 the task watching for the server's exit was left
    pending ("Task was destroyed but it is pending!")."""
    person = Closing(fails=True)
    if transport == "stdio":
        made: StdioTransport | HttpTransport = StdioTransport([*cli(), "serve", str(server_file)])
    else:
        made = HttpTransport(request.getfixturevalue("http_url"))
    client = person.client = Client(made, versions=[revision], timeout=HOURS, answerer=person)
    await client.connect()
    with caplog.at_level(logging.WARNING, "asyncio"):
        async with hang_guard("the call to end once its answerer closed the client"):
            with pytest.raises(LookupError, match="the answerer's own error"):
                await client.call_tool("ask")
        with pytest.raises(TransportError, match="the client was closed"):
            await client.list_tools()
        await asyncio.sleep(0.1)  # what was cancelled has ended
        gc.collect()  # a task left pending is reported when it is collected
    assert person.saw == [asyncio.CancelledError]
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


#: A server that reads the client's first message (the revision asked), says so in a file,
#: and never answers: a connect to it is still asking when the test closes the client.
SILENT_AFTER_ASKED = "import sys; sys.stdin.readline(); open(sys.argv[1], 'w').close(); sys.stdin.read()"


@pytest.mark.parametrize("when", ["starting", "asking"])
async def test_closing_during_connect_ends_the_connecting(
    server_file: Path, tmp_path: Path, when: str
) -> None:
    """``connect()`` went on and returned as if connected, and the next call blamed the
    server ("... stopped reading its input"). Closed while the server starts, or once it
    has been asked its revision (a server that never answers, so the connect cannot have
    finished first however fast the machine)."""
    asked = tmp_path / "asked"
    if when == "starting":
        client = _stdio(server_file, "2026-07-28")
    else:
        command = [sys.executable, "-c", SILENT_AFTER_ASKED, str(asked)]
        client = Client(StdioTransport(command), versions=["2026-07-28"], timeout=HOURS)
    connecting = asyncio.ensure_future(client.connect())
    await asyncio.sleep(0)  # the connecting begins: the server starts
    if when == "asking":
        await eventually(asked.exists, "the server asked its revision")
    async with hang_guard("the close"):
        await client.aclose()
    async with hang_guard("the connecting to end once the client was closed"):
        with pytest.raises(TransportError, match="the client was closed"):
            await connecting
    with pytest.raises(TransportError, match="the client was closed"):
        await client.list_tools()
