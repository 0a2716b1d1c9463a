"""Errors a handler raises with a code of its own (one relayed from another server, rebuilt
by ``ProtocolError.from_error``), answered over real HTTP at 2026-07-28. That revision
forbids -32002 (resource not found before it, -32602 now) and every code of its reserved
range -32020..-32099 it does not define; such an error goes out as what it means there:
-32602 for a resource not found, -32603 for the rest (message and ``data`` kept), in a
response or in the task (tasks extension) it fails. The codes the revision defines speak
of the client's request: a handler's -32020 or -32022, and a -32021 without the ``data`` its
schema asks, are -32603 too; a -32021 naming the capabilities, and codes outside the
ranges, pass as raised. Every message received is checked against the official schema
(but the extension's ``tasks/get``, which it does not define)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.errors import MissingClientCapability, ProtocolError, ResourceNotFound
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import McpHttp, meta
from support.procs import uvicorn_server
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def build() -> Server:
    app = Server("relaying")

    @app.tool()
    async def relay(code: int) -> str:
        data = {"uri": "up://stream"} if code == -32002 else None
        raise ProtocolError.from_error({"code": code, "message": f"upstream said {code}", "data": data})

    @app.tool()
    async def relay_error(error: dict[str, Any]) -> str:
        raise ProtocolError.from_error(error)  # an upstream's error member, as received

    @app.tool()
    async def needs_roots() -> str:
        raise MissingClientCapability.requiring({"roots": {}})

    @app.tool(task="optional")
    async def relay_later(ctx: Context, code: int) -> str:
        await ctx.start_task()
        raise ProtocolError.from_error(
            {"code": code, "message": f"upstream said {code}", "data": {"uri": "up://x"}}
        )

    @app.tool(task="optional")
    async def needs_roots_later(ctx: Context) -> str:
        await ctx.start_task()
        raise MissingClientCapability.requiring({"roots": {}})

    @app.resource("test://proxied")
    async def proxied() -> str:
        raise ResourceNotFound("test://proxied", handshake=True)  # as a 2025-11-25 upstream said it

    return app


@pytest.fixture
async def mcp(wire: WireChecker) -> AsyncIterator[McpHttp]:
    async with uvicorn_server(StreamableHTTP(build())) as running, httpx.AsyncClient(timeout=10) as http:
        yield McpHttp(http, running.url, wire)


async def test_a_resource_not_found_said_the_old_way_is_32602(mcp: McpHttp) -> None:
    reply = await mcp.request("resources/read", {"uri": "test://proxied"})
    assert reply.error["code"] == -32602
    assert reply.error["data"] == {"uri": "test://proxied"}
    assert "Resource not found: test://proxied" in reply.error["message"]
    relayed = await mcp.call("relay", {"code": -32002})
    assert (relayed.error["code"], relayed.error["data"]) == (-32602, {"uri": "up://stream"})


@pytest.mark.parametrize(
    "data",
    [None, {"uri": "up://s", "server": "upstream.example"}, {"detail": "gone"}],
    ids=["no data", "uri and more", "no uri"],
)
async def test_a_relayed_not_found_keeps_its_data(mcp: McpHttp, data: Any) -> None:
    """The upstream's ``data`` goes on as it came, whatever it holds: it was rebuilt from
    the URI alone (what else it said dropped, ``{"uri": ""}`` where it named none)."""
    error = {"code": -32002, "message": "upstream: not found"}
    if data is not None:
        error["data"] = data
    reply = await mcp.call("relay_error", {"error": error})
    assert reply.error == {**error, "code": -32602}


@pytest.mark.parametrize("code", [-32023, -32050, -32099])
async def test_a_reserved_code_the_revision_does_not_define_is_32603(mcp: McpHttp, code: int) -> None:
    reply = await mcp.call("relay", {"code": code})
    assert reply.error["code"] == -32603
    assert f"upstream said {code}" in reply.error["message"]


@pytest.mark.parametrize("code", [-32601, -32602, -32001, -31999, 7])
async def test_other_codes_pass_as_raised(mcp: McpHttp, code: int) -> None:
    reply = await mcp.call("relay", {"code": code})
    assert (reply.error["code"], reply.error["message"]) == (code, f"upstream said {code}")


@pytest.mark.parametrize(
    "error",
    [
        pytest.param({"code": -32021, "message": "upstream: roots needed"}, id="-32021 without data"),
        pytest.param(
            {"code": -32021, "message": "upstream: roots needed", "data": {"requiredCapabilities": "roots"}},
            id="-32021 with data the schema refuses",
        ),
        pytest.param(
            {
                "code": -32022,
                "message": "upstream: unsupported protocol version",
                "data": {"supported": ["2024-11-05"], "requested": "2025-11-25"},
            },
            id="-32022 naming another server's versions",
        ),
        pytest.param({"code": -32020, "message": "upstream: header mismatch"}, id="-32020"),
    ],
)
async def test_a_handlers_code_that_is_not_about_this_request_is_32603(
    mcp: McpHttp, error: dict[str, Any]
) -> None:
    """The codes 2026-07-28 defines speak of the client's own request: its headers (-32020),
    its capabilities (-32021, ``data.requiredCapabilities`` naming them, as the schema asks)
    and its version (-32022, naming the versions this server speaks). The framework checked
    headers and version before the handler ran; one the handler raises (relayed from its own
    upstream) is this server's failure: -32603, HTTP 200, its message and data kept."""
    reply = await mcp.call("relay_error", {"error": error})
    assert (reply.status, reply.error) == (200, {**error, "code": -32603})


