"""A KeyboardInterrupt raised by the person's own answerer (Ctrl-C inside ``input()``),
with a real server over stdio, in a program of its own: it leaves the client call, the
server process is stopped, and asyncio reports no "Task exception was never retrieved"."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

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
