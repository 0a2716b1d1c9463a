"""A server for the deep-arguments tests: a tool that writes a mark to a file (its side
effect) before it asks its first question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_elicit import Boolean, Context, Form, Server

app = Server("deep")


def mark(path: str) -> None:
    with Path(path).open("a", encoding="utf-8") as out:
        out.write("ran\n")


@app.tool(description="Writes a mark to the file named, then asks whether to go on")
async def act(ctx: Context, marks: str, deep: list[Any]) -> str:
    mark(marks)
    answer = await ctx.elicit("Go on?", Form(go=Boolean()))
    return "went on" if answer.data else "stopped"
