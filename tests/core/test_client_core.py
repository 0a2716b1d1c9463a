"""The client's message building, mirrored headers, tool filtering and time budget
(core.client), no I/O."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.core.client import (
    Budget,
    ClientInfo,
    MessageBuilder,
    ThinkClock,
    ToolIndex,
    client_capabilities,
    param_headers,
    request_headers,
)
from mcp_elicit.wire import headers as h

from support.wire import WireChecker

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"


@pytest.mark.parametrize(
    ("modes", "sampling", "roots", "expected"),
    [
        ((), False, False, {}),
        (("form",), False, False, {"elicitation": {"form": {}}}),
        (("url",), False, False, {"elicitation": {"url": {}}}),
        (("url", "form"), True, True, {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}),
    ],
)
def test_capabilities_are_exactly_what_the_client_can_do(
    modes: tuple[str, ...], sampling: bool, roots: bool, expected: dict[str, Any]
) -> None:
    assert client_capabilities(elicitation=modes, sampling=sampling, roots=roots) == expected


def test_modern_requests_carry_meta_and_fresh_ids(wire: WireChecker) -> None:
    builder = MessageBuilder(ClientInfo("t", "1.2", title="T"), {"elicitation": {"form": {}}})
    given_params = {"name": "x", "arguments": {"a": 1}, "_meta": {"progressToken": "p"}}
    rid1, first = builder.request("tools/call", given_params, "2026-07-28")
    rid2, second = builder.request("tools/call", given_params, "2026-07-28")
    assert rid1 != rid2
    meta = first["params"]["_meta"]
    assert meta == {
        "progressToken": "p",
        META_VERSION: "2026-07-28",
        META_CAPS: {"elicitation": {"form": {}}},
        META_INFO: {"name": "t", "version": "1.2", "title": "T"},
    }
    assert given_params["_meta"] == {"progressToken": "p"}
    wire.request(first)
    _, listing = builder.request("tools/list", None, "2026-07-28")
    assert listing["params"]["_meta"][META_VERSION] == "2026-07-28"
    wire.request(listing)
    wire.request(second)


def test_handshake_requests_carry_no_meta_of_ours(wire_2025: WireChecker) -> None:
    builder = MessageBuilder(ClientInfo(), {})
    _, message = builder.request("tools/list", None, "2025-11-25")
    assert "params" not in message
    wire_2025.request(message)
    _, call = builder.request("tools/call", {"name": "x"}, "2025-11-25")
    assert call["params"] == {"name": "x"}
    wire_2025.request(call)
    note = builder.notification("notifications/initialized", None, "2025-11-25")
    assert note == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    wire_2025.notification(note)


def test_answers_to_server_requests(wire_2025: WireChecker) -> None:
    ok = MessageBuilder.result("s-1", {"action": "accept", "content": {"n": 1}})
    wire_2025.response("elicitation/create", ok)
    err = MessageBuilder.error("s-2", -32601, "Method not found", {"x": 1})
    assert err["error"] == {"code": -32601, "message": "Method not found", "data": {"x": 1}}
    wire_2025.response("elicitation/create", err)


def test_standard_headers_mirror_the_body() -> None:
    builder = MessageBuilder(ClientInfo(), {})
    _, call = builder.request("tools/call", {"name": "my-hyphenated-tool"}, "2026-07-28")
    assert request_headers(call, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "my-hyphenated-tool",
    }
    _, read = builder.request("resources/read", {"uri": "file:///a%20b.txt"}, "2026-07-28")
    assert request_headers(read, "2026-07-28")["Mcp-Name"] == "file:///a%20b.txt"
    _, listing = builder.request("tools/list", None, "2026-07-28")
    assert "Mcp-Name" not in request_headers(listing, "2026-07-28")


def test_a_name_that_is_not_plain_ascii_travels_as_the_sentinel() -> None:
    _, call = MessageBuilder(ClientInfo(), {}).request("prompts/get", {"name": "résumé"}, "2026-07-28")
    value = request_headers(call, "2026-07-28")["Mcp-Name"]
    assert value.startswith("=?base64?")
    assert h.decode_value(value) == "résumé"


def test_handshake_headers_are_the_version_only_and_none_before_initialize() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    assert request_headers(message, "2025-11-25") == {"MCP-Protocol-Version": "2025-11-25"}
    assert request_headers(message, None) == {}


SPECS = {
    ("region",): "Region",
    ("priority",): "Priority",
    ("verbose",): "Verbose",
    ("name",): "Name",
    ("opts", "mode"): "Mode",
}


def test_param_headers_encode_each_annotated_value() -> None:
    out = param_headers(
        SPECS,
        {
            "region": "us-west1",
            "priority": 42,
            "verbose": False,
            "name": " padded ",
            "opts": {"mode": "fast"},
            "query": "SELECT 1",
        },
    )
    assert out == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Name": h.encode_value(" padded "),
        "Mcp-Param-Mode": "fast",
    }


def test_param_headers_omit_null_absent_and_unrepresentable_values() -> None:
    out = param_headers(SPECS, {"region": None, "priority": 2**60, "verbose": [1], "opts": "not an object"})
    assert out == {}


def test_a_tool_call_mirrors_params_only_from_its_specs() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"region": "eu", "query": "q"}},
    }
    headers = request_headers(message, "2026-07-28", header_specs={("region",): "Region"})
    assert headers["Mcp-Param-Region"] == "eu"
    assert not any(k.lower() == "mcp-param-query" for k in headers)
    assert "Mcp-Param-Region" not in request_headers(
        message, "2025-11-25", header_specs={("region",): "Region"}
    )


@given(st.text(max_size=60))
def test_every_string_argument_survives_the_header_round_trip(value: str) -> None:
    out = param_headers({("v",): "V"}, {"v": value})
    raw = out["Mcp-Param-V"]
    assert all(0x20 <= ord(c) <= 0x7E for c in raw)
    assert raw == raw.strip()
    assert h.decode_value(raw) == value


def tool(name: str, **props: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": props}}


def test_tools_with_invalid_header_annotations_are_dropped_with_a_reason() -> None:
    index = ToolIndex(check_headers=True)
    kept = index.admit(
        [
            tool("valid", region={"type": "string", "x-mcp-header": "Region"}),
            tool("empty", v={"type": "string", "x-mcp-header": ""}),
            tool("object", v={"type": "object", "x-mcp-header": "Data"}),
            tool("number", v={"type": "number", "x-mcp-header": "N"}),
            tool("dup", a={"type": "string", "x-mcp-header": "X"}, b={"type": "string", "x-mcp-header": "x"}),
            tool("space", v={"type": "string", "x-mcp-header": "My Region"}),
            tool("ctl", v={"type": "string", "x-mcp-header": "Region\t1"}),
            tool("nonascii", v={"type": "string", "x-mcp-header": "Région"}),
            {"no": "name"},
            "junk",
        ]
    )
    assert [t["name"] for t in kept] == ["valid"]
    assert set(index.rejected) == {"empty", "object", "number", "dup", "space", "ctl", "nonascii"}
    assert "non-empty" in index.rejected["empty"]
    assert index.specs == {"valid": {("region",): "Region"}}


def test_without_header_checks_every_tool_is_kept() -> None:
    index = ToolIndex(check_headers=False)
    kept = index.admit([tool("odd", v={"type": "object", "x-mcp-header": "Data"})])
    assert [t["name"] for t in kept] == ["odd"]
    assert index.rejected == {}
    assert index.specs == {"odd": {}}


def test_a_fixed_tool_comes_back_and_reset_forgets() -> None:
    index = ToolIndex()
    index.admit([tool("t", v={"type": "object", "x-mcp-header": "V"})])
    assert "t" in index.rejected
    index.admit([tool("t", v={"type": "string", "x-mcp-header": "V"})])
    assert "t" not in index.rejected
    assert index.specs["t"] == {("v",): "V"}
    index.reset()
    assert index.specs == {}


def test_network_refs_are_left_alone() -> None:
    schema = {
        "type": "object",
        "$defs": {"id": {"type": "string"}},
        "properties": {"id": {"$ref": "#/$defs/id"}, "profile": {"$ref": "http://localhost:1/canary.json"}},
    }
    index = ToolIndex()
    kept = index.admit([{"name": "lookup", "inputSchema": schema}])
    assert kept[0]["inputSchema"] == schema


def test_think_time_is_not_network_time() -> None:
    clock = ThinkClock()
    budget = Budget.begin(10.0, 100.0, clock)
    assert budget.remaining(103.0) == 7.0
    clock.start(103.0)
    clock.start(104.0)  # two answerers at once count once
    clock.stop(150.0)
    assert budget.remaining(160.0) == pytest.approx(7.0)  # still thinking: the budget is frozen
    clock.stop(170.0)
    assert budget.remaining(171.0) == pytest.approx(6.0)
    clock.stop(180.0)  # an extra stop is harmless
    assert clock.total(200.0) == pytest.approx(67.0)


def test_a_budget_ignores_thinking_that_happened_before_it() -> None:
    clock = ThinkClock()
    clock.start(0.0)
    clock.stop(50.0)
    budget = Budget.begin(5.0, 60.0, clock)
    assert budget.remaining(62.0) == 3.0


def test_a_header_annotation_on_a_field_of_several_types_drops_that_tool_only() -> None:
    """``"type": ["string", "null"]`` is valid JSON Schema, but no header annotation may sit
    on it: the tool is dropped with the reason, the others kept (it made ``tools/list``, and
    so every tool call over HTTP, fail with a TypeError)."""
    index = ToolIndex(check_headers=True)
    kept = index.admit(
        [
            tool("nullable", v={"type": ["string", "null"], "x-mcp-header": "V"}),
            tool("odd", v={"type": {"is": "string"}, "x-mcp-header": "V"}),
            tool("valid", region={"type": "string", "x-mcp-header": "Region"}),
        ]
    )
    assert [t["name"] for t in kept] == ["valid"]
    assert "not ['string', 'null']" in index.rejected["nullable"]
    assert set(index.rejected) == {"nullable", "odd"}
