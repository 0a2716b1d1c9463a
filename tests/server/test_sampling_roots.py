"""Sampling and roots asked from a handler on a 2025-11-25 session (server-to-client
requests), with clients that answer badly, refuse, answer late or not at all: the
handler always gets an answer or a ``ToolError`` saying what went wrong, never a hang.
Every message is checked against the official 2025-11-25 schema."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import ToolError
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire import jsonrpc

from support.memory import MemoryClient, SessionClient
from support.procs import uvicorn_server
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
CAPABILITIES = {"sampling": {}, "roots": {}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


def build(**options: Any) -> Server:
    app = Server("asks-the-client", **options)

    @app.tool()
    async def both(ctx: Context) -> str:
        """Asks the model and the roots together; says what went wrong if anything did."""
        try:
            reply, roots = await ctx.gather(ctx.sample("Say hi", max_tokens=5), ctx.list_roots())
        except ToolError as exc:
            return f"failed: {exc}"
        return f"{getattr(reply.content, 'text', '?')} {[r.uri for r in roots]}"

    @app.tool()
    async def sample_only(ctx: Context) -> str:
        try:
            reply = await ctx.sample("Say hi", max_tokens=5)
        except ToolError as exc:
            return f"failed: {exc}"
        return getattr(reply.content, "text", "?")

    return app


class Replying(SessionClient):
    """Answers each server request with ``reply(method)``: a result, or an ``error``
    object (a JSON-RPC error response), or None for no answer at all."""

    def __init__(self, *args: Any, reply: Callable[[str], dict[str, Any] | None], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.reply = reply

    async def send(self, data: bytes) -> None:
        message = orjson.loads(data)
        assert self.checker is not None
        self.checker.outgoing(message)
        self.asked.append(message)
        if "id" not in message:
            return
        reply = self.reply(message["method"])
        if reply is None:
            return
        response = {"jsonrpc": "2.0", "id": message["id"], **reply}
        self.checker.response(message["method"], response)
        decoded = jsonrpc.decode(orjson.dumps(response))
        assert isinstance(decoded, jsonrpc.Response | jsonrpc.ErrorResponse)
        assert self.session.resolve(decoded)


async def test_questions_asked_together_that_fail_raise_one_clear_tool_error(wire_2025: WireChecker) -> None:
    """The model's answer is refused by the person (a JSON-RPC error), the roots come back:
    the handler's ``except ToolError`` sees why, not an exception group."""

    def reply(method: str) -> dict[str, Any] | None:
        if method == "sampling/createMessage":
            return {"error": {"code": -1, "message": "User rejected sampling request"}}
        return {"result": {"roots": [{"uri": "file:///work"}]}}

    client = Replying(build(), capabilities=CAPABILITIES, checker=wire_2025, reply=reply)
    await client.open()
    result = await client.result("tools/call", {"name": "both"})
    assert result["content"][0]["text"] == (
        "failed: The client refused sampling/createMessage: 'User rejected sampling request'"
    )
    # neither answered in time: the handler hears of the first, and both are withdrawn
    client = Replying(
        build(ask_timeout=0.05), capabilities=CAPABILITIES, checker=wire_2025, reply=lambda _m: None
    )
    await client.open()
    result = await client.result("tools/call", {"name": "both"})
    assert result["content"][0]["text"].startswith("failed: No answer to ")
    withdrawn = [m for m in client.asked if m.get("method") == "notifications/cancelled"]
    assert sorted(m["params"]["requestId"] for m in withdrawn) == sorted(
        m["id"] for m in client.asked if "id" in m
    )
    assert client.session.pending == {}


SAMPLE, ROOTS = "sampling/createMessage", "roots/list"


@pytest.mark.parametrize(
    ("method", "bad", "fragment"),
    [
        (SAMPLE, {**SAMPLED, "content": {"type": "video", "url": "x"}}, "it is not a sampling result"),
        (SAMPLE, {k: v for k, v in SAMPLED.items() if k != "role"}, "role: Field required"),
        (SAMPLE, {k: v for k, v in SAMPLED.items() if k != "model"}, "model: Field required"),
        (ROOTS, {"roots": [{"uri": "https://example.com/repo"}]}, "URL scheme should be 'file'"),
        (ROOTS, {"roots": [{"name": "no uri"}]}, "uri: Field required"),
        (ROOTS, {"roots": "file:///work"}, "roots: Input should be a valid list"),
    ],
)
async def test_a_bad_answer_is_asked_again_once_then_fails_the_handler(
    method: str, bad: dict[str, Any], fragment: str, wire_2025: WireChecker
) -> None:
    """A sampling result or roots list that does not fit its schema (a content type that
    does not exist, no role or model, a root that is no file URI, no list) is asked again
    once; a second bad answer fails the handler, naming what was wrong."""
    good = {SAMPLE: SAMPLED, ROOTS: {"roots": []}}
    client = SessionClient(build(), capabilities=CAPABILITIES)  # the bad answers are not checked
    await client.open()
    client.answer = lambda _k, request: bad if request["method"] == method else good[request["method"]]
    result = await client.result("tools/call", {"name": "both"})
    text = result["content"][0]["text"]
    assert text.startswith(f"failed: The client's answer to {method} was invalid: ") and fragment in text
    assert [m["method"] for m in client.asked].count(method) == 2  # asked again once
    for message in client.asked:
        wire_2025.outgoing(message)  # the questions themselves are well formed


