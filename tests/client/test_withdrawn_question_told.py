"""What an answerer is told of a question withdrawn because the caller abandoned its call
is what goes on the wire. At 2025-11-25 a question that came with no request of its own
(every one over stdio) is answered ``cancel`` once withdrawn, since nothing else tells
the server: its answerer is cancelled with ``CANCEL_SENT`` (``cancel_sent``), and the
terminal and the page no longer say "nothing was sent" for it. One on the call's own
response stream (HTTP) gets no answer: the call's ``notifications/cancelled`` covers it.
Real servers: ``mcp-elicit serve`` over stdio, and over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from client.recorder import Recorder
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ElicitAnswer, cancel_sent
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.transports.http_client import HttpTransport
from mcp_elicit.transports.stdio_client import StdioTransport

from support.procs import ROOT, cli, http_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

FORM_SERVER = ROOT / "tests" / "ui" / "form_server.py"
SCHEMA = json.dumps({"type": "object", "properties": {"n": {"type": "string", "title": "Name"}}})


class Waiting:
    """Asks nobody: waits until the question is withdrawn, and keeps how it was."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.stopped: list[BaseException] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            self.stopped.append(exc)
            raise
        raise AssertionError("never answered")

    async def url_done(self, request: ElicitationRequest) -> None:
        return None


async def _abandoned(
    transport: StdioTransport | HttpTransport, recorder: Recorder, wire: WireChecker
) -> Waiting:
    waiting = Waiting()
    async with Client(transport, answerer=waiting, versions=["2025-11-25"], timeout=30) as client:
        call = asyncio.ensure_future(client.call_tool("form", {"message": "Who?", "schema": SCHEMA}))
        await asyncio.wait_for(waiting.asked.wait(), 20)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # the session goes on: whatever was sent for the question went before this
        assert [t["name"] for t in await client.list_tools()][:1] == ["form"]
    recorder.check(wire)
    return waiting


def _answers(recorder: Recorder) -> list[dict[str, Any]]:
    asked = {m["id"] for m in recorder.received if m.get("method") == "elicitation/create"}
    return [m for m in recorder.sent if "method" not in m and m.get("id") in asked]


async def test_a_question_over_stdio_is_answered_cancel_and_its_answerer_told_so(
    wire_2025: WireChecker,
) -> None:
    recorder = Recorder()
    transport = StdioTransport([*cli(), "serve", str(FORM_SERVER)], trace=recorder)
    waiting = await _abandoned(transport, recorder, wire_2025)
    assert [a["result"] for a in _answers(recorder)] == [{"action": "cancel"}]
    [stopped] = waiting.stopped
    assert cancel_sent(stopped)


async def test_a_question_on_the_calls_stream_gets_no_answer_and_its_answerer_is_told_none(
    tmp_path: Path, wire_2025: WireChecker
) -> None:
    recorder = Recorder()
    with http_process(FORM_SERVER, log_dir=tmp_path) as server:
        waiting = await _abandoned(HttpTransport(server.url, trace=recorder), recorder, wire_2025)
    assert _answers(recorder) == []
    assert "notifications/cancelled" in [m.get("method") for m in recorder.sent]
    [stopped] = waiting.stopped
    assert not cancel_sent(stopped)


class Lingering(Waiting):
    """Takes a while to wind down once withdrawn, as the page does: until the server's own
    withdrawal of the question (which follows the call's cancellation) has been read."""

    def __init__(self, heard: asyncio.Event) -> None:
        super().__init__()
        self.heard = heard

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        try:
            return await super().elicit(request)
        except asyncio.CancelledError:
            try:
                await asyncio.wait_for(self.heard.wait(), 20)
            except asyncio.CancelledError as again:
                self.stopped.append(again)
            raise


async def test_the_servers_withdrawal_after_the_clients_does_not_cancel_it_again(
    wire_2025: WireChecker,
) -> None:
    # The server's notifications/cancelled for its question, read while the answerer wound
    # down, cancelled it a second time: the answerer's CancelledError became a plain one (the
    # page said "nothing was sent") while the cancel already decided on was sent all the same.
    recorder = Recorder()
    transport = StdioTransport([*cli(), "serve", str(FORM_SERVER)], trace=recorder)
    withdrawn = asyncio.Event()

    def heard(method: str, params: Mapping[str, Any]) -> None:  # once the client acted on it
        asked = {m["id"] for m in recorder.received if m.get("method") == "elicitation/create"}
        if method == "notifications/cancelled" and params.get("requestId") in asked:
            withdrawn.set()

    waiting = Lingering(withdrawn)
    async with Client(
        transport, answerer=waiting, versions=["2025-11-25"], timeout=30, on_notification=heard
    ) as client:
        call = asyncio.ensure_future(client.call_tool("form", {"message": "Who?", "schema": SCHEMA}))
        await asyncio.wait_for(waiting.asked.wait(), 20)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(withdrawn.wait(), 20)
        assert [t["name"] for t in await client.list_tools()][:1] == ["form"]
    recorder.check(wire_2025)
    assert [a["result"] for a in _answers(recorder)] == [{"action": "cancel"}]
    [stopped] = waiting.stopped
    assert cancel_sent(stopped)
