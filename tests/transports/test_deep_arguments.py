"""Requests that may ask questions (``tools/call``, ``prompts/get``, ``resources/read``)
whose params nest more than 512 levels are refused with -32602 before any handler runs,
on both revisions and both transports: a requestState is bound to a digest of the
arguments, which cannot be taken some 1000 levels deep, and the refusal used to come only
at the first question, after the handler's side effects. Real uvicorn on 127.0.0.1 and a
real ``mcp-elicit serve`` subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Boolean, Context, Form, KeyRing, Server
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import mirrored_headers
from support.procs import stdio_process, uvicorn_server
from support.sessions import open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

DEEP_SERVER = Path(__file__).with_name("deep_server.py")
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "deep", "version": "1"},
}


TARGETS = {
    "tools/call": {"name": "act"},
    "prompts/get": {"name": "brief"},
    "resources/read": {"uri": "deep://note"},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def recording(ran: list[str]) -> Server:
    """A tool and a prompt that record that they ran, then ask a question."""
    server = Server("deep", state_keys=KeyRing([bytes(range(1, 33))]))

    @server.tool()
    async def act(ctx: Context, deep: list[Any]) -> str:
        ran.append("tool")
        answer = await ctx.elicit("Go on?", Form(go=Boolean()))
        return "went on" if answer.data else "stopped"

    @server.prompt()
    async def brief(ctx: Context, deep: Any = None) -> str:
        ran.append("prompt")
        answer = await ctx.elicit("Go on?", Form(go=Boolean()))
        return "went on" if answer.data else "stopped"

    @server.resource("deep://note")
    async def note(ctx: Context) -> str:
        ran.append("resource")
        answer = await ctx.elicit("Go on?", Form(go=Boolean()))
        return "went on" if answer.data else "stopped"

    return server


def body(method: str, depth: int, *, modern: bool, rid: int = 7) -> bytes:
    """A request for the tool, prompt or resource whose params nest ``depth`` arrays (a
    resource takes no arguments: the member is one the server does not read)."""
    params: dict[str, Any] = {"arguments": {}, **TARGETS[method]}
    if modern:
        params["_meta"] = META
    message = orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    deep = b"[" * depth + b"]" * depth
    return message.replace(b'"arguments":{}', b'"arguments":{"deep":' + deep + b"}")


async def first_message(http: httpx.AsyncClient, url: str, content: bytes, headers: dict[str, str]) -> Any:
    """The JSON body, or the first SSE event's message (a question leaves the stream open)."""
    async with http.stream("POST", url, content=content, headers=headers) as response:
        if response.headers["content-type"].startswith("application/json"):
            return orjson.loads(await response.aread())
        async for line in response.aiter_lines():
            if line.startswith("data:") and line[5:].strip():  # not a priming event
                return orjson.loads(line[5:])
    raise AssertionError("no message in the response")


def check_refused(answer: dict[str, Any]) -> None:
    assert answer.get("id") == 7 and answer["error"]["code"] == -32602, answer
    assert "nested too deeply" in answer["error"]["message"], answer


@pytest.mark.parametrize("method", list(TARGETS))
@pytest.mark.parametrize("revision", [MODERN, "2025-11-25"])
async def test_http_arguments_too_deep_are_refused_before_the_handler_runs(
    method: str, revision: str, wire_2025: WireChecker
) -> None:
    ran: list[str] = []
    async with uvicorn_server(StreamableHTTP(recording(ran))) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            if revision == MODERN:
                headers = mirrored_headers(method, TARGETS[method])
            else:
                headers = {**await open_session(http, url, wire_2025), "content-type": "application/json"}
            modern = revision == MODERN
            shallow = await first_message(http, url, body(method, 300, modern=modern, rid=6), headers)
            # a shallower argument is taken: the handler runs and asks its question
            assert ran == [method.split("/")[0].rstrip("s")], shallow  # tool, prompt or resource
            ran.clear()
            refused = await first_message(http, url, body(method, 1000, modern=modern), headers)
    check_refused(refused)
    assert ran == []


async def test_stdio_arguments_too_deep_are_refused_before_the_handler_runs(tmp_path: Path) -> None:
    marks = tmp_path / "ran"
    async with stdio_process(DEEP_SERVER, log_dir=tmp_path) as proc:
        request = body("tools/call", 1000, modern=True)
        await proc.send(
            request.replace(b'"deep":[', b'"marks":%s,"deep":[' % orjson.dumps(str(marks))) + b"\n"
        )
        answer, _ = await proc.until(7, within=30)
        stderr = proc.stderr()
    check_refused(answer)
    assert not marks.exists(), marks.read_text()
    assert "Traceback" not in stderr, stderr
