"""A server that starts with one prompt and no tool: its ``grow`` prompt registers a
tool, then a second prompt (tests/server/test_list_changed_declared.py)."""

from __future__ import annotations

from mcp_elicit import Server

app = Server("growing")


@app.prompt()
async def grow() -> str:
    """Register the tool ``added``, then the prompt ``more``."""

    @app.tool()
    async def added() -> str:
        return "added"

    @app.prompt()
    async def more() -> str:
        return "more"

    return "grown"
