"""JSON has no NaN and no infinity. A tool that returns one (``{"ratio": float("nan")}``)
was sent ``null`` without a word, or, with an ``outputSchema``, told "None is not of type
'number'", which is not what it returned. It is an ``isError`` result naming where the
value is (a JSON path, bounded) and what to return instead, for content and structured
results alike; a prompt's or resource's such value is refused as any value that cannot be
sent (-32603, the reason logged). Driven in memory, every message checked against the
schema."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pydantic
import pytest
from mcp_types import CallToolResult, TextContent, TextResourceContents

from mcp_elicit import Server

from support.http import meta
from support.memory import MemoryClient
from support.procs import stdio_process
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
NAN, INF = float("nan"), float("inf")
FIX = "JSON has no NaN or infinity: return None or a string instead"


@dataclass
class Point:
    x: float
    y: float


@dataclass
class Track:
    name: str
    points: list[Point]


class Reading(pydantic.BaseModel):
    value: float


def build() -> Server:
    app = Server("not-finite")

    @app.tool()
    def plain() -> dict[str, Any]:
        return {"ratio": NAN}

    @app.tool()
    def nested() -> list[Any]:
        return ["ok", {"rows": [{"a": 1.0}, {"a": -INF}]}]

    @app.tool()
    def typed() -> Track:  # an outputSchema, derived
        return Track("t", [Point(0.0, 1.0), Point(INF, 2.0)])

    @app.tool()
    def model() -> Reading:
        return Reading(value=NAN)

    @app.tool()
    def given() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="x")], structuredContent={"v": [NAN]})

    @app.tool()
    def long_key() -> dict[str, Any]:
        return {"k" * 1000: {"x": NAN}}

    @app.tool()
    def keyed() -> dict[Any, Any]:
        return {"by id": {7: [0.5, NAN]}}

    @app.tool()
    def finite() -> dict[str, Any]:
        return {"ratio": 0.5, "big": 1e308, "nothing": None}

    @app.prompt()
    def plan() -> list[Any]:
        return [("user", {"score": NAN})]

    @app.resource("data://ratio")
    def ratio() -> dict[str, Any]:
        return {"ratio": INF}

    return app


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("plain", "$.ratio is NaN"),
        ("nested", "$[1].rows[1].a is -Infinity"),
        ("typed", "$.points[1].x is Infinity"),
        ("model", "$.value is NaN"),
        ("given", "$.structuredContent.v[0] is NaN"),
        ("keyed", '$["by id"]["7"][1] is NaN'),
    ],
)
async def test_a_tool_result_holding_nan_or_an_infinity_says_where(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, name: str, said: str
) -> None:
    client = MemoryClient(build(), checker=wire)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        result = await client.result("tools/call", {"name": name, "arguments": {}})
    assert result["isError"] is True
    assert result["content"] == [
        {
            "type": "text",
            "text": f"{name}: the function's return value cannot be sent: {said}; {FIX}",
        }
    ]
    assert said in caplog.text


async def test_the_path_is_bounded(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    result = await client.result("tools/call", {"name": "long_key", "arguments": {}})
    text = result["content"][0]["text"]
    assert result["isError"] is True and "is NaN" in text
    assert len(text) < 400, text


async def test_finite_numbers_and_none_are_sent_as_they_are(wire: WireChecker) -> None:
    client = MemoryClient(build(), checker=wire)
    result = await client.result("tools/call", {"name": "finite", "arguments": {}})
    assert "isError" not in result
    assert orjson.loads(result["content"][0]["text"]) == {"ratio": 0.5, "big": 1e308, "nothing": None}


async def test_a_prompt_or_resource_holding_one_is_refused_and_logged(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    client = MemoryClient(build(), checker=wire)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        prompt = await client.request("prompts/get", {"name": "plan"})
        read = await client.request("resources/read", {"uri": "data://ratio"})
    assert prompt["error"] == {"code": -32603, "message": "Internal error"}
    assert read["error"] == {"code": -32603, "message": "Internal error"}
    assert f"$[0][1].score is NaN; {FIX}" in caplog.text  # from the top of what it returned
    assert f"$.ratio is Infinity; {FIX}" in caplog.text


class Measure(float):
    """A float of a class of its own, as numpy's ``float64`` is."""


