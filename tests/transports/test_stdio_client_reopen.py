"""A ``StdioTransport`` opened again after ``aclose`` (a ``Client`` connected, closed and
connected again) starts a new process and speaks with it as with the first: nothing of
the first process (its end, its stderr, a request it left) is taken for the new one's.
And a close ends at once every exchange still waiting, with a ``TransportError``, for a
caller of the transport other than the client (which ends its own calls first)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import uuid
from pathlib import Path

import pytest

from mcp_elicit.client import Client
from mcp_elicit.client.transport import Ended
from mcp_elicit.errors import TransportError
from mcp_elicit.transports.stdio_client import StdioTransport
from mcp_elicit.wire.jsonrpc import Response

from support.procs import ROOT

pytestmark = pytest.mark.anyio

DEMO = [sys.executable, "-m", "mcp_elicit", "serve", str(ROOT / "examples" / "demo_server.py")]
REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_client_connects_again_after_its_server_exited_and_it_was_closed(revision: str) -> None:
    transport = StdioTransport(DEMO)
    client = Client(transport, versions=[revision], timeout=20)
    await client.connect()
    first = transport.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)  # the first process is over, and the transport knows it
    async with asyncio.timeout(20):
        assert "signal 9" in await transport.gone()
    await client.aclose()
    try:
        await client.connect()
        assert transport.pid not in (None, first)
        assert "book_table" in {tool["name"] for tool in await client.list_tools()}
    finally:
        await client.aclose()


async def test_the_second_process_exiting_ends_its_request_saying_so() -> None:
    transport = StdioTransport(DEMO)
    client = Client(transport, versions=["2026-07-28"], timeout=20)
    await client.connect()
    await client.aclose()  # a close whose own end of the process may be cut short
    await client.connect()
    try:
        second = transport.pid
        assert second is not None
        os.kill(second, signal.SIGKILL)
        async with asyncio.timeout(20):
            assert "signal 9" in await transport.gone()
    finally:
        await client.aclose()


async def test_opening_a_transport_that_is_open_is_refused() -> None:
    transport = StdioTransport(DEMO)

    async def nothing(message: object) -> None:
        return None

    await transport.open(nothing)
    try:
        with pytest.raises(TransportError, match="already open"):
            await transport.open(nothing)
    finally:
        await transport.aclose()


async def test_closing_the_transport_ends_a_receive_waiting_with_a_transport_error() -> None:
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # answers nothing
    transport = StdioTransport(silent, stop_timeout=5)

    async def nothing(message: object) -> None:
        return None

    await transport.open(nothing)
    exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
    waiting = asyncio.ensure_future(exchange.receive())
    await asyncio.sleep(0)
    await transport.aclose()
    async with asyncio.timeout(10):
        ended = await waiting
    assert isinstance(ended, Ended)
    assert isinstance(ended.error, TransportError), ended
    assert "closed" in str(ended.error)


def _running_with(token: str) -> list[int]:
    """The processes running (not zombies) whose command line holds ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if token.encode() not in (entry / "cmdline").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


async def _started(token: str) -> list[int]:
    """``_running_with(token)`` once the process shows its command line: the kernel lets
    the parent go on (the exec pipe closed) a moment before the new program's arguments
    are in place, so a process just started can read as having none."""
    for _ in range(200):  # 10 s at most
        if found := _running_with(token):
            return found
        await asyncio.sleep(0.05)
    return []


def _kill_left(token: str) -> None:
    for pid in _running_with(token):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _silent(token: str) -> list[str]:
    """A server that answers nothing, marked by ``token`` on its command line."""
    return [sys.executable, "-c", "import sys; sys.stdin.read()", token]


async def _nothing(message: object) -> None:
    return None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_a_close_during_the_open_leaves_no_process_running() -> None:
    token = f"close-while-opening-{uuid.uuid4()}"
    transport = StdioTransport(_silent(token), stop_timeout=5)
    opening = asyncio.ensure_future(transport.open(_nothing))
    await asyncio.sleep(0)  # the open is starting the process
    try:
        await transport.aclose()
        with pytest.raises(TransportError, match="closed"):
            async with asyncio.timeout(30):
                await opening
        assert transport.pid is None
        assert _running_with(token) == []
        exchange = await transport.exchange({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {})
        ended = await exchange.receive()
        assert isinstance(ended, Ended) and "closed" in (ended.reason or "")
    finally:
        await transport.aclose()
        _kill_left(token)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_an_open_while_another_is_in_progress_is_refused() -> None:
    token = f"two-opens-{uuid.uuid4()}"
    transport = StdioTransport(_silent(token), stop_timeout=5)
    try:
        async with asyncio.timeout(30):
            first, second = await asyncio.gather(
                transport.open(_nothing), transport.open(_nothing), return_exceptions=True
            )
        assert first is None
        assert isinstance(second, TransportError) and "already open" in str(second), second
        assert await _started(token) == [transport.pid]
        await transport.aclose()
        assert _running_with(token) == []
    finally:
        await transport.aclose()
        _kill_left(token)


ECHO = [
    sys.executable,
    "-c",
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n",
]


async def test_an_exchange_of_the_last_process_closed_late_leaves_the_new_one_alone() -> None:
    """An exchange closed after a reopen touches only the process it was made on: the new
    process's request of the same id still gets its answer."""
    transport = StdioTransport(ECHO, stop_timeout=5)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    await transport.open(_nothing)
    try:
        old = await transport.exchange(ping, {})
        async with asyncio.timeout(30):
            assert isinstance(await old.receive(), Response)
        await transport.aclose()
        await transport.open(_nothing)
        new = await transport.exchange(ping, {})
        await old.aclose()  # its caller tidies it up late
        async with asyncio.timeout(30):
            answer = await new.receive()
        assert isinstance(answer, Response) and answer.id == 1
        await new.aclose()
    finally:
        await transport.aclose()
