"""A server for test_redact_tool_errors.py that does not redact its tools' errors itself:
``mcp-elicit serve --redact-tool-errors`` turns it on."""

from __future__ import annotations

from mcp_elicit import Server

app = Server("leaky")


@app.tool(description="Fails unexpectedly, with internal details in the message")
def lookup(order: int) -> str:
    raise RuntimeError(f"SELECT * FROM orders WHERE id={order} on db.internal:5432 failed")
