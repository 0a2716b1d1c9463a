"""OpenTelemetry for notifications: a CLIENT span where one is sent, its context in the
notification's ``_meta``, and a SERVER span where it is received, continuing that context;
both measured by the duration metric of their direction. Recorded by the real
OpenTelemetry SDK, over real HTTP on 127.0.0.1 and through the stdio server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.telemetry_attributes import session_shown
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import parse_sse
from support.memory import SessionClient
from support.otel import points
from support.procs import uvicorn_server
from support.waiting import eventually
from support.wire import WireChecker

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

pytestmark = pytest.mark.anyio

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "traceparent": TRACEPARENT,
}


@dataclass
class Recorded:
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    provider: Any

    def finished(self, name: str | None = None) -> list[Any]:
        return [s for s in self.spans.get_finished_spans() if name is None or s.name == name]

    def durations(self, side: str) -> list[Any]:
        return points(self.reader, f"mcp.{side}.operation.duration")


def recorded(
    side: Literal["server", "client"] = "server", *, tracing: bool = True
) -> tuple[Recorded, Telemetry]:
    """Providers of the test's own (``tracing`` False: metrics only) and a side's telemetry to them."""
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(
        side, tracer_provider=provider if tracing else None, meter_provider=MeterProvider([reader])
    )
    return Recorded(exporter, reader, provider), telemetry


def build(telemetry: Telemetry) -> Server:
    app = Server("noted", telemetry=telemetry)

    @app.tool()
    async def work(ctx: Context, steps: int) -> str:
        """Reports its progress."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"{steps} steps"

    return app


@dataclass
class Served:
    url: str
    server: Server
    record: Recorded


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    record, telemetry = recorded()
    app = build(telemetry)
    async with uvicorn_server(StreamableHTTP(app)) as running:
        yield Served(f"http://127.0.0.1:{running.port}/mcp", app, record)


async def post(url: str, body: Mapping[str, Any], **headers: str) -> httpx.Response:
    sent = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", **headers}
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url, json=body, headers=sent)


async def test_a_handlers_progress_is_a_client_span_inside_its_request(served: Served) -> None:
    params = {
        "name": "work",
        "arguments": {"steps": 2},
        "_meta": {**META, "progressToken": "p-1"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    response = await post(served.url, body, **{"mcp-method": "tools/call", "mcp-name": "work"})
    assert response.headers["content-type"].startswith("text/event-stream")
    *notes, answer = [json.loads(event) for event in parse_sse(response.text)]
    assert answer["result"]["content"][0]["text"] == "2 steps"
    assert [n["params"]["progress"] for n in notes] == [1, 2]

    (call,) = served.record.finished("tools/call work")
    sent = served.record.finished("notifications/progress")
    assert len(sent) == 2
    for note, span in zip(notes, sent, strict=True):
        assert span.kind == SpanKind.CLIENT  # the side that sends a notification is its client
        assert span.parent is not None and span.parent.span_id == call.context.span_id
        assert format(span.context.trace_id, "032x") == TRACE_ID  # the caller's trace goes on
        attributes = dict(span.attributes)
        assert attributes["mcp.method.name"] == "notifications/progress"
        assert attributes["mcp.protocol.version"] == "2026-07-28"
        assert attributes["network.transport"] == "tcp" and attributes["client.address"] == "127.0.0.1"
        assert "jsonrpc.request.id" not in attributes  # a notification has none
        # its own context travels with it, for the receiver to continue
        trace_id, span_id = note["params"]["_meta"]["traceparent"].split("-")[1:3]
        assert (trace_id, span_id) == (TRACE_ID, format(span.context.span_id, "016x"))
        assert note["params"]["_meta"] == {"traceparent": note["params"]["_meta"]["traceparent"]}
    checker = WireChecker.load("2026-07-28")
    for note in notes:
        checker.notification(note)
    assert checker.seen == len(notes)

    (measured,) = [
        p
        for p in served.record.durations("client")
        if p.attributes["mcp.method.name"] == "notifications/progress"
    ]
    assert measured.count == 2
    assert dict(measured.attributes) == {
        "mcp.method.name": "notifications/progress",
        "mcp.protocol.version": "2026-07-28",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
    }


async def test_a_notification_posted_outside_a_session_is_a_server_span(served: Served) -> None:
    body = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "gone", "_meta": META},
    }
    response = await post(served.url, body, **{"mcp-method": "notifications/cancelled"})
    assert response.status_code == 202
    (span,) = served.record.finished()
    assert span.name == "notifications/cancelled" and span.kind == SpanKind.SERVER
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
    assert span.attributes["mcp.protocol.version"] == "2026-07-28"
    assert span.status.status_code == StatusCode.UNSET
    (received,) = served.record.durations("server")
    assert received.attributes["mcp.method.name"] == "notifications/cancelled" and received.count == 1
    # one MCP does not define: its name on the span, _OTHER in the metric
    made_up = {**body, "method": "notifications/made_up"}
    assert (await post(served.url, made_up, **{"mcp-method": "notifications/made_up"})).status_code == 202
    assert served.record.finished("notifications/made_up")
    other = [p for p in served.record.durations("server") if p.attributes["mcp.method.name"] == "_OTHER"]
    assert [p.count for p in other] == [1]


