"""A 2026-07-28 client's retry, sent sloppily or with hostile intent, over real HTTP on
127.0.0.1 against the real app: ``inputResponses`` of the wrong shape, answers that fit
another question, a retry whose ``_meta`` or request changed since the first round.
(What a client does with the sealed state itself is test_state_attacks.py's.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import DROP, McpHttp, meta
from support.procs import uvicorn_server
from support.tasks import TASKS
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
CAPABILITIES = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


def build(store: MemoryStore) -> Server:
    app = Server("retries", state_keys=KeyRing([bytes(range(7, 39))]), store=store)

    @app.tool()
    async def model(ctx: Context) -> str:
        reply = await ctx.sample("Say hi", max_tokens=5, key="hi")
        return getattr(reply.content, "text", "?")

    @app.tool()
    async def folders(ctx: Context) -> str:
        roots = await ctx.list_roots(key="roots")
        return str(len(roots))

    @app.tool()
    async def siblings(ctx: Context) -> str:
        """Asks from two tasks of a task group (merged into one round)."""
        async with asyncio.TaskGroup() as group:
            one = group.create_task(ctx.sample("One?", max_tokens=5, key="one"))
            two = group.create_task(ctx.sample("Two?", max_tokens=5, key="two"))
        return f"{getattr(one.result().content, 'text', '?')} {getattr(two.result().content, 'text', '?')}"

    @app.tool()
    async def form_and_model(ctx: Context) -> str:
        """A form and a sampling question, asked together in every round."""
        name, reply = await ctx.gather(
            ctx.elicit("Name?", Form(name=String(max_length=3)), key="name"),
            ctx.sample("Say hi", max_tokens=5, key="hi"),
        )
        return f"{name.action} {getattr(reply.content, 'text', '?')}"

    @app.tool(task="optional")
    async def form_then_task(ctx: Context) -> str:
        """A form, then the rest as a task that waits until it is cancelled."""
        name = await ctx.elicit("Name?", Form(name=String(max_length=3)), key="name")
        await ctx.start_task(f"working ({name.action})")
        await asyncio.Event().wait()
        return "unreachable"

    @app.prompt()
    async def named(ctx: Context) -> str:
        """A form whose answer the prompt cannot do without."""
        name = await ctx.elicit("Name?", Form(name=String(max_length=3)), key="name")
        if name.action != "accept":
            raise RuntimeError("no name to greet")
        return "hi"

    @app.resource("test://named")
    async def named_note(ctx: Context) -> str:
        name = await ctx.elicit("Name?", Form(name=String(max_length=3)), key="name")
        return f"note of {name.action}"

    @app.tool(single_use_state=True)
    async def once(ctx: Context) -> str:
        name = await ctx.elicit("Name?", Form(name=String()), key="name")
        reply = await ctx.sample(f"Greet {name.content}", max_tokens=5, key="hi")
        return getattr(reply.content, "text", "?")

    @app.tool(single_use_state=True)
    async def model_once(ctx: Context) -> str:
        reply = await ctx.sample("Say hi", max_tokens=5, key="hi")
        return getattr(reply.content, "text", "?")

    return app


@pytest.fixture
async def mcp(wire: WireChecker) -> AsyncIterator[McpHttp]:
    store = MemoryStore()
    async with (
        uvicorn_server(StreamableHTTP(build(store)), lifespan="on") as server,
        httpx.AsyncClient(timeout=10) as client,
    ):
        yield McpHttp(client, server.url, wire)
    await store.close()


async def call(mcp: McpHttp, name: str, **extra: Any) -> dict[str, Any]:
    """The result or the error of ``tools/call`` ``name`` with ``extra`` params."""
    reply = await mcp.call(name, extra=extra, meta_=meta(CAPABILITIES), malformed=True)
    assert reply.status == 200, reply.body
    return reply.message.get("result") or reply.error


@pytest.mark.parametrize("responses", ["answers", [SAMPLED], 7, True])
@pytest.mark.parametrize(("tool", "key"), [("model", "hi"), ("folders", "roots")])
async def test_answers_not_sent_as_an_object_fail_a_sampling_or_roots_question_naming_the_fault(
    mcp: McpHttp, tool: str, key: str, responses: Any
) -> None:
    """inputResponses that is not an object answers nothing. A person re-asked a form can
    be told so; a sampling or roots question re-asked got the same unreadable retry from
    the client's software, again and again, with nothing saying why. The retry is -32602
    saying what inputResponses must be, as for an answer of the wrong shape."""
    first = await call(mcp, tool)
    assert set(first["inputRequests"]) == {key}
    for state in (first["requestState"], None):  # the retry, or answers sent ahead
        extra = (
            {"inputResponses": responses}
            if state is None
            else {"inputResponses": responses, "requestState": state}
        )
        error = await call(mcp, tool, **extra)
        assert error.get("code") == -32602, error
        assert "inputResponses must be an object mapping each input request key" in error["message"]
        assert key in error["message"]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "form_and_model"}),
        ("prompts/get", {"name": "named"}),
        ("resources/read", {"uri": "test://named"}),
    ],
)
async def test_an_answer_that_is_not_an_object_is_invalid_params_under_any_key(
    mcp: McpHttp, method: str, params: dict[str, Any]
) -> None:
    """Each value of inputResponses is a result, an object (the schema's InputResponse).
    A form answered {"name": 5} was taken for a bad answer and asked again ("could not be
    read"), while tasks/update refused the same with -32602: the retry is now refused the
    same way, naming the key and what it got, under a key asked or not. An object under a
    key nobody asked is still ignored, and an object that is a wrong answer asked again."""

    async def send(**extra: Any) -> dict[str, Any]:
        reply = await mcp.request(method, {**params, **extra}, meta_=meta(CAPABILITIES), malformed=True)
        assert reply.status == 200, reply.body
        return reply.message.get("result") or reply.error

    first = await send()
    assert "name" in first["inputRequests"], first
    state = first["requestState"]
    for responses, key, kind in (
        ({"name": 5}, "name", "a number"),
        ({"name": [{"action": "decline"}]}, "name", "an array"),
        ({"name": {"action": "decline"}, "never-asked": "yes"}, "never-asked", "a string"),
        ({"name": None}, "name", "null"),
    ):
        error = await send(requestState=state, inputResponses=responses)
        assert error.get("code") == -32602, error
        assert f'inputResponses["{key}"] must be an object' in error["message"], error
        assert kind in error["message"], error
    again = await send(requestState=state, inputResponses={"name": {"action": "maybe"}, "stray": {"x": 1}})
    assert '"action" must be' in again["inputRequests"]["name"]["params"]["message"], again


async def test_a_single_use_round_refused_for_unreadable_answers_hands_back_a_fresh_state(
    mcp: McpHttp,
) -> None:
    """The state it spent is replaced, as for any -32602 over the round's answers: the
    client sends the answers right and nobody answers the form again."""
    first = await call(mcp, "once")
    named = await call(
        mcp,
        "once",
        requestState=first["requestState"],
        inputResponses={"name": {"action": "accept", "content": {"name": "Ann"}}},
    )
    assert set(named["inputRequests"]) == {"hi"}
    error = await call(mcp, "once", requestState=named["requestState"], inputResponses=[SAMPLED])
    assert error["code"] == -32602 and "must be an object" in error["message"], error
    done = await call(mcp, "once", requestState=error["data"]["requestState"], inputResponses={"hi": SAMPLED})
    assert done["content"][0]["text"] == "hi"


async def test_answers_sent_ahead_to_a_single_use_tool_are_checked_as_any_tools_are(mcp: McpHttp) -> None:
    """Answers a first call carries count for nothing on a tool whose state is single-use,
    but they are checked all the same: {"name": 5} or 65 entries was -32602 on any other
    tool and went unread here (the form simply asked), so one malformed request got two
    answers depending on how the tool was declared. An object stays ignored."""
    for responses, said in (
        ({"name": 5}, 'inputResponses["name"] must be an object'),
        ({f"k{i}": {} for i in range(65)}, "inputResponses is too large: 65 entries"),
    ):
        for tool in ("model", "once"):
            error = await call(mcp, tool, inputResponses=responses)
            assert error.get("code") == -32602 and said in error["message"], (tool, error)
    asked = await call(mcp, "once", inputResponses={"name": {"action": "accept", "content": {"name": "Ann"}}})
    assert set(asked["inputRequests"]) == {"name"}, asked


@pytest.mark.parametrize("responses", ["answers", [SAMPLED]])
async def test_answers_sent_ahead_not_as_an_object_to_a_single_use_tool_are_read_as_any_tools_are(
    mcp: McpHttp, responses: Any
) -> None:
    """A first call whose inputResponses is a string or an array was taken as no answers on
    a tool whose state is single-use (the questions simply asked), while any other tool
    said what was wrong: -32602 on a sampling question, a note on a form asked again."""
    for tool in ("model", "model_once"):
        error = await call(mcp, tool, inputResponses=responses)
        assert error.get("code") == -32602, (tool, error)
        assert "inputResponses must be an object mapping each input request key" in error["message"], error
    asked = await call(mcp, "once", inputResponses=responses)
    note = asked["inputRequests"]["name"]["params"]["message"]
    assert note.startswith("Your previous answer could not be read: inputResponses must be an object"), asked


async def test_answers_past_a_limit_are_refused_naming_the_limit_they_passed(mcp: McpHttp) -> None:
    """A client told only 'at most 64 entries and 262144 bytes' had to guess which of the
    two its retry broke; the refusal says which, and by how much."""
    first = await call(mcp, "model")
    state = first["requestState"]
    many = {f"k{i}": {} for i in range(65)}
    error = await call(mcp, "model", requestState=state, inputResponses=many)
    assert error["code"] == -32602
    assert "inputResponses is too large: 65 entries, at most 64" in error["message"], error
    big = {"hi": {**SAMPLED, "content": {"type": "text", "text": "x" * 300_000}}}
    error = await call(mcp, "model", requestState=state, inputResponses=big)
    assert error["code"] == -32602
    assert "inputResponses is too large: 300,0" in error["message"], error
    assert "bytes encoded, at most 262,144" in error["message"], error


async def test_a_retrys_own_meta_and_id_decide_for_it_alone(mcp: McpHttp) -> None:
    """Each round is a request of its own: its ``_meta`` is read afresh, nothing in the
    state ties it to the first round's. A retry under the first call's id is answered (the
    revision forbids only an id still in flight, which a request answered is not); one
    whose capabilities no longer declare sampling is refused -32021 as a first call would
    be, though its answer is at hand; one with another clientInfo is served; one without
    ``_meta`` is -32602; a version header that disagrees with ``_meta`` is -32020."""
    first = await mcp.call("model", rid="first", meta_=meta(CAPABILITIES))
    retry = {"requestState": first.result["requestState"], "inputResponses": {"hi": SAMPLED}}
    again = await mcp.call("model", rid="first", extra=retry, meta_=meta(CAPABILITIES), malformed=True)
    assert again.message["id"] == "first" and again.result["content"][0]["text"] == "hi"
    other = meta(CAPABILITIES, **{"io.modelcontextprotocol/clientInfo": {"name": "another", "version": "9"}})
    served = await mcp.call("model", extra=retry, meta_=other, malformed=True)
    assert served.result["content"][0]["text"] == "hi"
    forms_only = await mcp.call("model", extra=retry, meta_=meta({"elicitation": {}}), malformed=True)
    assert (forms_only.status, forms_only.error["code"]) == (400, -32021)
    assert forms_only.error["data"] == {"requiredCapabilities": {"sampling": {}}}
    bare = await mcp.call("model", extra=retry, meta_=DROP, malformed=True)
    assert (bare.status, bare.error["code"]) == (400, -32602)
    assert "_meta is required" in bare.error["message"]
    older = {"MCP-Protocol-Version": "2025-11-25"}
    mismatch = await mcp.call("model", extra=retry, meta_=meta(CAPABILITIES), headers=older, malformed=True)
    assert (mismatch.status, mismatch.error["code"]) == (400, -32020)


async def test_a_question_asked_from_a_sibling_task_fails_the_request_as_from_the_handlers_own(
    mcp: McpHttp,
) -> None:
    """Questions asked from tasks of an asyncio.TaskGroup share one round. A sampling
    answer of the wrong shape there, or a capability the client did not declare, left the
    task group as an ExceptionGroup, taken for the handler's own failure: the client got
    'Error executing tool siblings: unhandled errors in a TaskGroup (2 sub-exceptions)'
    and the log a traceback. It now gets the error the same question gets in the
    handler's own task: -32602 naming the key, -32021 naming the capability."""
    first = await call(mcp, "siblings")
    assert set(first["inputRequests"]) == {"one", "two"}
    bad = {"one": {"text": "hi"}, "two": {"text": "hi"}}
    error = await call(mcp, "siblings", requestState=first["requestState"], inputResponses=bad)
    assert error.get("code") == -32602, error
    assert "answers sampling/createMessage, but it is not a sampling result" in error["message"], error
    half = {"one": SAMPLED, "two": {"text": "hi"}}
    error = await call(mcp, "siblings", requestState=first["requestState"], inputResponses=half)
    assert error.get("code") == -32602 and "inputResponses['two']" in error["message"], error
    done = await call(
        mcp, "siblings", requestState=first["requestState"], inputResponses={"one": SAMPLED, "two": SAMPLED}
    )
    assert done["content"][0]["text"] == "hi hi"
    forms_only = await mcp.call("siblings", meta_=meta({"elicitation": {}}))
    assert (forms_only.status, forms_only.error["code"]) == (400, -32021), forms_only.message
    assert forms_only.error["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_a_form_given_up_is_logged_as_cancel_only_when_its_round_goes_on(
    mcp: McpHttp, caplog: pytest.LogCaptureFixture
) -> None:
    """A form answered badly on its second try counts as cancel, and the log says so. When
    the same round fails -32602 over another question's answer, nothing was cancelled (the
    round failed; the client sends it again): the log said "treating it as cancel" all the
    same. It says so only once a round goes on with the cancel."""
    cancelled = "did not fit the form twice (in name); treating it as cancel"
    unfit = {"action": "accept", "content": {"name": "far too long"}}
    first = await call(mcp, "form_and_model")
    again = await call(
        mcp, "form_and_model", requestState=first["requestState"], inputResponses={"name": unfit}
    )
    assert set(again["inputRequests"]) == {"name", "hi"}, again
    state = again["requestState"]
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        error = await call(
            mcp, "form_and_model", requestState=state, inputResponses={"name": unfit, "hi": {"text": "hi"}}
        )
        assert error.get("code") == -32602 and "inputResponses['hi']" in error["message"], error
        said = [r.getMessage() for r in caplog.records]
        assert not any(cancelled in m for m in said), said
        done = await call(
            mcp, "form_and_model", requestState=state, inputResponses={"name": unfit, "hi": SAMPLED}
        )
        assert done["content"][0]["text"] == "cancel hi", done
        said = [r.getMessage() for r in caplog.records]
        assert sum(cancelled in m for m in said) == 1, said


async def test_a_form_given_up_before_its_request_became_a_task_is_logged_though_the_task_is_cancelled(
    mcp: McpHttp, caplog: pytest.LogCaptureFixture
) -> None:
    """The round that gave the form up as cancel went on: the handler got ``cancel`` and
    became a task, and the request was answered with it. Cancelling the task later ends
    that round's code with a cancellation, which is no failure of the round (nothing will
    send it again): the cancel is logged all the same, once."""
    cancelled = "did not fit the form twice (in name); treating it as cancel"
    unfit = {"action": "accept", "content": {"name": "far too long"}}
    caps = meta({"elicitation": {"form": {}}, "extensions": {TASKS: {}}})

    async def call_task(**extra: Any) -> dict[str, Any]:
        reply = await mcp.call("form_then_task", extra=extra, meta_=caps)
        assert reply.status == 200, reply.body
        return reply.result

    first = await call_task()
    again = await call_task(requestState=first["requestState"], inputResponses={"name": unfit})
    assert set(again["inputRequests"]) == {"name"}, again
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        task = await call_task(requestState=again["requestState"], inputResponses={"name": unfit})
        task_id = task["task"]["taskId"] if "task" in task else task["taskId"]
        message, headers = mcp.build("tasks/cancel", {"taskId": task_id}, meta_=caps)
        # an extension's method, which the wire checker does not know: posted as it is
        reply = await mcp.client.post(
            mcp.url, content=orjson.dumps(message), headers={**headers, "Mcp-Name": task_id}
        )
        assert reply.status_code == 200 and "result" in reply.text, reply.text
        await eventually(lambda: cancelled in caplog.text, "the cancel to be logged")
        assert caplog.text.count(cancelled) == 1, caplog.text


async def test_a_form_given_up_is_logged_when_its_prompt_then_fails(
    mcp: McpHttp, caplog: pytest.LogCaptureFixture
) -> None:
    """The prompt's handler got ``cancel`` and failed over it (-32603): that answer is the
    request's last, not a round the client corrects and sends again, so the cancel it was
    given is logged."""
    cancelled = "did not fit the form twice (in name); treating it as cancel"
    unfit = {"action": "accept", "content": {"name": "far too long"}}

    async def get(**extra: Any) -> dict[str, Any]:
        reply = await mcp.request("prompts/get", {"name": "named", **extra}, meta_=meta(CAPABILITIES))
        return reply.message.get("result") or reply.error

    first = await get()
    again = await get(requestState=first["requestState"], inputResponses={"name": unfit})
    assert set(again["inputRequests"]) == {"name"}, again
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        error = await get(requestState=again["requestState"], inputResponses={"name": unfit})
        assert error.get("code") == -32603, error
    assert caplog.text.count(cancelled) == 1, caplog.text
