"""Closing a client while calls are in flight: each call ends at once with a
``TransportError`` saying the client was closed, and a question a person is on is
withdrawn. Before, a call went on waiting for its answer over a connection that was gone,
until the request's timeout, and then blamed the server for not answering."""

from __future__ import annotations

import asyncio
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
from support.waiting import HOURS, hang_guard

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


async def _close_under(client: Client, call: asyncio.Task[dict[str, object]], ready: asyncio.Event) -> None:
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
    started = asyncio.Event()

    async def call() -> dict[str, object]:
        started.set()
        return await client.call_tool("wait")

    task = asyncio.ensure_future(call())
    await started.wait()
    await asyncio.sleep(0.5)  # the request is on its way (it fails the same way if not)
    await _close_under(client, task, started)


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
