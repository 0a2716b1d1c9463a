"""What a stdio server writes to stdout, routed (``stdio_routing``), without a process: a
real ``asyncio.StreamReader`` fed the bytes whole and split at every byte. Responses reach
their request, the server's own messages the unsolicited callback; an unreadable request
is answered -32600 (not at a modern revision); an oversized line fails the request it
names; unknown answers are warned about, late ones dropped quietly. The transport's
``where`` and ``trace`` are read as each line comes. The whole transport, with real
processes, is tests/transports/test_stdio*.py's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcp_elicit.client.transport import Ended, Trace
from mcp_elicit.transports.stdio_exchange import Pending
from mcp_elicit.transports.stdio_routing import StdoutRouting
from mcp_elicit.wire import jsonrpc

pytestmark = pytest.mark.anyio

SENT = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
OUTPUT = (
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}\n'
    b'{"jsonrpc":"2.0","id":"s-1","method":"ping"}\n'
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'  # the last line, unterminated
)


@dataclass
class Owner:
    """The transport, as the routing reads it."""

    where: str = "srv"
    trace: Trace | None = None
    traced: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)


@dataclass
class Rig:
    owner: Owner
    routing: StdoutRouting
    pending: dict[jsonrpc.RequestId, Pending]
    abandoned: dict[jsonrpc.RequestId, None]
    put: list[Mapping[str, Any]]
    heard: list[jsonrpc.Message]

    async def feed(self, *chunks: bytes) -> None:
        reader = asyncio.StreamReader()
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        await self.routing.read(reader)

    def got(self, rid: jsonrpc.RequestId) -> list[jsonrpc.Message | Ended]:
        queue = self.pending[rid]
        return [queue.get_nowait() for _ in range(queue.qsize())]


def rig(max_line: int = 1024) -> Rig:
    owner = Owner()
    pending: dict[jsonrpc.RequestId, Pending] = {1: Pending(SENT)}
    abandoned: dict[jsonrpc.RequestId, None] = {}
    put: list[Mapping[str, Any]] = []
    heard: list[jsonrpc.Message] = []
    routing = StdoutRouting(owner, max_line, pending, abandoned, put.append)

    async def unsolicited(message: jsonrpc.Message) -> None:
        heard.append(message)

    routing.unsolicited = unsolicited
    return Rig(owner, routing, pending, abandoned, put, heard)


@pytest.mark.parametrize("split", ["whole", "every byte"])
async def test_responses_reach_their_request_and_the_rest_the_callback(split: str) -> None:
    r = rig()
    await r.feed(*([OUTPUT] if split == "whole" else [OUTPUT[i : i + 1] for i in range(len(OUTPUT))]))
    (answer,) = r.got(1)
    assert isinstance(answer, jsonrpc.Response) and answer.result == {"content": []}
    assert [type(m).__name__ for m in r.heard] == ["Notification", "Request"]
    assert r.put == [] and r.routing.noise.count == 0


async def test_an_unreadable_request_is_answered_unless_modern() -> None:
    line = b'{"jsonrpc":"2.0","id":"s-9","method":"sampling/createMessage","params":[1]}\n'
    r = rig()
    await r.feed(line, b"a banner\n")
    assert [(m["id"], m["error"]["code"]) for m in r.put] == [("s-9", -32600)]
    assert r.routing.noise.count == 2 and r.heard == []
    modern = rig()
    modern.routing.modern = True
    await modern.feed(line)
    assert modern.put == [] and modern.routing.noise.count == 1


async def test_an_oversized_line_fails_the_request_it_names(caplog: pytest.LogCaptureFixture) -> None:
    r = rig(max_line=64)
    caplog.set_level(logging.WARNING, "mcp_elicit.stdio_client")
    await r.feed(b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"x" * 200 + b'"}}\n')
    (ended,) = r.got(1)
    assert isinstance(ended, Ended) and ended.reason is not None
    assert "over this client's limit of 64 bytes" in ended.reason and ended.reason.startswith("srv ")
    await r.feed(b'{"jsonrpc":"2.0","id":7,"result":{"text":"' + b"x" * 200 + b'"}}\n')
    (said,) = [rec.getMessage() for rec in caplog.records if rec.name == "mcp_elicit.stdio_client"]
    assert said.startswith("srv wrote a ") and said.endswith("-byte line, over the limit; skipped"), said


async def test_unknown_answers_are_warned_about_and_late_ones_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    r = rig()
    r.abandoned["late"] = None
    caplog.set_level(logging.WARNING, "mcp_elicit.stdio_client")
    await r.feed(b'{"jsonrpc":"2.0","id":"late","result":{}}\n{"jsonrpc":"2.0","id":"never","result":{}}\n')
    said = [rec.getMessage() for rec in caplog.records if rec.name == "mcp_elicit.stdio_client"]
    assert len(said) == 1 and said[0].startswith("srv answered an unknown request 'never'"), said
    assert r.abandoned == {} and r.got(1) == []


async def test_an_error_without_an_id_is_the_one_request_in_flights() -> None:
    r = rig()
    await r.feed(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n')
    (error,) = r.got(1)
    assert isinstance(error, jsonrpc.ErrorResponse) and error.error["code"] == -32700


async def test_the_owners_where_and_trace_are_read_as_each_line_comes() -> None:
    r = rig()
    r.owner.where = "renamed"
    r.owner.trace = lambda direction, message: r.owner.traced.append((direction, message))
    await r.feed(b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n', b"\xff\n")
    assert r.owner.traced == [("receive", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})]
    r.pending[2] = Pending({**SENT, "id": 2})
    await r.feed(b'{"jsonrpc":"2.0","id":2,"result":[]}\n')  # malformed: the request fails now
    (ended,) = r.got(2)
    assert isinstance(ended, Ended) and ended.reason == "renamed answered request 2 with a malformed response"
