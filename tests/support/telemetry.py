"""What the OpenTelemetry tests share: the traced server, its HTTP post, and the trace context."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.errors import ToolError
from mcp_elicit.telemetry import Telemetry

from support.otel import points

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")


from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01",
}


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


def telemetry_points(reader: InMemoryMetricReader, side: str = "client") -> list[Any]:
    return points(reader, f"mcp.{side}.operation.duration")
