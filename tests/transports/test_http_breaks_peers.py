"""A 2025-11-25 answer POSTed twice to servers nobody here wrote (the official Python SDK's,
the TypeScript v1 SDK's): the first POST reaches the server but its connection closes
unanswered, so the client sends it once more (``rev_2025_11_25_answers``). The server must
take the second as a response to a question already answered and ignore it: the call gets
its result, the session goes on (a second call works), and the peer logs no traceback or
error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from client.ts_peer import SERVERS, _quiet

from mcp_elicit.client import Scripted
from mcp_elicit.transports.http_client import connect_http

from support.peers import peer_http, sdk_python, ts_node
from support.procs import ROOT
from support.proxy import Fault, breaking

__all__ = ["sdk_python", "ts_node"]  # fixtures

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SCRIPT = [{"action": "decline"}, {"action": "decline"}]
#: Each peer's tool asking a form, its arguments, what it returns for SCRIPT's answers, and
#: where the call's stream is held so that its result waits for the answer's second POST:
#: after the question (the SDK asks on the call's stream, its events ending in CRLF CRLF), or after the headers (the TS v1
#: tool asks on the session's GET stream). The second call checks the session goes on.
PEERS = {
    "python-sdk": ("confirm_name", {"name": "Ann"}, ["Ann: decline"] * 2, (b"\r\n\r\n", 2)),
    "ts-v1": (
        "plan_trip",
        {},
        ["trip: declined, nothing booked"] * 2,
        (b"\r\n\r\n", 1),
    ),
}


@pytest.fixture(params=list(PEERS))
def peer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A peer server over Streamable HTTP on 127.0.0.1: its name and URL."""
    name = str(request.param)
    log = tmp_path / f"{name}.log"
    if name == "python-sdk":
        python = request.getfixturevalue("sdk_python")
        argv = [str(python), str(ROOT / "tests" / "peers" / "sdk_server.py"), "--http"]
    else:
        argv = [str(request.getfixturevalue("ts_node")), str(SERVERS["v1"]), "--http"]
    with peer_http(lambda port: [*argv, str(port)], log) as url:
        yield name, url
    if name == "ts-v1":
        _quiet(log.read_text(errors="replace"))


async def test_a_peer_ignores_an_answer_posted_twice(peer: tuple[str, str]) -> None:
    name, url = peer
    tool, arguments, expected, (held, nth) = PEERS[name]
    cut = Fault(b'"decline"')  # the answer reaches the server; its HTTP answer never comes back
    again = Fault(b'"decline"', "stall")  # the same answer POSTed once more: let through
    # The call's result waits until the second POST has gone (else the client drops it).
    hold = Fault(b'"tools/call"', "stall", marker=held, nth=nth, seconds=30, until=again.fired)
    async with breaking(urlsplit(url).port or 0, [hold, cut, again]) as proxy:
        async with (
            asyncio.timeout(60),
            connect_http(
                proxy.url(),
                answerer=Scripted.from_script(SCRIPT),
                versions=["2025-11-25"],
                timeout=20,
                headers={"Host": urlsplit(url).netloc},  # the TS peer checks it is its own
            ) as client,
        ):
            first = await client.call_tool(tool, arguments)
            assert hold.resumed.is_set() and again.fired.is_set(), "the answer was not POSTed twice"
            second = await client.call_tool(tool, arguments)
    assert [first["content"][0]["text"], second["content"][0]["text"]] == expected
