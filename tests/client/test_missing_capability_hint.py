"""A server that needs a capability the client did not declare answers -32021; the error
the developer gets says which ``Client`` option gives it (an answerer with the mode, a
sampling or roots callback), at both revisions. It said only what was missing, in the
server's terms ("elicitation.form"), not what to change in the client."""

from __future__ import annotations

import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.client import Answerer, ElicitAnswer, ElicitationRequest, NoAnswerer
from mcp_elicit.errors import MissingClientCapability
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]

server = Server("needy")


@server.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", Form(name=String()))
    return answer.action


@server.tool()
async def page(ctx: Context) -> str:
    answer = await ctx.elicit_url("Sign in", "http://127.0.0.1:9/signin")
    return answer.action


@server.tool()
async def think(ctx: Context) -> str:
    reply = await ctx.sample("Say hi")
    return str(reply)


class FormsOnly:
    modes = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.cancel()


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("answerer", "tool", "hint"),
    [
        (NoAnswerer(), "ask", "pass Client an answerer= whose modes include form"),
        (FormsOnly(), "page", "pass Client an answerer= whose modes include url"),
        (FormsOnly(), "think", "pass Client a sampling= callback"),
    ],
)
async def test_the_error_says_which_client_option_gives_the_capability(
    revision: str, answerer: Answerer, tool: str, hint: str
) -> None:
    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(running.url, versions=[revision], answerer=answerer) as client:
            with pytest.raises(MissingClientCapability) as caught:
                await client.call_tool(tool)
    assert hint in str(caught.value)
    assert caught.value.code == -32021


class FormsAndUrls:
    modes = frozenset({"form", "url"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return ElicitAnswer.cancel()


async def test_a_revision_without_the_capability_is_not_told_to_declare_it() -> None:
    """At 2025-06-18 no client can take a URL-mode question, whatever its answerer: the
    error names the revision that brought it, not an answerer the client already has."""
    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(running.url, versions=["2025-06-18"], answerer=FormsAndUrls()) as client:
            with pytest.raises(MissingClientCapability) as caught:
                await client.call_tool("page")
    said = str(caught.value)
    assert "answerer=" not in said, said
    assert "(pass Client versions= that include 2025-11-25 or a later revision:" in said, said


async def test_a_tasks_method_says_to_pass_tasks() -> None:
    async with uvicorn_server(StreamableHTTP(server)) as running:
        async with connect_http(running.url, versions=["2026-07-28"]) as client:
            with pytest.raises(MissingClientCapability) as caught:
                await client.request("tasks/get", {"taskId": "t1"})
    assert "(pass Client tasks=True)" in str(caught.value), str(caught.value)
