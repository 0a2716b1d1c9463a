"""Telemetry that fails, and telemetry that must keep quiet: a span processor that raises
never breaks a request, and what a span records holds no secret. Recorded by the real
OpenTelemetry SDK, driving the server in memory (both revisions, every message checked
against the official schema)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.errors import TransportError
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.transports.http_client import connect_http

from support.memory import MemoryClient, SessionClient
from support.procs import free_port
from support.wire import WireChecker

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

pytestmark = pytest.mark.anyio
SECRET = "sk-live-4f9a2c"


class Broken(sdk_trace.SpanProcessor):  # type: ignore[misc]
    """A span processor of the application's that raises when a span starts or ends."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.calls = 0

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.calls += 1
        if self.where == "start":
            raise RuntimeError("the span processor broke on start")

    def on_end(self, span: Any) -> None:
        self.calls += 1
        if self.where == "end":
            raise RuntimeError("the span processor broke on end")


def build(telemetry: Telemetry) -> Server:
    app = Server("fragile", telemetry=telemetry)

    @app.tool()
    async def greet(ctx: Context) -> str:
        await ctx.info("asking for a name")  # a notification, in a span of its own
        answer = await ctx.elicit("Name?", Form(name=String()), key="name")
        return f"hello {answer.content['name'] if answer.content else answer.action}"

    return app


def traced_by(processor: Any) -> Telemetry:
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(processor)
    return Telemetry(tracer_provider=provider, meter_provider=MeterProvider([InMemoryMetricReader()]))


@pytest.mark.parametrize("where", ["start", "end"])
async def test_a_span_processor_that_raises_breaks_no_request(
    where: str, wire: WireChecker, wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    processor = Broken(where)
    server = build(traced_by(processor))
    # 2026-07-28: two rounds, each in its span, the handler's log message in one too
    client = MemoryClient(server, capabilities={"elicitation": {}}, checker=wire)
    final, rounds = await client.rounds(
        "tools/call", {"name": "greet"}, lambda _k, _r: {"action": "accept", "content": {"name": "Ada"}}
    )
    assert len(rounds) == 2 and final["result"]["content"][0]["text"] == "hello Ada"
    # 2025-11-25: the server's own question is a span of kind CLIENT inside the call's
    session = SessionClient(server, capabilities={"elicitation": {}}, checker=wire_2025)
    await session.open()
    session.answer = lambda _k, _r: {"action": "accept", "content": {"name": "Grace"}}
    result = await session.result("tools/call", {"name": "greet"})
    assert result["content"][0]["text"] == "hello Grace"
    assert processor.calls > 0  # it was called, and raised
    # said once, as a warning naming what failed; the rest at debug level
    warned = [r for r in caplog.records if r.name == "mcp_elicit.telemetry" and r.levelname == "WARNING"]
    assert len(warned) == 1 and f"{where}ing a span" in warned[0].getMessage()


async def test_a_url_with_a_key_in_its_query_reaches_no_span() -> None:
    """A server reached at an address holding a key (``?api_key=...``, or a user name and
    password) that cannot be reached: the client's span says so, without the key."""
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry("client", tracer_provider=provider)
    port = free_port()  # nothing listens there
    for url in (
        f"http://127.0.0.1:{port}/mcp?api_key={SECRET}&region=eu",
        f"http://admin:{SECRET}@127.0.0.1:{port}/mcp#token={SECRET}",
    ):
        with pytest.raises(
            TransportError, match=rf"cannot connect to http://\S*127\.0\.0\.1:{port}/mcp"
        ) as caught:
            async with connect_http(url, telemetry=telemetry, timeout=5) as client:
                await client.list_tools()
        assert SECRET not in str(caught.value)  # nor in the message, which logs may keep
    spans = exporter.get_finished_spans()
    assert spans and all(s.attributes["error.type"] == "no_response" for s in spans)
    for span in spans:
        assert SECRET not in span.to_json()
        assert f"127.0.0.1:{port}/mcp" in (span.status.description or "")  # still says where


class BrokenPropagator:
    """A text-map propagator of the application's that raises on every use."""

    fields: frozenset[str] = frozenset({"traceparent"})

    def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
        raise RuntimeError("the propagator broke on extract")

    def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
        raise RuntimeError("the propagator broke on inject")


async def test_a_propagator_that_raises_breaks_no_request(
    wire: WireChecker, wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The context the client sent cannot be read, nor the server's sent on: each request
    is answered, in a span of its own."""
    from opentelemetry import propagate

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    server = build(Telemetry(tracer_provider=provider))
    before = propagate.get_global_textmap()
    propagate.set_global_textmap(BrokenPropagator())  # type: ignore[arg-type]
    try:
        client = MemoryClient(server, capabilities={"elicitation": {}}, checker=wire)
        traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        client.meta = lambda **extra: {  # type: ignore[method-assign]
            **MemoryClient.meta(client, **extra),
            "traceparent": traceparent,
        }
        final, _ = await client.rounds(
            "tools/call", {"name": "greet"}, lambda _k, _r: {"action": "accept", "content": {"name": "Ada"}}
        )
        assert final["result"]["content"][0]["text"] == "hello Ada"
        session = SessionClient(server, capabilities={"elicitation": {}}, checker=wire_2025)
        await session.open()
        session.answer = lambda _k, _r: {"action": "accept", "content": {"name": "Grace"}}
        result = await session.result("tools/call", {"name": "greet"})
        assert result["content"][0]["text"] == "hello Grace"
        assert "_meta" not in session.asked[0]["params"]  # no context to send along
    finally:
        propagate.set_global_textmap(before)
    names = [s.name for s in exporter.get_finished_spans()]
    assert names.count("tools/call greet") == 3 and "elicitation/create" in names
    warned = [r for r in caplog.records if r.name == "mcp_elicit.telemetry" and r.levelname == "WARNING"]
    assert len(warned) == 1
