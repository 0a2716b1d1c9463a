"""OpenTelemetry on the server, what is recorded beyond one traced HTTP server: the
``opentelemetry-instrument`` launcher and stdio with no code, a request that raises recorded
as failed, versions and names MCP does not define recorded as ``other``, span names of
bounded length, and the server span linking the span it was received in."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mcp_elicit.telemetry import Telemetry

from support.procs import ROOT, cli, free_port
from support.telemetry import META, PARENT_ID, TRACE_ID, build, telemetry_points

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

pytestmark = pytest.mark.anyio
DEMO = ROOT / "examples" / "demo_server.py"
META_VERSION = "io.modelcontextprotocol/protocolVersion"


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
        assert (await client.request("tools/call", {"name": made_up, "arguments": {}}))["error"][
            "code"
        ] == -32602
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
    assert (await client.request("tools/call", {"name": made_up, "arguments": {}}))["error"]["code"] == -32602
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


@pytest.mark.parametrize("made_up", ["m" * 20_000, "evil\r\nFAKE \x1b[31m\u202e"])
async def test_a_made_up_method_reaches_spans_bounded_and_inert(made_up: str) -> None:
    """A client's unknown method (any length, any character) is refused (-32601); its
    span's name and ``mcp.method.name`` keep its start, each line break or escape written
    out, so a trace viewer or log exporter never shows a forged line. A method MCP
    defines is named as it is."""
    from support.memory import MemoryClient

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = MemoryClient(build(Telemetry(tracer_provider=provider)))
    assert (await client.request(made_up))["error"]["code"] == -32601
    assert await client.result("tools/list")
    odd, listed = exporter.get_finished_spans()
    assert (listed.name, listed.attributes["mcp.method.name"]) == ("tools/list", "tools/list")
    assert odd.name == odd.attributes["mcp.method.name"]
    assert odd.name.isprintable() and len(odd.name) <= 200, odd.name
    assert odd.name in ("m" * 128 + "…", "evil\\r\\nFAKE \\x1b[31m\\u202e"), odd.name


async def test_a_made_up_protocol_version_reaches_the_span_bounded_and_inert() -> None:
    """The version a client names in ``_meta`` is its own text: refused (-32022), its
    span keeps the start of it, a line break written out."""
    from support.memory import MemoryClient

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = MemoryClient(build(Telemetry(tracer_provider=provider)))
    for made_up in ("v\r\nFAKE", "9" * 20_000):
        answer = await client.request("tools/list", meta=client.meta(**{META_VERSION: made_up}))
        assert answer["error"]["code"] == -32022
    shown = [s.attributes["mcp.protocol.version"] for s in exporter.get_finished_spans()]
    assert shown == ["v\\r\\nFAKE", "9" * 128 + "…"], [v[:20] for v in shown]