def build_more() -> Server:
    app = Server("not-finite-more")

    @app.tool()
    def block() -> dict[str, Any]:  # a content block as a mapping, returned alone
        return {"type": "text", "text": "x", "_meta": {"score": NAN}}

    @app.tool()
    def measured() -> dict[str, Any]:
        return {"ok": Measure(0.5), "bad": [Measure("nan")]}

    @app.tool()
    def fine_measure() -> dict[str, Any]:
        return {"ok": Measure(0.5)}

    @app.prompt()
    def given_block() -> list[Any]:  # a content block as a mapping in a message
        return [{"role": "user", "content": {"type": "text", "text": "x", "_meta": {"s": INF}}}]

    @app.prompt()
    def paired_block() -> list[Any]:
        return [("user", {"type": "text", "text": "x", "_meta": {"s": NAN}})]

    return app


@pytest.mark.parametrize(
    ("name", "said"), [("block", "$._meta.score is NaN"), ("measured", "$.bad[0] is NaN")]
)
async def test_a_content_block_or_a_float_of_its_own_class_says_where(
    wire: WireChecker, name: str, said: str
) -> None:
    client = MemoryClient(build_more(), checker=wire)
    result = await client.result("tools/call", {"name": name, "arguments": {}})
    assert result["isError"] is True
    assert (
        result["content"][0]["text"] == f"{name}: the function's return value cannot be sent: {said}; {FIX}"
    )


async def test_a_finite_float_of_its_own_class_is_sent_as_a_number(wire: WireChecker) -> None:
    client = MemoryClient(build_more(), checker=wire)
    result = await client.result("tools/call", {"name": "fine_measure", "arguments": {}})
    assert "isError" not in result, result
    assert orjson.loads(result["content"][0]["text"]) == {"ok": 0.5}


@pytest.mark.parametrize(
    ("name", "said"),
    [("given_block", "$[0].content._meta.s is Infinity"), ("paired_block", "$[0][1]._meta.s is NaN")],
)
async def test_a_prompt_content_block_holding_one_is_refused(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, name: str, said: str
) -> None:
    client = MemoryClient(build_more(), checker=wire)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        answer = await client.request("prompts/get", {"name": name})
    assert answer.get("error") == {"code": -32603, "message": "Internal error"}, answer
    assert f"{said}; {FIX}" in caplog.text


async def test_resource_contents_holding_one_are_refused(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    app = Server("not-finite-contents")

    @app.resource("data://given")
    def given() -> TextResourceContents:
        return TextResourceContents(uri="data://given", text="x", _meta={"s": NAN})

    client = MemoryClient(app, checker=wire)
    with caplog.at_level(logging.ERROR, logger="mcp_elicit.server"):
        answer = await client.request("resources/read", {"uri": "data://given"})
    assert answer.get("error") == {"code": -32603, "message": "Internal error"}, answer
    assert f"returned a value that cannot be sent: $._meta.s is NaN; {FIX}" in caplog.text


async def test_a_value_holding_itself_is_an_error_not_a_hang(tmp_path: Path, wire: WireChecker) -> None:
    """The walk stops where orjson would (no JSON nests that deep), not after exploring every
    way down a list holding itself twice (2**256 of them): a real server, over stdio."""
    async with stdio_process(Path(__file__).with_name("cyclic_server.py"), log_dir=tmp_path) as stdio:
        for rid, name in enumerate(("loop", "own"), start=1):
            await stdio.send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": {}, "_meta": meta()},
                }
            )
            answer, _ = await stdio.until(rid)
            wire.response("tools/call", answer)
            result = answer["result"]
            assert result["isError"] is True
            assert result["content"][0]["text"].startswith(
                f"{name}: the function's return value cannot be sent: it nests deeper than 256 levels"
            ), result
        await stdio.send(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ping", "_meta": meta()}}
        )
        assert (await stdio.until(3))[0]["result"]["content"][0]["text"] == "pong"
