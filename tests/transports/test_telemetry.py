"""OpenTelemetry on both sides: spans and the duration metrics as the MCP semantic
conventions describe them, recorded by the real OpenTelemetry SDK (in-memory exporter and
reader, given to the server rather than installed globally), over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.errors import ToolError
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.otel import points
from support.procs import ROOT, cli, free_port, uvicorn_server

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

pytestmark = pytest.mark.anyio

DEMO = ROOT / "examples" / "demo_server.py"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01",
}


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


def build(telemetry: Telemetry) -> Server:
    app = Server("traced", telemetry=telemetry)

    @app.tool()
    async def deploy(ctx: Context, name: str) -> str:
        """Asks where."""
        answer = await ctx.elicit("Which region?", Form(region=String()), key="region")
        return f"{name} in {answer.data['region'] if answer.data else 'nowhere'}"

    @app.tool()
    async def whereami() -> str:
        """The span the handler runs in: the server's, so its own spans nest under it."""
        from opentelemetry import trace

        return format(trace.get_current_span().get_span_context().span_id, "016x")

    @app.tool()
    async def broken() -> str:
        """Always fails, as a tool."""
        raise ToolError("the disk is full")

    return app


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


def telemetry_points(reader: InMemoryMetricReader, side: str = "client") -> list[Any]:
    return points(reader, f"mcp.{side}.operation.duration")


def test_opentelemetry_instrument_traces_mcp_elicit_serve_with_no_code(tmp_path: Path) -> None:
    """The zero-code path: ``opentelemetry-instrument mcp-elicit serve ...`` (the
    opentelemetry-distro's launcher) sets up the SDK before the server starts, and the
    server's spans appear, in the client's trace, with nothing in the application."""
    instrument = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    if instrument is None:
        pytest.skip("opentelemetry-distro is not installed (make test installs it)")
    port = free_port()
    out = tmp_path / "spans.txt"
    command = [instrument, "--traces_exporter", "console", "--metrics_exporter", "none"]
    command += ["--logs_exporter", "none", *cli(), "serve", str(DEMO), "--http", f"127.0.0.1:{port}"]
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT
        )
    try:
        deadline = time.monotonic() + 30
        while not listening(port):
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": META}}
        headers = {
            "accept": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list",
        }
        answer = httpx.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers, timeout=10).json()
        assert answer["result"]["tools"]
    finally:
        proc.send_signal(signal.SIGINT)  # a graceful stop flushes the exporter
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    printed = out.read_text()
    start = printed.index('{\n    "name": "tools/list"')  # the console exporter's JSON, one span
    span = json.loads(printed[start : printed.index("\n}", start) + 2])
    assert span["kind"] == "SpanKind.SERVER"
    assert span["context"]["trace_id"] == f"0x{TRACE_ID}" and span["parent_id"] == f"0x{PARENT_ID}"
    assert span["attributes"]["mcp.method.name"] == "tools/list"
    assert span["attributes"]["jsonrpc.request.id"] == "7"


async def test_over_stdio_the_transport_is_a_pipe(tmp_path: Path) -> None:
    """Both sides say ``network.transport=pipe`` over stdio, and name no address."""
    from mcp_elicit.transports.stdio_client import connect_stdio
    from mcp_elicit.transports.stdio_server import StdioServer

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # the client side: a real server process
    telemetry = Telemetry("client", tracer_provider=provider)
    async with connect_stdio([*cli(), "serve", str(DEMO)], telemetry=telemetry, timeout=20) as client:
        assert await client.list_tools()
    sent = [s for s in exporter.get_finished_spans() if s.name == "tools/list"]
    assert sent and all(s.kind == SpanKind.CLIENT for s in sent)
    # the server side: the stdio server in process, reading a request from a file
    exporter.clear()
    app = build(Telemetry(tracer_provider=provider))
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    (tmp_path / "in").write_bytes(json.dumps(request).encode() + b"\n")
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        await StdioServer(app, grace=0.1).run(stdin, stdout)
    assert b'"tools"' in (tmp_path / "out").read_bytes()
    answered = list(exporter.get_finished_spans())
    assert [s.kind for s in answered] == [SpanKind.SERVER]
    for span in [*sent, *answered]:
        assert span.attributes["network.transport"] == "pipe"
        assert not {"server.address", "client.address", "network.protocol.name"} & set(span.attributes)


def listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("tracing", [True, False])
def test_a_request_that_raises_is_recorded_as_failed(tracing: bool) -> None:
    """No answer at all (a timeout, a cancellation): the span and the metric say why."""
    import asyncio

    exporter = InMemorySpanExporter()
    tracer_provider = sdk_trace.TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(
        "client", tracer_provider=tracer_provider if tracing else None, meter_provider=MeterProvider([reader])
    )
    for error, kind in (
        (TimeoutError("no answer within 30 s"), "TimeoutError"),
        (asyncio.CancelledError(), "cancelled"),
    ):
        with pytest.raises(type(error)):
            with telemetry.request("tools/list", 3, {}, version="2026-07-28", session=None):
                raise error
        if tracing:
            span = exporter.get_finished_spans()[-1]
            assert span.kind == SpanKind.CLIENT and span.attributes["error.type"] == kind
            assert span.status.status_code == StatusCode.ERROR
    kinds = sorted(dict(p.attributes)["error.type"] for p in telemetry_points(reader))
    assert kinds == ["TimeoutError", "cancelled"]
    if not tracing:
        assert not exporter.get_finished_spans()