@pytest.mark.parametrize(
    ("method", "bad", "fragment"),
    [
        (SAMPLE, {**SAMPLED, "content": {"type": "video", "url": "x"}}, "is not a sampling result"),
        (SAMPLE, {k: v for k, v in SAMPLED.items() if k != "model"}, "model: Field required"),
        (ROOTS, {"roots": [{"uri": "https://example.com/repo"}]}, "URL scheme should be 'file'"),
        (ROOTS, {"roots": "file:///work"}, "roots: Input should be a valid list"),
    ],
)
async def test_on_2026_07_28_a_bad_answer_is_invalid_params_naming_the_key_and_the_fault(
    method: str, bad: dict[str, Any], fragment: str, wire: WireChecker
) -> None:
    """A sampling result or roots list in ``inputResponses`` that does not fit its schema
    comes from the client's software, not from a person: asking the same question again
    would get the same answer. The retry is answered -32602, naming the input request's
    key and what was wrong, as the multi round-trip rules ask for a response that cannot
    be parsed."""
    client = MemoryClient(build(), capabilities=CAPABILITIES)  # its bad answers are not checked
    first = await client.result("tools/call", {"name": "both"})
    assert first["resultType"] == "input_required"
    good = {SAMPLE: SAMPLED, ROOTS: {"roots": []}}
    answers = {
        key: bad if ask["method"] == method else good[ask["method"]]
        for key, ask in first["inputRequests"].items()
    }
    (key,) = [k for k, ask in first["inputRequests"].items() if ask["method"] == method]
    response = await client.request(
        "tools/call", {"name": "both", "inputResponses": answers, "requestState": first["requestState"]}
    )
    wire.response("tools/call", response)
    error = response["error"]
    assert error["code"] == -32602
    assert f"inputResponses[{key!r}]" in error["message"] and fragment in error["message"], error


async def test_no_answer_in_time_names_the_time_waited(wire_2025: WireChecker) -> None:
    """``ask_timeout`` below a second is said as it was set, not rounded to 0 s."""
    client = Replying(
        build(ask_timeout=0.25), capabilities={"sampling": {}}, checker=wire_2025, reply=lambda _m: None
    )
    await client.open()
    result = await client.result("tools/call", {"name": "sample_only"})
    assert result["content"][0]["text"] == "failed: No answer to sampling/createMessage within 0.25 s"


async def test_over_http_refusals_and_stray_answers_reach_the_handler_or_nothing(
    wire_2025: WireChecker,
) -> None:
    """A 2025-11-25 session over real HTTP on 127.0.0.1: an answer to an id the server
    never sent is taken (202) and changes nothing; the person's refusal (a JSON-RPC error
    -1) reaches the handler as a ToolError; an answer after the question was given up
    (``ask_timeout``) is taken and changes nothing either."""
    async with uvicorn_server(StreamableHTTP(build(ask_timeout=0.5))) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            headers = await open_session(http, url, wire_2025, capabilities={"sampling": {}})

            async def answer(rid: object, body: dict[str, Any]) -> None:
                response = {"jsonrpc": "2.0", "id": rid, **body}
                wire_2025.response("sampling/createMessage", response)
                posted = await http.post(url, json=response, headers=headers)
                assert posted.status_code == 202, posted.text

            await answer("s-never-sent", {"result": SAMPLED})
            for reply, expected in (
                ({"error": {"code": -1, "message": "User rejected sampling request"}}, "refused"),
                (None, "No answer to sampling/createMessage within 0.5 s"),
            ):
                call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "sample_only"}}
                wire_2025.request(call)
                messages: list[dict[str, Any]] = []
                async with http.stream("POST", url, json=call, headers=headers) as stream:
                    buffer = ""
                    async for chunk in stream.aiter_text():
                        buffer += chunk
                        while "\n\n" in buffer:
                            event, buffer = buffer.split("\n\n", 1)
                            data = [
                                line[5:].strip() for line in event.splitlines() if line.startswith("data:")
                            ]
                            if not data or not data[0]:
                                continue
                            message = orjson.loads(data[0])
                            messages.append(message)
                            if message.get("method") == "sampling/createMessage" and reply is not None:
                                await answer(message["id"], reply)
                asked = [m for m in messages if m.get("method") == "sampling/createMessage"]
                assert asked
                for message in messages:
                    wire_2025.outgoing(message, "tools/call")
                (final,) = [m for m in messages if m.get("id") == 7]
                assert expected in final["result"]["content"][0]["text"]
                if reply is None:  # too late now: taken, and nothing waits for it
                    await answer(asked[-1]["id"], {"result": SAMPLED})


