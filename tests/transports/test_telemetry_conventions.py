"""What an operator reads off the spans and metrics, against the semantic conventions for
MCP: the histograms' buckets and attributes, what a span may not carry, and the context
that travels with a request. Recorded by the real OpenTelemetry SDK, driving the server
in memory."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.transports.memory import connect_memory

from support.memory import MemoryClient
from support.otel import points

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

pytestmark = pytest.mark.anyio

#: The bucket boundaries the conventions give every MCP duration histogram (seconds).
BOUNDARIES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


def tracing() -> tuple[Any, InMemorySpanExporter]:
    """A tracer provider of the SDK's, and the exporter its spans end in."""
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def recorded(side: str = "server") -> tuple[Telemetry, InMemorySpanExporter, InMemoryMetricReader]:
    provider, exporter = tracing()
    reader = InMemoryMetricReader()
    telemetry = Telemetry(side, tracer_provider=provider, meter_provider=MeterProvider([reader]))
    return telemetry, exporter, reader


@pytest.mark.parametrize("side", ["server", "client"])
async def test_every_duration_has_the_conventions_buckets(side: str) -> None:
    """The SDK's default buckets (0, 5, 10, 25 ... 10000) are meant for milliseconds: in
    seconds nearly every request would fall in the first one."""
    telemetry, _, reader = recorded(side)
    for incoming in (True, False):
        with telemetry.request("tools/list", 1, {}, version="2026-07-28", session=None, incoming=incoming):
            pass
    telemetry.session_ended("2025-11-25", {"network.transport": "pipe"}, 42.0)
    names = [f"mcp.{s}.operation.duration" for s in ("server", "client")]
    names.append(f"mcp.{side}.session.duration")
    for name in names:
        (point,) = points(reader, name)
        assert tuple(point.explicit_bounds) == BOUNDARIES, name


def build(telemetry: Telemetry) -> Server:
    app = Server("conventions", telemetry=telemetry)

    @app.tool()
    async def hello() -> str:
        """Says hello."""
        return "hello"

    return app


async def test_a_json_rpc_error_names_its_code_in_the_metric_too() -> None:
    """``rpc.response.status_code`` is conditionally required on the duration as on the
    span: an operator tells refusals apart by it without reading traces."""
    telemetry, exporter, reader = recorded()
    client = MemoryClient(build(telemetry))
    answer = await client.request("tools/call", {"name": "hello", "arguments": {}, "requestState": "v2.x"})
    assert answer["error"]["code"] == -32602
    assert await client.result("tools/call", {"name": "hello", "arguments": {}})
    (refused, answered) = exporter.get_finished_spans()
    assert refused.attributes["rpc.response.status_code"] == "-32602"
    assert "rpc.response.status_code" not in answered.attributes
    codes = {
        dict(p.attributes).get("rpc.response.status_code")
        for p in points(reader, "mcp.server.operation.duration")
    }
    assert codes == {"-32602", None}


SECRET = "sk-live-4f9a2c"


@pytest.mark.parametrize(
    ("uri", "kept"),
    [
        (f"test://items/1?token={SECRET}&page=2", "test://items/1?REDACTED"),
        (f"test://admin:{SECRET}@items/1#key={SECRET}", "test://REDACTED:REDACTED@items/1#REDACTED"),
        (f"test://items/a b?token={SECRET}", "test://items/a b?REDACTED"),
        (f"urn:items:1?token={SECRET}", "urn:items:1?REDACTED"),
        # its error's message repeats it inert (a control character escaped) or cut short
        (f"urn:items:1?token={SECRET}\x1b[2K", "urn:items:1?REDACTED"),
        (f"urn:items:1?token={SECRET}&pad={'x' * 300}", "urn:items:1?REDACTED"),
        (f"urn:items:1\u2028?token={SECRET}", "urn:items:1\u2028?REDACTED"),
    ],
)
async def test_a_resource_uri_keeps_no_key_on_its_span(uri: str, kept: str) -> None:
    """``mcp.resource.uri`` keeps the scheme, authority and path an operator needs; a
    query, a fragment and user information, where keys and signatures travel, are left out."""
    telemetry, exporter, _ = recorded()
    app = build(telemetry)

    @app.resource("test://items/{item_id}")
    def item(item_id: str) -> str:
        return item_id

    client = MemoryClient(app)
    await client.request("resources/read", {"uri": uri})
    (span,) = exporter.get_finished_spans()
    assert span.attributes["mcp.resource.uri"] == kept
    assert SECRET not in span.to_json()


async def test_the_baggage_a_client_sends_reaches_the_handler() -> None:
    """The conventions carry ``baggage`` in ``_meta`` next to ``traceparent``: the handler
    (and what it calls, its own requests included) sees it, as in any traced service."""
    from opentelemetry import baggage

    telemetry, exporter, _ = recorded()
    app = build(telemetry)

    @app.tool()
    async def tenant() -> str:
        """The tenant the caller's baggage names."""
        return str(baggage.get_baggage("tenant"))

    client = MemoryClient(app)
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    meta = client.meta(traceparent=traceparent, baggage="tenant=acme,tier=gold")
    result = await client.result("tools/call", {"name": "tenant", "arguments": {}}, meta=meta)
    assert result["content"][0]["text"] == "acme"
    (span,) = exporter.get_finished_spans()
    assert format(span.context.trace_id, "032x") == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert "acme" not in span.to_json()  # handed on, not recorded


async def test_the_rounds_of_one_elicitation_are_one_trace_in_order() -> None:
    """A 2026-07-28 call that asks is several requests: without a span of the caller's
    around them, each round's span used to start a trace of its own, nothing tying the
    retry to the call it finishes. Now the retries continue the first round's trace, each
    linking the round before it, and the server's spans follow."""
    provider, exporter = tracing()
    app = build(Telemetry(tracer_provider=provider))

    @app.tool()
    async def deploy(ctx: Context) -> str:
        """Asks twice."""
        region = await ctx.elicit("Region?", Form(region=String()), key="region")
        size = await ctx.elicit("Size?", Form(size=String()), key="size")
        return f"{region.content} {size.content}"

    answers = Scripted.from_script([{"content": {"region": "eu"}}, {"content": {"size": "xl"}}])
    client_side = Telemetry("client", tracer_provider=provider)
    async with connect_memory(app, answerer=answers, telemetry=client_side) as client:
        await client.call_tool("deploy", {})
    spans = [s for s in exporter.get_finished_spans() if s.name == "tools/call deploy"]
    sent = [s for s in spans if s.kind == SpanKind.CLIENT]
    assert len(sent) == 3 and len([s for s in spans if s.kind == SpanKind.SERVER]) == 3
    assert len({s.context.trace_id for s in spans}) == 1  # one elicitation, one trace
    first, *retries = sent
    assert first.parent is None
    for before, retry in zip(sent, retries, strict=False):
        assert retry.parent.span_id == first.context.span_id
        (link,) = retry.links
        assert link.context.span_id == before.context.span_id