async def test_a_method_mcp_does_not_define_is_other_in_the_metric(traced: Traced) -> None:
    """A peer's made-up method names stay on its spans, not in the metric's series."""
    for rid, method in enumerate(("made/up", "also/made/up")):
        answer = await post(traced.url, rid, {}, method=method)
        assert answer["error"]["code"] == -32601
    assert sorted(s.attributes["mcp.method.name"] for s in traced.finished()) == ["also/made/up", "made/up"]
    (point,) = traced.durations()
    assert point.attributes["mcp.method.name"] == "_OTHER" and point.count == 2


async def test_a_protocol_version_mcp_does_not_define_is_other_in_the_metric() -> None:
    """A peer's made-up revisions stay on its spans, not in the metric's series: each
    would otherwise add one, though every such request is refused (-32022)."""
    from support.memory import MemoryClient

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    server = build(Telemetry(tracer_provider=provider, meter_provider=MeterProvider([reader])))
    client = MemoryClient(server)
    for made_up in ("1999-01-01", "2026-07-28-preview", "x" * 40):
        answer = await client.request("tools/list", meta=client.meta(**{META_VERSION: made_up}))
        assert answer["error"]["code"] == -32022
    assert await client.result("tools/list")  # a revision MCP defines is named as it is
    spans = exporter.get_finished_spans()
    assert [s.attributes["mcp.protocol.version"] for s in spans] == [
        "1999-01-01",
        "2026-07-28-preview",
        "x" * 40,
        "2026-07-28",
    ]
    versions = {
        dict(p.attributes)["mcp.protocol.version"]: p.count for p in telemetry_points(reader, "server")
    }
    assert versions == {"_OTHER": 3, "2026-07-28": 1}


async def test_a_tool_or_prompt_name_the_server_does_not_offer_is_other_in_the_metric() -> None:
    """Made-up tool and prompt names stay on their spans, not in the metric's series: a
    client calling one name after another would otherwise add a series per name."""
    from support.memory import MemoryClient

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    server = build(Telemetry(tracer_provider=provider, meter_provider=MeterProvider([reader])))
    client = MemoryClient(server)
    for made_up in ("nope-1", "nope-2"):
        assert (await client.result("tools/call", {"name": made_up, "arguments": {}}))["isError"] is True
    assert (await client.result("tools/call", {"name": "broken", "arguments": {}}))["isError"] is True
    assert [s.name for s in exporter.get_finished_spans()] == [
        "tools/call nope-1",
        "tools/call nope-2",
        "tools/call broken",
    ]
    tools = {dict(p.attributes)["gen_ai.tool.name"]: p.count for p in telemetry_points(reader, "server")}
    assert tools == {"_OTHER": 2, "broken": 1}


async def test_a_made_up_name_of_any_length_gives_a_span_name_of_bounded_length() -> None:
    """A client may send a tool name as long as the body allows (megabytes): the span keeps
    the start of a name the server does not offer, never the whole of it."""
    from support.memory import MemoryClient

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = build(Telemetry(tracer_provider=provider))
    client = MemoryClient(server)
    made_up = "x" * 100_000
    assert (await client.result("tools/call", {"name": made_up, "arguments": {}}))["isError"] is True
    (span,) = exporter.get_finished_spans()
    assert span.name == "tools/call " + "x" * 128 + "…"
    assert all(len(str(value)) <= 200 for value in (span.attributes or {}).values()), span.attributes


async def test_the_server_span_links_the_span_it_was_received_in() -> None:
    """The client's context (in ``_meta``) is the server span's parent; the span current
    where the request was received (an HTTP server's own, from its instrumentation) is
    linked, so the two traces stay connected."""
    from support.memory import MemoryClient

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = MemoryClient(build(Telemetry(tracer_provider=provider)))
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    with provider.get_tracer("an HTTP instrumentation").start_as_current_span("POST /mcp") as http:
        assert await client.result("tools/list", meta=client.meta(traceparent=traceparent))
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "tools/list"]
    assert format(span.parent.span_id, "016x") == PARENT_ID
    (link,) = span.links
    assert link.context.span_id == http.get_span_context().span_id
    # without a context from the client, the span received in is simply the parent
    exporter.clear()
    with provider.get_tracer("an HTTP instrumentation").start_as_current_span("POST /mcp") as http:
        assert await client.result("tools/list")
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "tools/list"]
    assert span.parent.span_id == http.get_span_context().span_id and not span.links
