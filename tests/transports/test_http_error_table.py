"""Streamable HTTP (2026-07-28) over real sockets: the 2026-07-28 error table, unsupported
versions, missing client capabilities, and the ``Mcp-Param`` headers (``x-mcp-header``),
against ``mcp-elicit serve --http`` serving the conformance server. Every JSON-RPC message
received is checked against the official schema."""

from __future__ import annotations

from typing import Any

import pytest

from support.http import DROP, VERSION, McpHttp, meta, sentinel

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("method", "params", "meta_", "headers", "status", "code"),
    [
        pytest.param("tools/list", {}, DROP, {}, 400, -32602, id="no _meta"),
        pytest.param(
            "tools/list",
            {},
            {"io.modelcontextprotocol/protocolVersion": VERSION},
            {},
            400,
            -32602,
            id="_meta without clientCapabilities",
        ),
        pytest.param(
            "tools/list",
            {},
            {"io.modelcontextprotocol/clientCapabilities": {}},
            {},
            400,
            -32602,
            id="_meta without protocolVersion",
        ),
        pytest.param(
            "tools/list",
            {},
            {
                "io.modelcontextprotocol/protocolVersion": 2026,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            {"MCP-Protocol-Version": "2026"},
            400,
            -32602,
            id="protocolVersion a number, the header spelling it",
        ),
        pytest.param(
            "tools/list", {}, meta(progressToken=1.5), {}, 400, -32602, id="progressToken a fraction"
        ),
        pytest.param(
            "tools/list", {}, None, {"MCP-Protocol-Version": DROP}, 400, -32020, id="no version header"
        ),
        pytest.param(
            "tools/list",
            {},
            None,
            {"MCP-Protocol-Version": "2099-01-01"},
            400,
            -32020,
            id="version header differs from _meta",
        ),
        pytest.param(
            "tools/list",
            {},
            None,
            {"MCP-Protocol-Version": "2025-11-25"},
            400,
            -32020,
            id="handshake-era version header differs from _meta",
        ),
        pytest.param("tools/list", {}, None, {"Mcp-Method": DROP}, 400, -32020, id="no Mcp-Method"),
        pytest.param(
            "tools/list", {}, None, {"Mcp-Method": "prompts/list"}, 400, -32020, id="Mcp-Method differs"
        ),
        pytest.param(
            "tools/list",
            {},
            None,
            {"Mcp-Method": "Tools/List"},
            400,
            -32020,
            id="header values are case-sensitive",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": DROP},
            400,
            -32020,
            id="no Mcp-Name",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": "test_error_handling"},
            400,
            -32020,
            id="Mcp-Name differs (tool)",
        ),
        pytest.param(
            "prompts/get",
            {"name": "test_simple_prompt"},
            None,
            {"Mcp-Name": "other"},
            400,
            -32020,
            id="Mcp-Name differs (prompt)",
        ),
        pytest.param(
            "resources/read",
            {"uri": "test://static-text"},
            None,
            {"Mcp-Name": "test://static-binary"},
            400,
            -32020,
            id="Mcp-Name differs (resource)",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": "=?base64?not base64!?="},
            400,
            -32020,
            id="malformed Base64 sentinel",
        ),
        pytest.param(
            "tools/call",
            {"name": "test_simple_text"},
            None,
            {"Mcp-Name": sentinel("test_error_handling")},
            400,
            -32020,
            id="Base64 sentinel of another name",
        ),
        pytest.param("initialize", {}, None, {}, 404, -32601, id="initialize"),
        pytest.param("ping", {}, None, {}, 404, -32601, id="ping"),
        pytest.param("logging/setLevel", {"level": "info"}, None, {}, 404, -32601, id="logging/setLevel"),
        pytest.param(
            "resources/subscribe", {"uri": "test://static-text"}, None, {}, 404, -32601, id="subscribe"
        ),
        pytest.param(
            "resources/unsubscribe", {"uri": "test://static-text"}, None, {}, 404, -32601, id="unsubscribe"
        ),
        pytest.param("no/such/method", {}, None, {}, 404, -32601, id="unknown method"),
    ],
)
async def test_error_table(
    mcp: McpHttp,
    method: str,
    params: dict[str, Any],
    meta_: Any,
    headers: dict[str, object],
    status: int,
    code: int,
) -> None:
    reply = await mcp.request(method, params, rid="e-1", meta_=meta_, headers=headers, malformed=True)
    assert (reply.status, reply.error["code"]) == (status, code), reply.body
    assert reply.message["id"] == "e-1"
    assert reply.content_type == "application/json"


