"""The benchmark workload on FastMCP 4.1.6.

On a 2026-07-28 request FastMCP's ``ctx.elicit()`` refuses to run (it is a
server-to-client request, a channel that revision removed); its docs point to the
"guard pattern" instead: the tool returns an ``InputRequiredResult`` and reads
``ctx.input_responses`` on the retry. FastMCP seals ``requestState`` by default (the
SDK's ``RequestStateBoundary`` under a process-local key). Served by uvicorn as
``fastmcp_server:app``; the runner sets ``FASTMCP_LOG_LEVEL=WARNING`` like every other
server's log level.
"""

from __future__ import annotations

from fastmcp import Context, FastMCP
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

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

mcp = FastMCP("bench")


@mcp.tool
async def provision(name: str, ctx: Context) -> str | InputRequiredResult:
    """Provision ``name``, asking the user which region to put it in."""
    answer = (ctx.input_responses or {}).get("region")
    if not isinstance(answer, ElicitResult) or answer.content is None:
        return InputRequiredResult(input_requests={"region": ASK_REGION}, request_state="provision-v1")
    return f"Provisioned {name} in {answer.content['region']}"


app = mcp.http_app(path="/mcp", stateless_http=True)
