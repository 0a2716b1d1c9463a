"""OpenTelemetry on both sides: spans and the duration metrics as the MCP semantic
conventions describe them, recorded by the real OpenTelemetry SDK (in-memory exporter and
reader, given to the server rather than installed globally), over real HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.client import Scripted
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.otel import points
from support.procs import uvicorn_server
from support.telemetry import META, PARENT_ID, TRACE_ID, build, telemetry_points

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

pytestmark = pytest.mark.anyio


@dataclass
class Traced:
    url: str
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    provider: Any

    def finished(self) -> list[Any]:
        return list(self.spans.get_finished_spans())

    def durations(self, side: str = "server") -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        points = []
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == f"mcp.{side}.operation.duration":
                        assert metric.unit == "s"
                        points += list(metric.data.data_points)
        return points


@pytest.fixture
async def traced() -> AsyncIterator[Traced]:
    exporter = InMemorySpanExporter()
    tracer_provider = sdk_trace.TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader])
    )
    async with uvicorn_server(StreamableHTTP(build(telemetry))) as running:
        yield Traced(f"http://127.0.0.1:{running.port}/mcp", exporter, reader, tracer_provider)


async def post(url: str, rid: int, params: dict[str, Any], method: str = "tools/call") -> dict[str, Any]:
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if "name" in params:
        headers["mcp-name"] = params["name"]
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": META}}
    async with httpx.AsyncClient(timeout=10) as http:
        answer: dict[str, Any] = (await http.post(url, json=body, headers=headers)).json()
    return answer


async def test_each_round_is_a_server_span_in_the_clients_trace(traced: Traced) -> None:
    call = {"name": "deploy", "arguments": {"name": "web-1"}}
    first = (await post(traced.url, 1, call))["result"]
    retry = {**call, "requestState": first["requestState"]}
    retry["inputResponses"] = {"region": {"action": "accept", "content": {"region": "eu-west-1"}}}
    final = (await post(traced.url, 2, retry))["result"]
    assert final["content"][0]["text"] == "web-1 in eu-west-1"

    asked, answered = traced.finished()
    for span, rid in ((asked, "1"), (answered, "2")):
        assert span.name == "tools/call deploy" and span.kind == SpanKind.SERVER
        assert format(span.context.trace_id, "032x") == TRACE_ID  # the client's trace goes on
        assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
        attributes = dict(span.attributes)
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "deploy"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == "2026-07-28"
        assert attributes["jsonrpc.request.id"] == rid
        assert "error.type" not in attributes and span.status.status_code == StatusCode.UNSET
        # the connection it came on: TCP, HTTP/1.1, from the test's own loopback socket
        assert attributes["network.transport"] == "tcp" and attributes["network.protocol.name"] == "http"
        assert attributes["network.protocol.version"] == "1.1"
        assert attributes["client.address"] == "127.0.0.1" and attributes["client.port"] > 0
    assert asked.attributes["mcp_elicit.result_type"] == "input_required"
    assert asked.attributes["mcp_elicit.input_requests"] == 1
    assert "mcp_elicit.result_type" not in answered.attributes
    (event,) = answered.events
    assert event.name == "mcp_elicit.input_response"
    assert dict(event.attributes) == {"mcp_elicit.input_key": "region", "mcp_elicit.action": "accept"}
    assert "eu-west-1" not in str(answered.to_json())  # what the person typed stays out

    points = traced.durations()
    assert sum(p.count for p in points) == 2
    (point,) = points  # one attribute set: low cardinality, no request id
    assert dict(point.attributes) == {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": "2026-07-28",
        "gen_ai.tool.name": "deploy",
        "gen_ai.operation.name": "execute_tool",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
    }  # not the client's address or port: those vary per connection


async def test_the_handler_runs_inside_the_request_span(traced: Traced) -> None:
    answer = await post(traced.url, 1, {"name": "whereami", "arguments": {}})
    (span,) = traced.finished()
    assert answer["result"]["content"][0]["text"] == format(span.context.span_id, "016x")


async def test_errors_set_the_error_type_and_the_status(traced: Traced) -> None:
    tool_error = await post(traced.url, 1, {"name": "broken", "arguments": {}})
    assert tool_error["result"]["isError"] is True
    bad_state = await post(
        traced.url, 2, {"name": "deploy", "arguments": {"name": "x"}, "requestState": "v2.x"}
    )
    assert bad_state["error"]["code"] == -32602
    failed, refused = traced.finished()
    assert failed.attributes["error.type"] == "tool_error" and failed.status.status_code == StatusCode.ERROR
    assert refused.attributes["error.type"] == "-32602"
    assert refused.attributes["rpc.response.status_code"] == "-32602"
    assert refused.status.status_code == StatusCode.ERROR
    assert refused.status.description == bad_state["error"]["message"]
    kinds = {dict(p.attributes).get("error.type") for p in traced.durations()}
    assert kinds == {"tool_error", "-32602"}


async def test_a_2025_11_25_session_names_its_session_and_revision(traced: Traced) -> None:
    answers = Scripted.from_script([{"fields": ["region"], "content": {"region": "us-east-1"}}])
    async with connect_http(traced.url, answerer=answers, versions=["2025-11-25"], timeout=10) as client:
        result = await client.call_tool("deploy", {"name": "db"})
    assert result["content"][0]["text"] == "db in us-east-1"
    spans = traced.finished()
    (call,) = [s for s in spans if s.name == "tools/call deploy"]
    assert call.attributes["mcp.protocol.version"] == "2025-11-25"
    assert call.parent is None  # this client sent no trace context
    sessions = {s.attributes.get("mcp.session.id") for s in spans}
    assert len(sessions) == 1 and len(str(sessions.pop())) >= 16  # every request of the one session


async def test_without_a_provider_nothing_is_traced() -> None:
    server = Server("quiet")
    assert server.telemetry is not None  # opentelemetry-api is installed here
    with server.telemetry.request("tools/call", 1, {"name": "x"}, version=None, session=None) as traced:
        assert traced is None  # no SDK provider installed globally: no span, no metric
    assert Server("off", telemetry=False).telemetry is None


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_one_trace_runs_from_the_caller_through_the_client_to_the_handler(
    traced: Traced, revision: str
) -> None:
    """The client's span per request (kind CLIENT, a child of the caller's span) sends its
    context in params._meta; the server's span for that request is its child."""
    reader = InMemoryMetricReader()
    telemetry = Telemetry("client", tracer_provider=traced.provider, meter_provider=MeterProvider([reader]))
    answers = Scripted.from_script([{"fields": ["region"], "content": {"region": "ap-south-1"}}])
    caller = traced.provider.get_tracer("the application")
    with caller.start_as_current_span("provision a database") as root:
        async with connect_http(
            traced.url, answerer=answers, versions=[revision], telemetry=telemetry, timeout=10
        ) as client:
            result = await client.call_tool("deploy", {"name": "db"})
    assert result["content"][0]["text"] == "db in ap-south-1"

    spans = traced.finished()
    trace_id = root.get_span_context().trace_id
    assert {s.context.trace_id for s in spans} == {trace_id}  # one trace, end to end
    questions = [s for s in spans if s.name == "elicitation/create"]  # 2025-11-25: the server asks
    clients = {s.context.span_id: s for s in spans if s.kind == SpanKind.CLIENT and s not in questions}
    servers = [s for s in spans if s.kind == SpanKind.SERVER and s not in questions]
    assert all(c.parent.span_id == root.get_span_context().span_id for c in clients.values())
    for server in servers:  # every request the server answered came from one of those
        client_span = clients[server.parent.span_id]
        assert client_span.name == server.name
        # (a notification, the client's notifications/initialized, has no id on either side)
        assert client_span.attributes.get("jsonrpc.request.id") == server.attributes.get("jsonrpc.request.id")
    port = httpx.URL(traced.url).port
    for span in clients.values():  # where the client sent them
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["server.address"] == "127.0.0.1" and span.attributes["server.port"] == port
    for span in servers:  # where the server got them from (in a session too, at 2025-11-25)
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["client.address"] == "127.0.0.1"
    calls = [s for s in clients.values() if s.name == "tools/call deploy"]
    # 2026-07-28: the question is a round of its own (two requests); 2025-11-25: one request
    assert len(calls) == (2 if revision == "2026-07-28" else 1)
    assert all(c.attributes["mcp.protocol.version"] == revision for c in calls)
    (measured,) = [
        p for p in telemetry_points(reader) if dict(p.attributes).get("gen_ai.tool.name") == "deploy"
    ]
    assert measured.count == len(calls)
    if revision == "2026-07-28":
        assert not questions  # asked in results, answered in the retry: no request of their own
        assert not points(reader, "mcp.client.session.duration")  # stateless: no session
        assert not points(traced.reader, "mcp.server.session.duration")
        return
    # every request after initialize names the session, on both sides
    (session,) = {s.attributes["mcp.session.id"] for s in servers if s.name != "initialize"}
    assert {s.attributes.get("mcp.session.id") for s in clients.values() if s.name != "initialize"} == {
        session
    }
    # the session, from initialize to the client's DELETE, measured on each side
    (client_session,) = points(reader, "mcp.client.session.duration")
    (server_session,) = points(traced.reader, "mcp.server.session.duration")
    for point in (client_session, server_session):
        assert point.count == 1 and point.sum > 0
        assert dict(point.attributes)["mcp.protocol.version"] == "2025-11-25"
        assert dict(point.attributes)["network.transport"] == "tcp"
    # The server's question is a CLIENT span inside its tools/call span, and the client's
    # answer a SERVER span inside that: the person's time shows up where it was spent.
    (asked,) = [s for s in questions if s.kind == SpanKind.CLIENT]
    (answered,) = [s for s in questions if s.kind == SpanKind.SERVER]
    (handling,) = [s for s in servers if s.context.span_id == asked.parent.span_id]
    assert handling.name == "tools/call deploy"
    assert answered.parent.span_id == asked.context.span_id
    assert asked.attributes["jsonrpc.request.id"] == answered.attributes["jsonrpc.request.id"]
    assert asked.attributes["mcp.session.id"] == handling.attributes["mcp.session.id"]
    assert answered.attributes["mcp.session.id"] == handling.attributes["mcp.session.id"]
    assert asked.attributes["mcp_elicit.action"] == answered.attributes["mcp_elicit.action"] == "accept"
    # sent on the session's connection, answered on the client's
    assert asked.attributes["network.transport"] == answered.attributes["network.transport"] == "tcp"
    assert asked.attributes["client.address"] == "127.0.0.1" and answered.attributes["server.port"] == port
    assert answered.start_time >= asked.start_time and answered.end_time <= asked.end_time
    # each side measures it the other way round: the server as its sender, the client as
    # its receiver
    (sent,) = [
        p for p in traced.durations("client") if dict(p.attributes)["mcp.method.name"] == "elicitation/create"
    ]
    assert sent.count == 1
    (received,) = telemetry_points(reader, "server")
    assert dict(received.attributes)["mcp.method.name"] == "elicitation/create" and received.count == 1


async def test_a_method_mcp_does_not_define_is_other_in_the_metric(traced: Traced) -> None:
    """A peer's made-up method names stay on its spans, not in the metric's series."""
    for rid, method in enumerate(("made/up", "also/made/up")):
        answer = await post(traced.url, rid, {}, method=method)
        assert answer["error"]["code"] == -32601
    assert sorted(s.attributes["mcp.method.name"] for s in traced.finished()) == ["also/made/up", "made/up"]
    (point,) = traced.durations()
    assert point.attributes["mcp.method.name"] == "_OTHER" and point.count == 2