async def test_unsupported_version_lists_what_is_supported(mcp: McpHttp) -> None:
    wanted = "2099-01-01"
    reply = await mcp.request(
        "tools/list",
        rid=41,
        meta_={**meta(), "io.modelcontextprotocol/protocolVersion": wanted},
        headers={"MCP-Protocol-Version": wanted},
        malformed=True,
    )
    assert (reply.status, reply.error["code"]) == (400, -32022)
    assert reply.message["id"] == 41
    assert reply.error["data"]["requested"] == wanted
    assert VERSION in reply.error["data"]["supported"]


async def test_missing_client_capability(mcp: McpHttp) -> None:
    reply = await mcp.call("test_missing_capability", rid="cap", meta_=meta(capabilities={}))
    assert (reply.status, reply.error["code"]) == (400, -32021)
    assert reply.message["id"] == "cap"
    assert reply.error["data"]["requiredCapabilities"] == {"sampling": {}}
    elicit = await mcp.call("test_input_required_result_elicitation", meta_=meta(capabilities={}))
    assert (elicit.status, elicit.error["code"]) == (400, -32021)
    assert "elicitation" in elicit.error["data"]["requiredCapabilities"]


async def test_base64_sentinel_names_are_decoded(mcp: McpHttp) -> None:
    tool = await mcp.call("test_simple_text", headers={"Mcp-Name": sentinel("test_simple_text")})
    assert tool.status == 200 and tool.result["content"][0]["type"] == "text"
    resource = await mcp.request(
        "resources/read", {"uri": "test://static-text"}, headers={"Mcp-Name": sentinel("test://static-text")}
    )
    assert resource.status == 200 and resource.result["contents"][0]["uri"] == "test://static-text"


@pytest.mark.parametrize(
    ("region", "header", "status", "code"),
    [
        pytest.param("eu-west1", "eu-west1", 200, None, id="matching"),
        pytest.param("Zürich", sentinel("Zürich"), 200, None, id="matching, Base64"),
        pytest.param(" padded ", sentinel(" padded "), 200, None, id="matching, whitespace kept by Base64"),
        pytest.param("eu-west1", "us-east1", 400, -32020, id="mismatching"),
        pytest.param("eu-west1", sentinel("us-east1"), 400, -32020, id="mismatching, Base64"),
        pytest.param("eu-west1", DROP, 400, -32020, id="missing"),
        pytest.param("eu-west1", "=?base64?%%%?=", 400, -32020, id="malformed sentinel"),
    ],
)
async def test_x_mcp_header_parameter(
    mcp: McpHttp, region: str, header: object, status: int, code: int | None
) -> None:
    reply = await mcp.call(
        "test_x_mcp_header", {"region": region}, rid="hdr", headers={"Mcp-Param-Region": header}
    )
    assert reply.status == status, reply.body
    if code is None:
        assert reply.result["content"][0]["text"] == f"region={region}"
    else:
        assert reply.error["code"] == code
        assert reply.message["id"] == "hdr"


@pytest.mark.parametrize("arguments", [{}, {"region": None}], ids=["absent", "null"])
async def test_an_x_mcp_header_without_its_argument_is_a_mismatch(
    mcp: McpHttp, arguments: dict[str, Any]
) -> None:
    """No value, no header: a header naming a region the body does not carry would have a
    gateway route on a value the tool never sees."""
    reply = await mcp.call("test_x_mcp_header", arguments, rid="h", headers={"Mcp-Param-Region": "us-east1"})
    assert (reply.status, reply.error["code"]) == (400, -32020), reply.body
    assert "Mcp-Param-Region" in reply.error["message"]


async def test_x_mcp_header_not_expected_without_the_argument(mcp: McpHttp) -> None:
    reply = await mcp.call("test_x_mcp_header", {})
    assert reply.status == 200
    assert reply.result["isError"] is True  # the argument is required by the tool itself