async def test_a_session_traces_what_each_side_notifies_the_other(served: Served) -> None:
    """2025-11-25: the client's ``notifications/initialized`` and the server's list change,
    pushed on the session's event stream, are each a CLIENT span where they are sent and a
    SERVER span (its child, across the wire) where they are received."""
    client_record, client_telemetry = recorded("client")
    heard = asyncio.Event()

    def on_notification(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            heard.set()

    async with connect_http(
        served.url,
        versions=["2025-11-25"],
        telemetry=client_telemetry,
        on_notification=on_notification,
        timeout=10,
    ) as client:
        assert await client.list_tools()

        @served.server.tool()
        async def added() -> str:
            """Registered while the session is open: the client is told."""
            return "new"

        async with asyncio.timeout(10):
            await heard.wait()

    (initialized_sent,) = client_record.finished("notifications/initialized")
    (initialized_received,) = served.record.finished("notifications/initialized")
    (changed_sent,) = served.record.finished("notifications/tools/list_changed")
    (changed_received,) = client_record.finished("notifications/tools/list_changed")
    for sent, received in ((initialized_sent, initialized_received), (changed_sent, changed_received)):
        assert sent.kind == SpanKind.CLIENT and received.kind == SpanKind.SERVER
        assert received.parent is not None and received.parent.span_id == sent.context.span_id
        assert received.context.trace_id == sent.context.trace_id
        for span in (sent, received):
            assert span.attributes["mcp.protocol.version"] == "2025-11-25"
            assert span.attributes["network.transport"] == "tcp"
    # both sides name the session (the id the server gave in Mcp-Session-Id); each its peer
    session = initialized_received.attributes["mcp.session.id"]
    assert len(str(session)) >= 16
    for span in (initialized_sent, changed_sent, changed_received):
        assert span.attributes["mcp.session.id"] == session
    assert initialized_received.attributes["client.address"] == "127.0.0.1"
    assert changed_received.attributes["server.address"] == "127.0.0.1"
    for record, side, method in (
        (client_record, "client", "notifications/initialized"),
        (served.record, "server", "notifications/initialized"),
        (served.record, "client", "notifications/tools/list_changed"),
        (client_record, "server", "notifications/tools/list_changed"),
    ):
        counts = [p.count for p in record.durations(side) if p.attributes["mcp.method.name"] == method]
        assert counts == [1], (side, method)


async def test_over_stdio_a_notification_continues_the_senders_trace(tmp_path: Path) -> None:
    from mcp_elicit.transports.stdio_server import StdioServer

    record, telemetry = recorded()
    app = build(telemetry)
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "_meta": META}}
    (tmp_path / "in").write_bytes(json.dumps(note).encode() + b"\n")
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        await StdioServer(app, grace=0.1).run(stdin, stdout)
    (span,) = record.finished()
    assert span.name == "notifications/cancelled" and span.kind == SpanKind.SERVER
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
    assert span.attributes["network.transport"] == "pipe"
    assert "mcp.session.id" not in span.attributes  # no session was opened


