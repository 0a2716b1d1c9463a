"""The handshake's session is the client's from the moment ``initialize`` is sent
(``client.negotiation``'s ``began``): a stdio server may send requests before it answers
``initialize``, off any exchange, and they reach that session, which answers ``ping`` and
refuses anything else (-32600), with or without a ``server/discover`` probe first. Were
the session the client's only once ``initialize`` was answered, those requests would
meet no session (or the one of an earlier connection) and be ignored: the server waiting
on its ``ping`` would never answer ``initialize``."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from client.fakes import FakeTransport, error
from mcp_elicit.client import Client
from mcp_elicit.client.answerers import Scripted
from mcp_elicit.client.rev_2025_11_25 import HandshakeSession
from mcp_elicit.client.rev_2025_11_25_questions import refused_early
from mcp_elicit.errors import TransportError
from mcp_elicit.transports.stdio_client import connect_stdio
from mcp_elicit.wire.jsonrpc import Request
from mcp_elicit.wire.versions import SUPPORTED

from support.handshake import FORM, V2025, elicit, init
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("versions", [V2025, list(SUPPORTED)], ids=["handshake-only", "probe-first"])
async def test_requests_before_initialize_is_answered_reach_the_handshake_session(
    versions: list[str], wire_2025: WireChecker
) -> None:
    transport: FakeTransport

    async def serve(message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        if message["method"] == "server/discover":
            return [error(message, -32601, "Method not found")]  # legacy: fall back
        if message["method"] == "initialize":
            await transport.push({"jsonrpc": "2.0", "id": "p-1", "method": "ping"})
            await transport.push(elicit("e-1", {"message": "Who?", "requestedSchema": FORM}))
            return [init(message)]
        return [error(message, -32601, "Method not found")]

    transport = FakeTransport(serve, http=False)
    async with Client(transport, versions=versions) as client:
        assert isinstance(client.session, HandshakeSession)
        assert client.revision == "2025-11-25"

        def answered() -> dict[Any, dict[str, Any]]:
            return {m["id"]: m for m, _ in transport.sent if "id" in m}

        await eventually(lambda: {"p-1", "e-1"} <= answered().keys(), "the answers to ping and the question")
    answers = answered()
    assert answers["p-1"] == {"jsonrpc": "2.0", "id": "p-1", "result": {}}
    assert answers["e-1"]["error"]["code"] == -32600
    early = Request("e-1", "elicitation/create", None)
    assert answers["e-1"]["error"]["message"] == refused_early("old", early)  # the one refusal
    wire_2025.response("ping", answers["p-1"])
    wire_2025.response("elicitation/create", answers["e-1"])


#: A stdio server of the handshake era (server/discover unknown). Its tool "die" exits;
#: started again, it pings and asks a question as the probe arrives, before anything is
#: initialized, and writes what the client answered them to the file ``sys.argv[2]``.
RESTARTED = """
import json, sys
with open(sys.argv[1], "a+") as lives:
    lives.seek(0)
    life = len(lives.read().split())
    lives.write("life\\n")
PING = {"jsonrpc": "2.0", "id": "p-early", "method": "ping"}
ASK = {"jsonrpc": "2.0", "id": "q-early", "method": "elicitation/create", "params": {
    "mode": "form", "message": "Who?",
    "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}}
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method is None:
        with open(sys.argv[2], "a") as answers:
            answers.write(line.strip() + "\\n")
        continue
    if method.startswith("notifications/"):
        continue
    if method == "server/discover":
        if life:
            print(json.dumps(PING), flush=True)
            print(json.dumps(ASK), flush=True)
        out = {"error": {"code": -32601, "message": "Method not found"}}
    elif method == "initialize":
        out = {"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "old", "version": "1"}}}
    elif message["params"]["name"] == "die":
        sys.exit(3)
    else:
        out = {"result": {"content": []}}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], **out}), flush=True)
"""


async def test_a_restarted_servers_request_during_the_probe_is_refused_not_heard_by_the_ended_session(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, wire_2025: WireChecker
) -> None:
    """While a restarted stdio server's revision is probed again, the session of the
    process that ended was still the client's: a question the new process sent before
    anything was initialized went to the person through it (and its answer back). Then it
    met no session, and was ignored: the server, whose stateful session was lost with
    its process, waited for an answer that never came. Now it is refused (-32600, saying
    why and what the server may send), the person not asked, and a ``ping`` (which the
    spec allows before initialization) is answered."""
    script = tmp_path / "restarted.py"
    script.write_text(RESTARTED)
    answers_file = tmp_path / "answers"
    answerer = Scripted.from_script([{"content": {"n": "Ann"}}])
    command = [sys.executable, str(script), str(tmp_path / "lives"), str(answers_file)]

    def answers() -> dict[str, dict[str, Any]]:
        lines = answers_file.read_text().splitlines() if answers_file.exists() else []
        return {m["id"]: m for m in map(json.loads, lines)}

    async with connect_stdio(command, answerer=answerer, timeout=20) as client:
        with pytest.raises(TransportError, match="exited with code 3"):
            await client.call_tool("die")
        with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
            assert await client.call_tool("t") == {"content": []}
        assert isinstance(client.session, HandshakeSession) and client.revision == "2025-11-25"
        await eventually(
            lambda: {"p-early", "q-early"} <= answers().keys(), "the answers to the early requests"
        )
    assert answerer.used == []
    said = answers()
    assert said["p-early"] == {"jsonrpc": "2.0", "id": "p-early", "result": {}}
    refused = said["q-early"]["error"]
    assert refused["code"] == -32600
    wire_2025.response("ping", said["p-early"])
    wire_2025.response("elicitation/create", said["q-early"])
    assert any("refused" in r.getMessage() and "elicitation/create" in r.getMessage() for r in caplog.records)
    early = Request("q-early", "elicitation/create", None)
    settling = "the client is settling which revision to speak, as after the server started again"
    assert refused["message"] == refused_early("old", early, settling), refused  # the one refusal
