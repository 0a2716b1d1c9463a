"""What a client says an answer's action is never reaches a span as it was sent: only
``accept``, ``decline`` and ``cancel`` are recorded (anything else is ``_OTHER``), on the
2026-07-28 retry's events and on a 2025-11-25 server's ``elicitation/create`` span. A
client that puts what the person typed where the action goes (a bug, or a hostile one)
would otherwise write it into the trace back end. Nor does a 2025-11-25 session's id,
which is all it takes to act in the session of a server without authentication:
``mcp.session.id`` is a digest of it, computed alike by the client, and the server's log
lines name the session by that digest's start. Real SDK, real HTTP on 127.0.0.1."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit.errors import ProtocolError
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.telemetry_attributes import session_shown
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http_sessions import Session, _events
from support.procs import uvicorn_server
from support.telemetry import META, build
from support.wire import WireChecker

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

pytestmark = pytest.mark.anyio

TYPED = "Ada Lovelace, ada@example.org"  # what a person typed, sent where the action goes


@pytest.fixture
async def traced() -> AsyncIterator[tuple[str, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = build(Telemetry(tracer_provider=provider))
    async with uvicorn_server(StreamableHTTP(app)) as running:
        yield f"http://127.0.0.1:{running.port}/mcp", exporter


async def _post(http: httpx.AsyncClient, url: str, rid: int, params: dict[str, Any]) -> dict[str, Any]:
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": params["name"],
    }
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {**params, "_meta": META}}
    answer: dict[str, Any] = (await http.post(url, json=body, headers=headers)).json()
    return answer


async def test_a_retrys_event_records_a_known_action_only(
    traced: tuple[str, InMemorySpanExporter],
) -> None:
    url, exporter = traced
    call = {"name": "deploy", "arguments": {"name": "web-1"}}
    async with httpx.AsyncClient(timeout=10) as http:
        first = (await _post(http, url, 1, call))["result"]
        state = first["requestState"]
        odd = {**call, "requestState": state, "inputResponses": {"region": {"action": TYPED}}}
        again = (await _post(http, url, 2, odd))["result"]  # refused: the question is asked again
        assert again["resultType"] == "input_required"
        fine = {**call, "requestState": state, "inputResponses": {"region": {"action": "decline"}}}
        assert (await _post(http, url, 3, fine))["result"]["content"][0]["text"] == "web-1 in nowhere"
    spans = {span.attributes["jsonrpc.request.id"]: span for span in exporter.get_finished_spans()}
    (odd_event,) = spans["2"].events
    assert dict(odd_event.attributes) == {"mcp_elicit.input_key": "region", "mcp_elicit.action": "_OTHER"}
    (fine_event,) = spans["3"].events
    assert dict(fine_event.attributes) == {"mcp_elicit.input_key": "region", "mcp_elicit.action": "decline"}
    assert not [span.name for span in spans.values() if TYPED in span.to_json()]


async def test_a_sessions_question_span_records_a_known_action_only(
    traced: tuple[str, InMemorySpanExporter], wire_2025: WireChecker
) -> None:
    url, exporter = traced
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, url, wire_2025)
        await session.open()
        body = session.call("deploy")
        body["params"]["arguments"] = {"name": "web-1"}
        answers = iter([{"action": TYPED}, {"action": "decline"}])  # the second, once asked again
        async with http.stream("POST", url, json=body, headers=session.headers()) as stream:
            async for message in _events(stream):
                if message.get("method") == "elicitation/create":
                    # the first answer is not the schema's (a hostile client's): not checked
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": next(answers)}
                    assert (await session.post(reply)).status_code == 202
                elif message.get("id") == body["id"]:
                    wire_2025.response("tools/call", message)
                    break
    asked = [s for s in exporter.get_finished_spans() if s.name == "elicitation/create"]
    assert [s.attributes["mcp_elicit.action"] for s in asked] == ["_OTHER", "decline"]
    assert not [span.name for span in exporter.get_finished_spans() if TYPED in span.to_json()]


async def test_a_sessions_spans_name_it_by_a_digest_never_its_id(
    traced: tuple[str, InMemorySpanExporter], wire_2025: WireChecker
) -> None:
    url, exporter = traced
    async with httpx.AsyncClient(timeout=10) as http:
        session = Session(http, url, wire_2025)
        await session.open()
        listed = await session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert listed.status_code == 200
        # what one could do holding the id: end the session of someone else
        assert (await http.delete(url, headers=session.headers())).status_code == 200
    spans = [s for s in exporter.get_finished_spans() if "mcp.session.id" in s.attributes]
    assert {s.name for s in spans} >= {"notifications/initialized", "tools/list"}
    assert {s.attributes["mcp.session.id"] for s in spans} == {session_shown(session.sid)}
    assert not [s.name for s in exporter.get_finished_spans() if session.sid in s.to_json()]


async def test_a_sessions_log_lines_and_both_sides_spans_name_it_alike(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two sessions of an instance whose route starts every session id: the project's
    client and the server record one digest per session, and the server's log line for
    each names it by that digest's first 8 hex digits (not by the id's first characters,
    the route's, alike for both)."""
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = build(Telemetry(tracer_provider=provider))
    caplog.set_level(logging.DEBUG, logger="mcp_elicit.server")
    client_telemetry = Telemetry("client", tracer_provider=provider)
    async with uvicorn_server(StreamableHTTP(app, route="node-east-1")) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        for _ in range(2):
            async with connect_http(
                url, versions=["2025-11-25"], telemetry=client_telemetry, timeout=10
            ) as client:
                with pytest.raises(ProtocolError):
                    await client.get_prompt("no-such-prompt")
    spans = [s for s in exporter.get_finished_spans() if s.name.startswith("prompts/get")]
    by_kind: dict[object, list[str]] = {}
    for span in spans:
        by_kind.setdefault(span.kind, []).append(str(span.attributes["mcp.session.id"]))
    digests = by_kind[SpanKind.SERVER]
    assert len(set(digests)) == 2 and by_kind[SpanKind.CLIENT] == digests  # both sides alike
    said = [r.getMessage() for r in caplog.records if "answered with error" in r.getMessage()]
    named = [re.search(r"\(request \S+, session (\S+)\)", line) for line in said]
    assert [m.group(1) if m else line for m, line in zip(named, said, strict=True)] == [
        d[:8] for d in digests
    ]
