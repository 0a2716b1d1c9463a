"""A KeyboardInterrupt raised by the person's own answerer (Ctrl-C inside ``input()``),
with a real server over stdio, in a program of its own: it leaves the client call, the
server process is stopped, and asyncio reports no "Task exception was never retrieved"."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from support.procs import ROOT, cli

pytestmark = pytest.mark.anyio

DEMO = ROOT / "examples" / "demo_server.py"

PROGRAM = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from mcp_elicit.transports.stdio_client import connect_stdio

    class CtrlC:
        modes = frozenset({"form"})
        async def elicit(self, request):
            raise KeyboardInterrupt  # as input() does on Ctrl-C
        async def url_done(self, request):
            return None

    async def main(command, revision):
        pid = None
        try:
            async with connect_stdio(command, answerer=CtrlC(), versions=[revision]) as client:
                pid = client.transport.pid
                await client.call_tool("book_table", {"restaurant": "noma"})
        except KeyboardInterrupt:
            print("KeyboardInterrupt left the call", flush=True)
        try:
            os.kill(pid, 0)
            print("the server is still running", flush=True)
        except ProcessLookupError:
            print("the server is stopped", flush=True)

    try:
        asyncio.run(main(json.loads(sys.argv[1]), sys.argv[2]))
    except KeyboardInterrupt:
        print("KeyboardInterrupt left the event loop instead", flush=True)
    """
)


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_an_answerers_keyboard_interrupt_leaves_the_call(revision: str, tmp_path: Path) -> None:
    program = tmp_path / "interrupted.py"
    program.write_text(PROGRAM)
    command = [*cli(), "serve", str(DEMO)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(program),
        json.dumps(command),
        revision,
        cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(60):
            out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert out.decode().splitlines() == ["KeyboardInterrupt left the call", "the server is stopped"], (
        err.decode()
    )
    assert "never retrieved" not in err.decode()
    assert "Traceback" not in err.decode()
    assert proc.returncode == 0


ASKING = Path(__file__).with_name("asking_server.py")
QUESTION = {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}


class Stuck:
    """An answerer that raises ``KeyboardInterrupt`` at each question (``interrupt``, as a
    person's Ctrl-C in ``input()``), the first time once ``more`` is set; or never answers
    (``all_asked`` is set at the ``count``-th question)."""

    modes = frozenset({"form"})

    def __init__(self, count: int, *, interrupt: bool, more: asyncio.Event | None = None) -> None:
        self.count, self.interrupt, self.more = count, interrupt, more
        self.asked = 0
        self.all_asked = asyncio.Event()

    async def elicit(self, request: object) -> None:
        self.asked += 1
        if self.interrupt:
            if self.asked == 1 and self.more is not None:
                async with asyncio.timeout(20):  # bounds the wait only
                    await self.more.wait()
                for _ in range(5):  # the question that came meanwhile waits for its turn
                    await asyncio.sleep(0)
            raise KeyboardInterrupt
        if self.asked == self.count:
            self.all_asked.set()
        await asyncio.Event().wait()

    async def url_done(self, request: object) -> None:
        return None


def _asking(tmp_path: Path, count: int) -> list[str]:
    """The asking server over stdio, sending ``count`` questions at once at ``tools/call``."""
    plan = tmp_path / "plan.json"
    ask = [
        {"jsonrpc": "2.0", "id": f"q-{n}", "method": "elicitation/create", "params": QUESTION}
        for n in range(count)
    ]
    plan.write_text(json.dumps({"ask": ask, "wait": 30}), encoding="utf-8")
    return [sys.executable, str(ASKING), str(plan)]


async def _expire(asked: asyncio.Event, timeout: asyncio.Timeout) -> None:
    """Expire ``timeout`` once ``asked`` is set (the 20 s only bound the wait)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(20):
            await asked.wait()
    timeout.reschedule(asyncio.get_running_loop().time())


async def test_a_timeout_around_a_call_whose_question_is_being_answered_fires(tmp_path: Path) -> None:
    """An outer ``asyncio.timeout`` that expires while a 2025-11-25 question is answered is
    the caller's cancellation: the client withdraws the question and does not take it."""
    from mcp_elicit.transports.stdio_client import connect_stdio

    answerer = Stuck(1, interrupt=False)
    async with connect_stdio(_asking(tmp_path, 1), answerer=answerer, versions=["2025-11-25"]) as client:
        expiring: list[asyncio.Future[None]] = []

        async def call_until_asked() -> None:
            async with asyncio.timeout(None) as around:  # expires once the question is asked
                expiring.append(asyncio.ensure_future(_expire(answerer.all_asked, around)))
                await client.call_tool("ask", {})

        with pytest.raises(TimeoutError):
            await call_until_asked()
        await expiring[0]
        assert answerer.asked == 1
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0


async def test_a_call_cancelled_by_its_caller_while_a_question_is_answered_is_cancelled(
    tmp_path: Path,
) -> None:
    from mcp_elicit.transports.stdio_client import connect_stdio

    answerer = Stuck(1, interrupt=False)
    async with connect_stdio(_asking(tmp_path, 1), answerer=answerer, versions=["2025-11-25"]) as client:
        call = asyncio.ensure_future(client.call_tool("ask", {}))
        async with asyncio.timeout(20):  # bounds the wait only
            await answerer.all_asked.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert call.cancelled()


async def test_two_keyboard_interrupts_during_one_call_leave_no_cancellation_behind(tmp_path: Path) -> None:
    """Ctrl-C met answering two questions of one call (2025-11-25) cancels the call twice
    to bring it there; the call undoes both, no more: the task that caught the
    KeyboardInterrupt has no cancellation left pending, and a timeout around it all
    still fires as a timeout."""
    from mcp_elicit.transports.stdio_client import connect_stdio

    more = asyncio.Event()  # the second question has come

    def trace(direction: str, message: Mapping[str, Any]) -> None:
        if direction == "receive" and message.get("id") == "q-1":
            more.set()

    answerer = Stuck(2, interrupt=True, more=more)

    async def call() -> None:  # in a task of its own: what it leaves behind stays there
        task = asyncio.current_task()
        assert task is not None
        async with asyncio.timeout(60) as around:
            async with connect_stdio(
                _asking(tmp_path, 2), answerer=answerer, versions=["2025-11-25"], trace=trace
            ) as client:
                with pytest.raises(KeyboardInterrupt):
                    await client.call_tool("ask", {})
            assert answerer.asked == 2
            assert task.cancelling() == 0
            around.reschedule(asyncio.get_running_loop().time())  # the caller's timeout, now
            await asyncio.sleep(30)

    with pytest.raises(TimeoutError):
        await asyncio.ensure_future(call())