@pytest.mark.parametrize("tracing", [True, False])
def test_a_notification_that_fails_is_recorded_as_failed(tracing: bool) -> None:
    record, telemetry = recorded(tracing=tracing)
    given: list[Mapping[str, Any] | None] = []

    def send(params: Mapping[str, Any] | None) -> None:
        given.append(params)
        raise ConnectionResetError("the client went away")

    params = {"progressToken": 1, "progress": 1}
    with pytest.raises(ConnectionResetError):
        with telemetry.notification(
            "notifications/progress", params, incoming=False, version="2026-07-28"
        ) as sent:
            send(sent)
    (sent,) = given
    assert sent is not None and sent["progressToken"] == 1
    assert ("_meta" in sent) is tracing  # the context goes along only where there is a span
    (point,) = record.durations("client")
    assert point.attributes["error.type"] == "ConnectionResetError"
    if tracing:
        (span,) = record.finished()
        assert span.attributes["error.type"] == "ConnectionResetError"
        assert span.status.status_code == StatusCode.ERROR
        assert span.status.description == "the client went away"
    else:
        assert not record.finished()


def test_a_notification_whose_schema_has_no_meta_goes_as_it_is() -> None:
    """2025-11-25's ``notifications/elicitation/complete`` declares no ``_meta``: the span
    is recorded, the params are sent unchanged."""
    record, telemetry = recorded()
    params = {"elicitationId": "e-1"}
    with telemetry.notification(
        "notifications/elicitation/complete", params, incoming=False, version="2025-11-25"
    ) as sent:
        assert sent is params
    (span,) = record.finished()
    assert span.name == "notifications/elicitation/complete" and span.kind == SpanKind.CLIENT


async def test_a_listen_streams_notifications_are_spans_inside_it(served: Served) -> None:
    """2026-07-28: what a ``subscriptions/listen`` stream carries is sent inside the listen
    request's span and received inside the client's span for each."""
    client_record, client_telemetry = recorded("client")
    checker = WireChecker.load("2026-07-28")
    async with connect_http(
        served.url, versions=["2026-07-28"], telemetry=client_telemetry, timeout=10
    ) as client:
        async with client.listen(tools=True) as changes:

            @served.server.tool()
            async def added() -> str:
                """Registered while the client listens."""
                return "new"

            async with asyncio.timeout(10):
                method, params = await anext(aiter(changes))
    assert method == "notifications/tools/list_changed"
    checker.notification({"jsonrpc": "2.0", "method": method, "params": params})
    assert "traceparent" in params["_meta"] and "io.modelcontextprotocol/subscriptionId" in params["_meta"]

    # the listen request ends on the server once the client has closed its stream
    await eventually(lambda: served.record.finished("subscriptions/listen"), "the listen span's end")
    (listen,) = served.record.finished("subscriptions/listen")
    for name in ("notifications/subscriptions/acknowledged", "notifications/tools/list_changed"):
        (sent,) = served.record.finished(name)
        (received,) = client_record.finished(name)
        assert sent.parent is not None and sent.parent.span_id == listen.context.span_id
        assert received.parent is not None and received.parent.span_id == sent.context.span_id
        assert sent.attributes["mcp.protocol.version"] == "2026-07-28"
        assert received.attributes["mcp.protocol.version"] == "2026-07-28"
    (changed,) = served.record.finished("notifications/tools/list_changed")
    assert params["_meta"]["traceparent"].split("-")[2] == format(changed.context.span_id, "016x")


def initialize(server: Server) -> Any:
    """A 2025-11-25 session opened in process (the HTTP server's ``initialize``, without
    HTTP), the client's ``notifications/initialized`` taken."""
    from mcp_elicit.wire import jsonrpc

    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"url": {}}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    _, session, _ = server.open_session(jsonrpc.Request(1, "initialize", params))
    assert session is not None
    session.network = {"network.transport": "tcp"}
    session.initialized = True  # the client's notifications/initialized: it may be asked
    return session


