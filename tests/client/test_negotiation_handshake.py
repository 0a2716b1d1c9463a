"""The handshake's session is the client's from the moment ``initialize`` is sent
(``client.negotiation``'s ``began``): a stdio server may send requests before it answers
``initialize``, off any exchange, and they reach that session, which answers ``ping`` and
refuses anything else (-32600), with or without a ``server/discover`` probe first. Were
the session the client's only once ``initialize`` was answered, those requests would
meet no session (or the one of an earlier connection) and be ignored: the server waiting
on its ``ping`` would never answer ``initialize``."""

from __future__ import annotations

from typing import Any

import pytest

from client.fakes import FakeTransport, error
from mcp_elicit.client import Client
from mcp_elicit.client.rev_2025_11_25 import HandshakeSession
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
    assert "came before the session was initialized" in answers["e-1"]["error"]["message"]
    wire_2025.response("ping", answers["p-1"])
    wire_2025.response("elicitation/create", answers["e-1"])
