"""The benchmark workload on the official SDK (``mcp`` 2.3.0), low-level ``Server``.

The handler returns ``InputRequiredResult`` by hand, as in the SDK's multi-round-trip
docs. The low-level tier seals nothing by default; the SDK's docs make sealing a one-line
opt-in (``RequestStateBoundary``), which ``BENCH_SEAL=1`` (the default here) appends, so
that this variant does the same AEAD work as the others. ``BENCH_SEAL=0`` serves the
tier's true default, state in the clear, as a reference point. Served by uvicorn as
``sdk_lowlevel:app``.
"""

from __future__ import annotations

import os
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

ASK_REGION = ElicitRequest(
    params=ElicitRequestFormParams(
        message="Which region?",
        requested_schema={
            "type": "object",
            "properties": {"region": {"type": "string"}},
            "required": ["region"],
        },
    )
)
PROVISION = Tool(
    name="provision",
    description="Provision name, asking the user which region to put it in.",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    return ListToolsResult(tools=[PROVISION])


async def call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult | InputRequiredResult:
    answer = (params.input_responses or {}).get("region")
    if not isinstance(answer, ElicitResult) or answer.content is None:
        return InputRequiredResult(input_requests={"region": ASK_REGION}, request_state="provision-v1")
    name = (params.arguments or {})["name"]
    text = f"Provisioned {name} in {answer.content['region']}"
    return CallToolResult(content=[TextContent(type="text", text=text)])


server = Server("bench", on_list_tools=list_tools, on_call_tool=call_tool)
if os.environ.get("BENCH_SEAL", "1") != "0":
    server.middleware.append(
        RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=server.name)
    )

app = server.streamable_http_app(stateless_http=True)