@pytest.mark.parametrize(
    ("declared", "missing"), [({"roots": {}}, {"sampling": {}}), ({"sampling": {}}, {"roots": {}})]
)
async def test_a_client_that_did_not_declare_it_is_asked_nothing(
    declared: dict[str, Any], missing: dict[str, Any], wire: WireChecker, wire_2025: WireChecker
) -> None:
    """-32021 naming the capability, on both revisions, and no question goes out."""
    modern = MemoryClient(build(), capabilities=declared, checker=wire)
    response = await modern.request("tools/call", {"name": "both"})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": missing}
    assert "input_required" not in str(response)
    session = SessionClient(build(), capabilities=declared, checker=wire_2025)
    await session.open()
    response = await session.request("tools/call", {"name": "both"})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": missing}
    assert session.asked == []


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}]}, "messages.0.role"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "messages.0.content"),
        ({"messages": []}, "at least one message"),
        ({"messages": "hi", "max_tokens": True}, "max_tokens must be a positive whole number"),
        ({"messages": "hi", "max_tokens": 0}, "max_tokens must be a positive whole number"),
        ({"messages": "hi", "temperature": float("nan")}, "temperature must be a finite number"),
        ({"messages": "hi", "temperature": "warm"}, "temperature must be a finite number"),
    ],
)
async def test_a_sampling_request_outside_the_schema_is_the_handlers_error_and_never_sent(
    kwargs: dict[str, Any], said: str, wire: WireChecker, wire_2025: WireChecker
) -> None:
    """A request the schema refuses is the handler's ``ValueError`` before anything is
    asked, on both revisions: the client never gets a question it would have to refuse."""
    app = Server("samples-badly")

    @app.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ctx.sample(**kwargs)
        except ValueError as exc:
            return f"refused: {exc}"
        return "sent"

    modern = MemoryClient(app, capabilities=CAPABILITIES, checker=wire)
    result = await modern.result("tools/call", {"name": "ask"})
    assert result["resultType"] == "complete" and said in result["content"][0]["text"]
    session = SessionClient(app, capabilities=CAPABILITIES, checker=wire_2025)
    await session.open()
    result = await session.result("tools/call", {"name": "ask"})
    assert said in result["content"][0]["text"] and session.asked == []


async def test_an_invalid_elicitation_answer_is_logged_without_what_was_typed(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """Two answers that do not fit the form count as cancel, and the log says so at info
    naming the fields at fault, never what the person typed (the validation message
    quotes it): that is personal data, logged at no level (debug logs are shipped too)."""
    app = Server("asks-the-person")

    @app.tool()
    async def survey(ctx: Context) -> str:
        form = {
            "topics": {"type": "array", "items": {"enum": ["billing", "support"]}, "title": "Topics"},
            "when": {"type": "string", "format": "date-time", "title": "When"},
        }
        answer = await ctx.elicit("What is it about?", {"type": "object", "properties": form})
        return answer.action

    typed = {"topics": ["my diagnosis is diabetes"], "when": "2026-01-01T25:00:00+02:00"}
    client = SessionClient(app, checker=wire_2025)
    client.answer = lambda _k, _request: {"action": "accept", "content": typed}
    await client.open()
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        result = await client.result("tools/call", {"name": "survey"})
    assert result["content"][0]["text"] == "cancel"
    assert "treating it as cancel" in caplog.text and "topics" in caplog.text and "when" in caplog.text
    assert "diagnosis" not in caplog.text and "25:00" not in caplog.text
    assert all(record.levelno == logging.INFO for record in caplog.records)
    caplog.clear()
    client = SessionClient(app, checker=wire_2025)
    client.answer = lambda _k, _request: {"action": "accept", "content": typed}
    await client.open()
    with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
        await client.result("tools/call", {"name": "survey"})
    said = [r.getMessage() for r in caplog.records]
    assert any("did not fit the form twice (in topics, when)" in message for message in said), said
    assert not any("diagnosis" in message or "25:00" in message for message in said), said
