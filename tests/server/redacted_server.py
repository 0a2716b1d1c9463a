"""A server for test_redact_tool_errors.py: ``redact_tool_errors=True``, and tools that
fail in each way a tool can."""

from __future__ import annotations

from mcp_elicit import Server, ToolError

app = Server("redacted", redact_tool_errors=True)


@app.tool(description="Fails unexpectedly, with internal details in the message")
def lookup(order: int) -> str:
    raise RuntimeError(f"SELECT * FROM orders WHERE id={order} on db.internal:5432 failed")


@app.tool(description="Fails on purpose")
def refuse() -> str:
    raise ToolError("No orders today")
