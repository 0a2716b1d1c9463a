"""Records what a client transport sends and receives, and checks everything the client
sent against the official schema of the revision it spoke; ``peer_client`` connects a
recorded client to a peer server (an HTTP URL or a stdio command)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

from mcp_elicit.client import Client, Scripted
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.procs import ROOT
from support.wire import WireChecker


class Recorder:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self._asked: dict[Any, str] = {}

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        if direction == "send":
            self.sent.append(dict(message))
        else:
            self.received.append(dict(message))
            if "method" in message and "id" in message:
                self._asked[message["id"]] = str(message["method"])

    def methods(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m and "id" in m]

    def check(self, checker: WireChecker) -> int:
        """Validate every message the client sent; the number checked."""
        for message in self.sent:
            if "method" in message:
                checker.outgoing(message)
            else:  # an error may answer a request that could not be read (no method known)
                checker.response(
                    self._asked.get(message["id"], "") if "error" in message else self._asked[message["id"]],
                    message,
                )
        return len(self.sent)


@asynccontextmanager
async def peer_client(
    where: str | Sequence[str], answerer: Scripted, revision: str, *, env: Mapping[str, str] | None = None
) -> AsyncIterator[tuple[Client, Recorder]]:
    """A client at ``revision`` connected to a peer server: ``where`` is its URL, or the
    command that starts it over stdio (with ``env`` added). On the way out, the script must
    have answered everything and every message the client sent must fit the schema."""
    recorder = Recorder()
    transport: HttpTransport | StdioTransport
    if isinstance(where, str):
        transport = HttpTransport(where, trace=recorder)
    else:
        environment = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        transport = StdioTransport(list(where), env=environment, cwd=str(ROOT), trace=recorder)
    async with Client(transport, answerer=answerer, versions=[revision]) as client:
        assert client.revision == revision
        yield client, recorder
    assert answerer.reports == []
    assert recorder.check(WireChecker.load(revision)) > 0
