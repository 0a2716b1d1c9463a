"""What an operator reads off the spans and metrics, against the semantic conventions for
MCP: the histograms' buckets and attributes, what a span may not carry, and the context
that travels with a request. Recorded by the real OpenTelemetry SDK, driving the server
in memory."""

from __future__ import annotations

import pytest

from mcp_elicit.telemetry import Telemetry

from support.otel import points

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

pytestmark = pytest.mark.anyio

#: The bucket boundaries the conventions give every MCP duration histogram (seconds).
BOUNDARIES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


def recorded(side: str = "server") -> tuple[Telemetry, InMemorySpanExporter, InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
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