async def test_a_defined_code_passes_with_its_status(mcp: McpHttp) -> None:
    reply = await mcp.call("needs_roots")
    assert (reply.status, reply.error["code"]) == (400, -32021)
    assert reply.error["data"] == {"requiredCapabilities": {"roots": {}}}


@pytest.mark.parametrize(
    ("code", "sent"),
    [
        (-32002, -32602),
        (-32050, -32603),
        (-32601, -32601),
        (-32020, -32603),
        (-32021, -32603),
        (-32022, -32603),
    ],
)
async def test_a_task_failed_by_such_an_error_says_it_in_the_revisions_codes(
    mcp: McpHttp, code: int, sent: int
) -> None:
    with_tasks = meta({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    created = (await mcp.call("relay_later", {"code": code}, meta_=with_tasks)).result
    task = await _failed_task(mcp, created["taskId"], with_tasks)
    assert task["error"] == {"code": sent, "message": f"upstream said {code}", "data": {"uri": "up://x"}}


async def test_a_task_failed_by_a_missing_capability_keeps_it(mcp: McpHttp) -> None:
    with_tasks = meta({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    created = (await mcp.call("needs_roots_later", meta_=with_tasks)).result
    task = await _failed_task(mcp, created["taskId"], with_tasks)
    error = task["error"]
    assert isinstance(error, dict)
    assert (error["code"], error["data"]) == (-32021, {"requiredCapabilities": {"roots": {}}})


async def _failed_task(mcp: McpHttp, task_id: str, with_tasks: dict[str, Any]) -> dict[str, Any]:
    """The task ``task_id`` once it has failed, polled with ``tasks/get`` (the extension's
    method, which the core schema the checked client knows has not)."""
    task: dict[str, Any] = {}

    async def failed() -> bool:
        message, headers = mcp.build(
            "tasks/get", {"taskId": task_id}, meta_=with_tasks, headers={"Mcp-Name": task_id}
        )
        response = await mcp.client.post(mcp.url, json=message, headers=headers)
        assert response.status_code == 200, response.text
        task.update(response.json()["result"])
        return task["status"] == "failed"

    await eventually(failed, "the task to fail")
    return task
