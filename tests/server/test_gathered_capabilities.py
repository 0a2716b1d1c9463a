"""Questions gathered together (``ctx.gather``) from a client that lacks several of the
capabilities they need, over real HTTP on both revisions that have -32021: the error names
every one of them at once, in its message and its ``data.requiredCapabilities`` (checked
against the official schema), so that a client adds them all before it retries rather than
meeting them one by one. A single question's error is unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, MultiChoice, Server, String
from mcp_elicit.client import Scripted
from mcp_elicit.errors import MissingClientCapability
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.memory import connect_memory

from support.http import McpHttp, meta
from support.procs import InProcess, uvicorn_server
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
FORM = Form(name=String())
PAGE = "https://pay.example.com/checkout"


def build() -> Server:
    app = Server("asks-several")

    @app.tool()
    async def form_and_sample(ctx: Context) -> str:
        await ctx.gather(ctx.elicit("Name?", FORM), ctx.sample("Say hi", max_tokens=5))
        return "asked"

    @app.tool()
    async def form_and_url(ctx: Context) -> str:
        await ctx.gather(ctx.elicit("Name?", FORM), ctx.elicit_url("Pay here", PAGE))
        return "asked"

    @app.tool()
    async def all_kinds(ctx: Context) -> str:
        await ctx.gather(
            ctx.elicit("Name?", FORM), ctx.elicit_url("Pay here", PAGE), ctx.sample("Hi"), ctx.list_roots()
        )
        return "asked"

    @app.tool()
    async def form_only(ctx: Context) -> str:
        await ctx.elicit("Name?", FORM)
        return "asked"

    return app


@pytest.fixture
async def running() -> AsyncIterator[InProcess]:
    async with uvicorn_server(StreamableHTTP(build())) as served:
        yield served


CASES = [
    pytest.param(
        "form_and_sample",
        {},
        {"elicitation": {"form": {}}, "sampling": {}},
        "elicitation.form, sampling",
        id="form+sampling",
    ),
    pytest.param(
        "form_and_url",
        {},
        {"elicitation": {"form": {}, "url": {}}},
        "elicitation.form, elicitation.url",
        id="form+url",
    ),
    pytest.param(
        "all_kinds",
        {"elicitation": {}},
        {"elicitation": {"url": {}}, "sampling": {}, "roots": {}},
        "elicitation.url, sampling, roots",
        id="url+sampling+roots, form declared",
    ),
    pytest.param(
        "form_only",
        {},
        {"elicitation": {"form": {}}},
        None,
        id="one question: unchanged",
    ),
]


def _check(error: dict[str, Any], required: dict[str, Any], named: str | None, wire: WireChecker) -> None:
    """``named``: the capabilities the message lists; None for a single question's own."""
    assert error["code"] == -32021, error
    assert error["data"] == {"requiredCapabilities": required}
    wire._validate(error["data"]["requiredCapabilities"], "ClientCapabilities")
    if named is None:  # as it always was
        assert error["message"] == (
            "This request needs the client capability elicitation.form, which the client did not declare"
        )
    else:
        assert f"the client capabilities {named}" in error["message"], error["message"]


@pytest.mark.parametrize(("tool", "declared", "required", "named"), CASES)
async def test_gathered_questions_name_every_missing_capability_on_2026_07_28(
    running: InProcess,
    wire: WireChecker,
    tool: str,
    declared: dict[str, Any],
    required: dict[str, Any],
    named: str | None,
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        reply = await McpHttp(http, running.url, wire).call(tool, meta_=meta(capabilities=declared))
    assert reply.status == 400, reply.body  # checked against MissingRequiredClientCapabilityError
    assert "input_required" not in reply.body.decode()
    _check(reply.error, required, named, wire)


@pytest.mark.parametrize(("tool", "declared", "required", "named"), CASES)
async def test_gathered_questions_name_every_missing_capability_on_2025_11_25(
    running: InProcess,
    wire_2025: WireChecker,
    tool: str,
    declared: dict[str, Any],
    required: dict[str, Any],
    named: str | None,
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025, capabilities=declared)
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool}}
        wire_2025.request(call)
        response = await http.post(running.url, json=call, headers=headers)
    body = response.json()
    wire_2025.response("tools/call", body)
    assert body["id"] == 7
    _check(body["error"], required, named, wire_2025)


def old_and_missing() -> Server:
    app = Server("old-and-missing")

    @app.tool()
    async def sample_and_pick(ctx: Context) -> str:
        await ctx.gather(ctx.sample("Say hi"), ctx.elicit("Pick", Form(tags=MultiChoice(["a", "b"]))))
        return "asked"

    return app


async def _sample_and_pick_at_2025_06_18() -> MissingClientCapability:
    answers = Scripted.from_script([{"action": "accept", "content": {}}])  # declares forms, no sampling
    async with connect_memory(old_and_missing(), answerer=answers, versions=["2025-06-18"]) as client:
        with pytest.raises(MissingClientCapability) as caught:
            await client.call_tool("sample_and_pick", {})
    return caught.value


async def test_a_multi_select_at_2025_06_18_is_named_with_the_capabilities_gathered_beside_it() -> None:
    # the revision lacks the multi-select, the client lacks sampling: one error names both,
    # as for two capabilities, rather than the multi-select first and sampling on the retry
    error = await _sample_and_pick_at_2025_06_18()
    assert error.data == {
        "requiredCapabilities": {"sampling": {}, "elicitation": {"form": {}}},
        "requiredProtocolVersion": "2025-11-25",
    }
    assert "the client capabilities sampling, elicitation.form" in str(error)


async def test_the_client_is_told_every_option_a_gathered_error_needs_the_revision_among_them() -> None:
    # a later revision alone would not do: the retry would meet sampling
    message = str(await _sample_and_pick_at_2025_06_18())
    assert "pass Client versions= that include 2025-11-25 or a later revision" in message, message
    assert "a sampling= callback" in message, message


async def test_a_gathered_multi_select_at_2025_06_18_keeps_its_field_name() -> None:
    # alone, the error names the field; gathered, it named only elicitation.form, leaving the
    # person to guess which field of which form the revision could not carry
    message = str(await _sample_and_pick_at_2025_06_18())
    assert "a multi-select (field 'tags')" in message, message
    assert "MCP 2025-06-18 does not have a multi-select (field 'tags')" in message, message