async def test_what_a_session_is_pushed_is_traced_and_stays_valid() -> None:
    record, telemetry = recorded()
    server = build(telemetry)
    session = initialize(server)
    session.subscriptions["mem://notes"] = None  # subscribed by an unauthenticated caller
    session.expect("e-7")
    assert server.notify_resource_updated("mem://notes") == 1
    assert server.complete_elicitation("e-7")
    checker = WireChecker.load("2025-11-25")
    pushed = [json.loads(await session.next_pushed(1.0)) for _ in range(2)]
    for message in pushed:
        checker.notification(message)
    updated, completed = pushed
    (updated_span,) = record.finished("notifications/resources/updated")
    (completed_span,) = record.finished("notifications/elicitation/complete")
    for span in (updated_span, completed_span):
        assert span.kind == SpanKind.CLIENT and span.parent is None  # pushed outside any request
        assert span.attributes["mcp.session.id"] == session_shown(session.id)
        assert span.attributes["mcp.protocol.version"] == "2025-11-25"
        assert span.attributes["network.transport"] == "tcp"
    assert updated_span.attributes["mcp.resource.uri"] == "mem://notes"
    assert updated["params"]["_meta"]["traceparent"].split("-")[2] == format(
        updated_span.context.span_id, "016x"
    )
    assert completed["params"] == {"elicitationId": "e-7"}  # its schema has no _meta: sent as it is


async def test_the_servers_withdrawal_of_its_question_is_traced() -> None:
    record, telemetry = recorded()
    session = initialize(build(telemetry))
    sent: list[bytes] = []

    async def send(data: bytes) -> None:
        sent.append(data)

    with pytest.raises(TimeoutError):
        await session.request(send, "elicitation/create", {"message": "?"}, timeout=0.05, telemetry=telemetry)
    question, withdrawal = (json.loads(data) for data in sent)
    assert question["method"] == "elicitation/create" and withdrawal["method"] == "notifications/cancelled"
    assert withdrawal["params"]["requestId"] == question["id"]
    WireChecker.load("2025-11-25").notification(withdrawal)
    (span,) = record.finished("notifications/cancelled")
    assert span.kind == SpanKind.CLIENT and span.attributes["mcp.session.id"] == session_shown(session.id)
    assert withdrawal["params"]["_meta"]["traceparent"].split("-")[2] == format(span.context.span_id, "016x")


async def test_a_notice_on_the_asking_requests_stream_is_traced_once() -> None:
    """A 2025-11-25 URL step completed while the request that asked it waits: its notice
    goes on that request's stream (not pushed), in one span of its own, as a pushed one."""
    record, telemetry = recorded()
    server = build(telemetry)

    @server.tool()
    async def linked(ctx: Context) -> str:
        """Asks the step "link-1", which the server sees finished by itself."""
        asyncio.get_running_loop().call_later(0.05, server.complete_elicitation, "link-1")
        answer = await ctx.elicit_url("Link it", "https://accounts.example.com/link", elicitation_id="link-1")
        await asyncio.sleep(0.2)  # still running when the step completes
        return answer.action

    checker = WireChecker.load("2025-11-25")
    client = SessionClient(server, capabilities={"elicitation": {"url": {}}}, checker=checker)
    client.answer = lambda _rid, _request: {"action": "accept"}
    await client.open()
    result = await client.result("tools/call", {"name": "linked"})
    assert result["content"][0]["text"] == "accept"
    (notice,) = client.notifications  # on the request's stream, before its answer
    assert notice["params"] == {"elicitationId": "link-1"}
    assert await client.session.next_pushed(0) is None
    (span,) = record.finished("notifications/elicitation/complete")
    assert span.kind == SpanKind.CLIENT
    assert span.attributes["mcp.session.id"] == session_shown(client.session.id)
    assert span.attributes["mcp.protocol.version"] == "2025-11-25"
