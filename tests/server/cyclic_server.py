"""A server for test_results_not_finite.py: tools returning a value that holds itself,
which no JSON can write."""

from __future__ import annotations

from typing import Any

from mcp_elicit import Server

app = Server("cyclic")


@app.tool(description="A list holding itself twice")
def loop() -> dict[str, Any]:
    held: list[Any] = []
    held.append(held)
    held.append(held)
    return {"loop": held}


@app.tool(description="A mapping holding itself")
def own() -> dict[str, Any]:
    held: dict[str, Any] = {"ratio": 0.5}
    held["self"] = held
    return held


@app.tool(description="Answers")
def ping() -> str:
    return "pong"
