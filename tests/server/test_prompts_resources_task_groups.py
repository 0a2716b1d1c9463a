"""A 2025-11-25 prompt's or resource's question asked from a sibling task
(``asyncio.TaskGroup``) that fails the request (a URL step's -32042, a form the client
did not declare it can answer: -32021) is answered as when the handler's own task asks
it, not -32603 "Internal error" for the group; as a tool's is. 2026-07-28 asks the same
questions (and refuses an answer that does not fit) the same way from either task. A
sampling question the client refuses, or the handler's own ``ToolError``, raised in a
sibling task says its message as from the handler's own task (-32603 "Internal error: ...",
a tool's ``isError`` result), on both revisions, not a bare "Internal error".
2025-11-25 over real pipes, in this process, so the session can be looked at after the
answer; 2026-07-28 over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Form, KeyRing, Server, String, ToolError
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp, meta
from support.procs import uvicorn_server
from support.stdio_pipes import Pipes, stdio_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

URL_CAPS = {"elicitation": {"url": {}}}  # no form
STEP = {"mode": "url", "message": "Link", "url": "https://example.com/link", "elicitationId": "l-1"}

Question = Callable[[Context], Awaitable[Any]]


async def url_step(ctx: Context) -> None:
    await ctx.require_url("Link", "https://example.com/link", elicitation_id="l-1")


async def form(ctx: Context) -> None:
    await ctx.elicit("Name?", Form(name=String()))


async def model(ctx: Context) -> None:
    await ctx.sample("Say hi", max_tokens=5, key="hi")


async def no_question(ctx: Context) -> None:
    raise ToolError("Nothing to ask today")  # the handler's own, said on purpose


async def tidy_own(ctx: Context) -> None:
    try:
        await form(ctx)
    finally:  # the round ends here (2026-07-28): what the handler says instead is its failure
        raise ToolError("Could not tidy up")


async def tidy_sibling(ctx: Context) -> None:
    """As ``tidy_own``, the form asked in one task while another fails once cancelled."""

    async def tidy() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise ToolError("Could not tidy up") from None

    async with asyncio.TaskGroup() as group:
        group.create_task(tidy())
        group.create_task(form(ctx))


QUESTIONS: dict[str, Question] = {
    "url_step": url_step,
    "form": form,
    "model": model,
    "said": no_question,
    "tidy_own": tidy_own,
    "tidy_sibling": tidy_sibling,
}


async def asked(ctx: Context, question: str, sibling: str) -> str:
    """Ask ``question`` in the handler's own task, or (``sibling`` "yes") from a task group's."""
    ask = QUESTIONS[question]
    if sibling != "yes":
        await ask(ctx)
        return "asked"
    async with asyncio.TaskGroup() as group:
        group.create_task(ask(ctx))
    return "asked"


def build() -> Server:
    app = Server("prompt-resource-groups", state_keys=KeyRing([bytes(range(7, 39))]))

    @app.prompt()
    async def ask(ctx: Context, question: str, sibling: str) -> str:
        return await asked(ctx, question, sibling)

    @app.resource("test://ask/{question}/{sibling}")
    async def asking(ctx: Context, question: str, sibling: str) -> str:
        return await asked(ctx, question, sibling)

    @app.tool()
    async def asks(ctx: Context, question: str, sibling: str) -> str:
        """Asks ``question`` in its own task or a task group's."""
        return await asked(ctx, question, sibling)

    return app


def request(kind: str, rid: int, question: str, sibling: str) -> dict[str, Any]:
    if kind == "tool":
        arguments = {"question": question, "sibling": sibling}
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "asks", "arguments": arguments},
        }
    if kind == "prompt":
        arguments = {"question": question, "sibling": sibling}
        params: dict[str, Any] = {"name": "ask", "arguments": arguments}
        return {"jsonrpc": "2.0", "id": rid, "method": "prompts/get", "params": params}
    params = {"uri": f"test://ask/{question}/{sibling}"}
    return {"jsonrpc": "2.0", "id": rid, "method": "resources/read", "params": params}


async def answer(pipes: Pipes, message: dict[str, Any]) -> dict[str, Any]:
    pipes.write(message)
    (response,) = await pipes.until(message["id"])  # a 5 s bound on each line read
    return response


@pytest.mark.parametrize("kind", ["prompt", "resource"])
async def test_a_url_step_asked_from_a_sibling_task_is_the_requests_32042(kind: str) -> None:
    async with stdio_session(build(), URL_CAPS) as pipes:
        response = await answer(pipes, request(kind, 1, "url_step", "yes"))
        assert response["error"]["code"] == -32042, response
        assert response["error"]["data"] == {"elicitations": [STEP]}, response
        session = pipes.server.session
        assert session is not None and session.elicitations == {"l-1": ["l-1"]}, "the step sent"


@pytest.mark.parametrize("kind", ["prompt", "resource"])
@pytest.mark.parametrize("question", ["url_step", "form"])
async def test_a_question_from_a_sibling_task_fails_the_request_as_from_the_handlers_own(
    kind: str, question: str
) -> None:
    async with stdio_session(build(), URL_CAPS) as pipes:
        own = await answer(pipes, request(kind, 1, question, "no"))
        if question == "url_step":  # done with: the sibling's may be sent under the same id
            assert pipes.server.session is not None
            pipes.server.session.completed("l-1")
        sibling = await answer(pipes, request(kind, 2, question, "yes"))
        assert own["error"]["code"] == (-32042 if question == "url_step" else -32021), own
        assert {**sibling, "id": 1} == own


