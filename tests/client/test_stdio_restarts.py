"""A stdio server that exited on its own, started again by the next call
(``client.restarts``): a server that cannot start any more, with real processes."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from mcp_elicit.errors import TransportError
from mcp_elicit.transports.stdio_client import connect_stdio

pytestmark = pytest.mark.anyio

#: Answers its first life; with "once", every later start fails at once, saying why on
#: stderr. Its tool "die" exits with code 3; "quit" shuts it down (stdout closed, code 0);
#: "shout" writes 5,000 numbered lines (some 340 KB) to stderr, then exits with code 3.
ONCE = """
import json, os, sys
with open(sys.argv[1], "a") as starts:
    starts.write(f"{os.getpid()}\\n")
if sys.argv[2:] == ["once"] and len(open(sys.argv[1]).read().split()) > 1:
    print("boom: the configuration is broken", file=sys.stderr)
    sys.exit(1)
DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "once", "version": "1"}},
}
for line in sys.stdin:
    message = json.loads(line)
    if message["method"] == "server/discover":
        result = DISCOVERED
    elif message["params"].get("name") == "die":
        sys.exit(3)
    elif message["params"].get("name") == "shout":
        for i in range(5000):
            print(f"log line {i:04d} " + "x" * 50, file=sys.stderr)
        sys.exit(3)
    elif message["params"].get("name") == "quit":
        sys.stdout.close()
        os._exit(0)
    else:
        result = {"resultType": "complete", "content": []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


async def test_a_server_that_exits_at_every_start_is_started_once_per_call_each_saying_so(
    tmp_path: Path,
) -> None:
    """No start loop: each call makes one attempt, and its error says which call it was,
    that the server had ended and how, and that starting it again failed and why (its
    exit and its stderr), not only that a ``server/discover`` it never made got no answer."""
    script, starts = tmp_path / "once.py", tmp_path / "starts"
    script.write_text(ONCE)
    async with connect_stdio([sys.executable, str(script), str(starts), "once"], timeout=20) as client:
        with pytest.raises(TransportError, match="exited with code 3"):
            await client.call_tool("die")
        for attempt in range(3):
            with pytest.raises(TransportError) as failed:
                await client.call_tool("t")
            said = str(failed.value)
            assert said.startswith("tools/call to once 1"), said
            ended = "exited with code 3" if attempt == 0 else "exited with code 1"
            assert f"{ended}" in said.split("could not be started again")[0], said
            assert "could not be started again" in said and "boom: the configuration is broken" in said, said
            assert len(starts.read_text().split()) == attempt + 2


async def test_a_server_that_shut_itself_down_is_started_again_by_the_next_call(tmp_path: Path) -> None:
    """stdio lets a server end by closing its output and exiting: the ended process can
    serve nothing more, so a later call starts it again (lazily: nothing starts it until
    that call), as for a crash."""
    script, starts = tmp_path / "once.py", tmp_path / "starts"
    script.write_text(ONCE)
    async with connect_stdio([sys.executable, str(script), str(starts)], timeout=20) as client:
        with pytest.raises(TransportError, match="closed its output and exited with code 0"):
            await client.call_tool("quit")
        assert len(starts.read_text().split()) == 1
        await client.call_tool("t")
    assert len(starts.read_text().split()) == 2


async def test_the_warning_for_a_server_started_again_quotes_only_the_end_of_its_stderr(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that wrote a lot to stderr before it exited: the warning logged when it is
    started again quotes the end of its stderr cut as the call's error cuts it (its last
    1,500 characters), never all that was kept of it."""
    script, starts = tmp_path / "once.py", tmp_path / "starts"
    script.write_text(ONCE)
    async with connect_stdio([sys.executable, str(script), str(starts)], timeout=20) as client:
        with pytest.raises(TransportError, match="exited with code 3"):
            await client.call_tool("shout")
        with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
            await client.call_tool("t")
    warned = [r.getMessage() for r in caplog.records if "starting it again" in r.getMessage()]
    assert len(warned) == 1, warned
    tail = warned[0].split("the end of its stderr:\n", 1)[1]
    assert "log line 4999" in tail and "log line 0000" not in tail, tail[:200]
    assert len(tail) <= 1500 + len("); starting it again"), len(tail)
