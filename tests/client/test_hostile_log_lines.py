"""What a hostile server sends reaches the client's log and spans bounded and inert: a
request id of 20,000 characters is cut, a method with a line break, an escape and a
bidirectional override is quoted, an error message's line break is escaped and a URL in
it, or a URL-mode page's, keeps no query. Driven over stdio against a small script server, with the real client."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.client import Scripted
from mcp_elicit.telemetry import Telemetry
from mcp_elicit.transports.stdio_client import connect_stdio

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

pytestmark = pytest.mark.anyio

# 2025-11-25. Asked initialize, it first sends a request of an odd method under a huge id
# (refused: too early). Asked tools/call, it sends such a request again, then a URL-mode
# question whose URL holds a key (after a tools/call of a tool whose name has a line
# break and 300 more characters), then answers an id nobody sent with an error, then the
# call.
HOSTILE = r"""
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
def read():
    return json.loads(sys.stdin.readline())
LONG = "7" * 20_000
METHOD = "evil\r\nFAKE LINE \x1b[31m\u202e"
MESSAGE = "boom\nFAKE LINE https://a.example/cb?token=SECRET"
init = read()
send({"jsonrpc": "2.0", "id": LONG + "e", "method": METHOD, "params": {}})  # too early
read()  # the client's -32600
send({"jsonrpc": "2.0", "id": init["id"], "result": {
    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "1"}}})
read()  # notifications/initialized
call = read()
send({"jsonrpc": "2.0", "id": LONG, "method": METHOD, "params": {}})
read()  # the client's -32601
send({"jsonrpc": "2.0", "id": "t1", "method": "tools/call", "params": {"name": "x\n" + "y" * 300}})
read()  # the client's -32601 again: no server's tool is called on a client
send({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create", "params": {
    "mode": "url", "message": MESSAGE, "elicitationId": "e0",
    "url": "http://a.example/approve?token=SECRET"}})
read()  # the client's answer (no scripted one: cancel)
send({"jsonrpc": "2.0", "id": LONG + "x", "error": {"code": -32000, "message": MESSAGE}})
send({"jsonrpc": "2.0", "id": call["id"], "result": {"content": []}})
sys.stdin.read()
"""


async def _run(tmp_path: Path, telemetry: Telemetry | None = None) -> None:
    script = tmp_path / "hostile.py"  # a file: the command a line names stays short
    script.write_text(HOSTILE, encoding="utf-8")
    command = [sys.executable, str(script)]
    async with connect_stdio(
        command, versions=["2025-11-25"], timeout=20, telemetry=telemetry, answerer=Scripted.from_script([])
    ) as client:
        assert await client.call_tool("t") == {"content": []}


def _inert(line: str) -> None:
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\u202e" not in line, line
    assert len(line) < 2_000, len(line)
    assert "SECRET" not in line, line


async def test_a_servers_ids_methods_and_messages_are_cut_and_inert_in_the_log(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_elicit")
    await _run(tmp_path)
    lines = [r.getMessage() for r in caplog.records]
    about = [line for line in lines if "777777" in line or "FAKE" in line or "a.example" in line]
    assert about, lines
    for line in about:
        _inert(line)
    unknown = [line for line in about if "unknown request" in line]
    assert len(unknown) == 1, about
    assert "request '7777" in unknown[0] and "…" in unknown[0], unknown[0]
    assert "boom\\nFAKE LINE https://a.example/cb?REDACTED" in unknown[0], unknown[0]
    early = [line for line in about if "before the session was initialized" in line]
    assert len(early) == 1, about
    assert "'evil\\r\\nFAKE LINE \\x1b[31m\\u202e' (request '7777" in early[0], early[0]
    # a URL-mode page's one-time key stays out of the reports the log repeats
    paged = [line for line in about if "http://a.example/approve?REDACTED" in line]
    assert len(paged) == 2, about


async def test_a_servers_huge_request_id_is_cut_on_the_span(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    await _run(tmp_path, Telemetry(tracer_provider=provider))
    ids: dict[str, Any] = {
        span.name: span.attributes.get("jsonrpc.request.id") for span in exporter.get_finished_spans()
    }
    assert ids["tools/call t"] == "2", ids  # a short id as is: its string form
    (asked,) = [rid for name, rid in ids.items() if name.startswith("evil")]
    assert asked == "7" * 128 + "…", len(asked)


async def test_a_servers_odd_method_is_inert_on_the_span(tmp_path: Path) -> None:
    """The method of the server's request, as the client's span names it and records it
    in ``mcp.method.name``: its line break, escape and override written out."""
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    await _run(tmp_path, Telemetry(tracer_provider=provider))
    spans = exporter.get_finished_spans()
    odd = [s for s in spans if s.attributes.get("mcp.method.name", "").startswith("evil")]
    assert odd, [s.name for s in spans]
    for span in odd:
        assert span.name == span.attributes["mcp.method.name"] == "evil\\r\\nFAKE LINE \\x1b[31m\\u202e"
    assert all(s.name.isprintable() for s in spans), [s.name for s in spans]
    # a tool the server names in its own request: no tool of the client's to check it
    # against, cut and inert all the same, in the span's name and the metric's attribute
    (called,) = [s for s in spans if s.attributes.get("jsonrpc.request.id") == "t1"]
    assert called.name == "tools/call x\\n" + "y" * 126 + "…", called.name
    assert called.attributes["gen_ai.tool.name"] == called.name.removeprefix("tools/call "), called.attributes