@pytest.mark.parametrize("kind", ["prompt", "resource", "tool"])
async def test_a_sampling_question_the_client_refuses_in_a_sibling_task_says_why_as_in_the_own(
    kind: str,
) -> None:
    """The client answers sampling/createMessage with an error. From the handler's own
    task the request fails with that reason (-32603 "Internal error: The client refused
    ...", an isError result for a tool); from a sibling task it was a bare "Internal error"."""
    replies = []
    async with stdio_session(build(), {"sampling": {}}) as pipes:
        for rid, sibling in ((1, "no"), (2, "yes")):
            pipes.write(request(kind, rid, "model", sibling))
            asked = await pipes.read()
            assert asked.get("method") == "sampling/createMessage", asked
            pipes.write(
                {"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "No model here"}}
            )
            replies.append((await pipes.until(rid))[-1])
    own, sibling = replies
    refused = "he client refused sampling/createMessage: 'No model here'"
    if kind == "tool":
        assert own["result"]["isError"] is True and refused in own["result"]["content"][0]["text"], own
    else:
        assert own["error"]["code"] == -32603 and refused in own["error"]["message"], own
    assert {**sibling, "id": 1} == own


def said(reply: dict[str, Any]) -> str:
    """What the client was told of a failed request: an isError result's text, or the error's."""
    if "result" in reply:
        assert reply["result"]["isError"] is True, reply
        return str(reply["result"]["content"][0]["text"])
    assert reply["error"]["code"] == -32603, reply
    return str(reply["error"]["message"])


@pytest.mark.parametrize("kind", ["prompt", "resource", "tool"])
async def test_a_tool_error_raised_in_a_sibling_task_says_its_message_as_in_the_own(kind: str) -> None:
    async with stdio_session(build(), URL_CAPS) as pipes:
        own = await answer(pipes, request(kind, 1, "said", "no"))
        sibling = await answer(pipes, request(kind, 2, "said", "yes"))
    assert "Nothing to ask today" in said(own)
    assert {**sibling, "id": 1} == own


@pytest.fixture
async def mcp(wire: WireChecker) -> AsyncIterator[McpHttp]:
    async with uvicorn_server(StreamableHTTP(build())) as server, httpx.AsyncClient(timeout=10) as client:
        yield McpHttp(client, server.url, wire)


@pytest.mark.parametrize("kind", ["prompt", "resource"])
@pytest.mark.parametrize("question", ["url_step", "form"])
async def test_on_2026_07_28_a_question_from_a_sibling_task_is_asked_as_from_the_handlers_own(
    mcp: McpHttp, kind: str, question: str
) -> None:
    """The URL step is an input request of the round, the form the client cannot answer -32021."""
    answers = []
    for sibling in ("no", "yes"):
        message = request(kind, 0, question, sibling)
        reply = await mcp.request(message["method"], message["params"], meta_=meta(URL_CAPS))
        answers.append(reply.message.get("result") or reply.error)
    own, from_sibling = answers
    if question == "url_step":
        assert own["resultType"] == "input_required", own
        assert from_sibling["inputRequests"] == own["inputRequests"], from_sibling
    else:
        assert own["code"] == -32021, own
        assert from_sibling == own


@pytest.mark.parametrize("kind", ["prompt", "resource"])
async def test_on_2026_07_28_an_answer_refused_in_a_sibling_task_is_refused_as_in_the_handlers_own(
    mcp: McpHttp, kind: str
) -> None:
    """A sampling answer of the wrong shape: -32602 naming the question, from either task."""
    errors = []
    for sibling in ("no", "yes"):
        message = request(kind, 0, "model", sibling)
        caps = meta({"sampling": {}})
        first = await mcp.request(message["method"], message["params"], meta_=caps)
        assert set(first.result["inputRequests"]) == {"hi"}, first.result
        retry = {**message["params"], "requestState": first.result["requestState"]}
        retry["inputResponses"] = {"hi": {"text": "hi"}}
        refused = await mcp.request(message["method"], retry, meta_=caps, malformed=True)
        errors.append(refused.error)
    own, from_sibling = errors
    assert own["code"] == -32602 and "it is not a sampling result" in own["message"], own
    assert from_sibling["code"] == own["code"] and from_sibling["message"] == own["message"], from_sibling


@pytest.mark.parametrize("kind", ["prompt", "resource", "tool"])
async def test_on_2026_07_28_a_tool_error_raised_in_a_sibling_task_says_its_message_as_in_the_own(
    mcp: McpHttp, kind: str
) -> None:
    replies = []
    for sibling in ("no", "yes"):
        message = request(kind, 0, "said", sibling)
        reply = await mcp.request(message["method"], message["params"], meta_=meta(URL_CAPS))
        replies.append({k: v for k, v in reply.message.items() if k != "id"})
    own, from_sibling = replies
    assert "Nothing to ask today" in said(own)
    assert from_sibling == own


@pytest.mark.parametrize("kind", ["prompt", "resource", "tool"])
async def test_on_2026_07_28_a_tool_error_a_sibling_raises_as_a_question_ends_the_round_is_said_as_in_the_own(
    mcp: McpHttp, kind: str
) -> None:
    """One sibling's form ends the round (input required), another raises a ToolError once
    cancelled: said as the handler's own ToolError in a ``finally`` is, not a 500."""
    replies = []
    for question, sibling in (("tidy_own", "no"), ("tidy_sibling", "no"), ("tidy_sibling", "yes")):
        message = request(kind, 0, question, sibling)
        reply = await mcp.request(message["method"], message["params"], meta_=meta())
        replies.append({k: v for k, v in reply.message.items() if k != "id"})
    own, *from_siblings = replies
    assert "Could not tidy up" in said(own)
    assert from_siblings == [own, own]
