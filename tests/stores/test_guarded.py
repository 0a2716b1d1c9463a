"""A store that fails while the server uses it (a real ``redis-server`` killed or frozen
mid-request): the client is told, in a JSON-RPC error, that the server cannot reach its
storage and may try again (-32603, HTTP 503), never the store's address nor a tool result
saying the tool broke; the log names the store, password hidden; a single-use state is
never accepted because the store failed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit import Boolean, Context, Form, KeyRing, Server
from mcp_elicit.stores import RedisStore

from support.procs import uvicorn_server
from support.redis import SKIP_REASON, redis_available, redis_server, started_again

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not redis_available(), reason=SKIP_REASON)]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}


def build(store: RedisStore) -> Server:
    app = Server("url-mode", state_keys=KeyRing([bytes(range(32))]), store=store, flow_wait=0.3)

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        return answer.action

    return app


def payments(store: RedisStore, paid: list[int]) -> Server:
    """``pay``: single-use state, asks to confirm, and records each amount paid in ``paid``."""
    app = Server("payments", state_keys=KeyRing([bytes(range(32))]), store=store)

    @app.tool(single_use_state=True)
    async def pay(ctx: Context, amount: int) -> str:
        answer = await ctx.elicit(f"Pay {amount} EUR?", Form(ok=Boolean()), key="confirm")
        if answer.accepted:
            paid.append(amount)
        return "paid"

    return app


async def call(
    http: httpx.AsyncClient, url: str, n: int, name: str, params: dict[str, Any]
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": name, "_meta": META, **params},
    }
    return await http.post(url, json=body, headers={**HEADERS, "mcp-name": name})


async def confirmed_retry(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    """Call ``pay`` 5 EUR (it asks to confirm); the params of its retry, confirmed."""
    params: dict[str, Any] = {"arguments": {"amount": 5}}
    first = (await call(http, url, 1, "pay", params)).json()["result"]
    params["inputResponses"] = {"confirm": {"action": "accept", "content": {"ok": True}}}
    params["requestState"] = first["requestState"]
    return params


def _unavailable(response: httpx.Response, port: int) -> None:
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == -32603
    assert "cannot reach its storage" in error["message"] and "try again" in error["message"]
    assert str(port) not in response.text and "127.0.0.1" not in response.text


async def test_a_store_gone_before_the_retry_is_a_503_saying_try_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_elicit.transports.http_server import StreamableHTTP

    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url.replace("redis://", "redis://:hunter2@") + "?prefix=outage")
        redis.command("CONFIG", "SET", "requirepass", "hunter2")
        app = build(store)
        try:
            async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=30) as http:
                first = (await call(http, running.url, 1, "use_key", {})).json()["result"]
                (key,) = first["inputRequests"]
                redis.proc.kill()
                redis.proc.wait()
                answers = {
                    "inputResponses": {key: {"action": "accept"}},
                    "requestState": first["requestState"],
                }
                retry = await call(http, running.url, 2, "use_key", answers)
        finally:
            await store.close()
    _unavailable(retry, redis.port)
    assert f"redis://:***@127.0.0.1:{redis.port}/0" in caplog.text
    assert "hunter2" not in caplog.text
    failures = [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]
    assert failures and all(line.count("redis://") == 1 for line in failures)  # the URL said once


async def test_a_single_use_state_is_refused_while_the_store_is_down_and_the_action_never_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_elicit.transports.http_server import StreamableHTTP

    paid: list[int] = []
    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        app = payments(store, paid)

        try:
            async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=30) as http:
                params = await confirmed_retry(http, running.url)
                redis.proc.kill()
                redis.proc.wait()
                retries = [await call(http, running.url, n, "pay", params) for n in (2, 3)]
        finally:
            await store.close()
    for retry in retries:
        _unavailable(retry, redis.port)
    assert paid == []
    assert f"redis://127.0.0.1:{redis.port}/0" in caplog.text


async def test_a_task_followed_on_another_instance_while_the_store_is_down_is_not_called_unknown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_elicit import Principal

    from support.memory import MemoryClient, instances

    with_tasks = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}

    def build_tasks() -> Server:
        app = Server("tasks", state_keys=KeyRing([bytes(range(32))]))

        @app.tool(task="optional")
        async def deploy(ctx: Context) -> str:
            await ctx.start_task("deploying")
            await ctx.elicit("Deploy now?", Form(go=Boolean()), key="go")
            return "deployed"

        return app

    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        a, b = build_tasks(), build_tasks()
        try:
            async with instances(a, b, store=store):
                here, there = (
                    MemoryClient(s, capabilities=with_tasks, principal=Principal("ann")) for s in (a, b)
                )
                task_id = (await here.result("tools/call", {"name": "deploy"}))["taskId"]
                assert (await there.result("tasks/get", {"taskId": task_id}))["taskId"] == task_id
                redis.proc.kill()
                redis.proc.wait()
                followed = await there.request("tasks/get", {"taskId": task_id})
        finally:
            await store.close()
    assert followed["error"]["code"] == -32603, followed
    assert "cannot reach its storage" in followed["error"]["message"]
    assert f"redis://127.0.0.1:{redis.port}/0" in caplog.text


async def test_a_single_use_state_a_frozen_store_took_without_answering_is_asked_again(
    tmp_path: Path,
) -> None:
    """Redis frozen (``DEBUG SLEEP``) past the store's socket timeout while a state is
    redeemed: the retry is told to try again, yet Redis took the state's record when it woke.
    The server cannot tell that from a redemption, so the state is refused (never accepted
    twice); the call started again asks again and pays once."""
    from mcp_elicit.transports.http_server import StreamableHTTP

    paid: list[int] = []
    with redis_server(tmp_path, debug=True) as redis:
        store = RedisStore(f"{redis.url}?socket_timeout=2")
        app = payments(store, paid)

        try:
            async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=30) as http:
                params = await confirmed_retry(http, running.url)
                reader, writer = await asyncio.open_connection("127.0.0.1", redis.port)
                writer.write(b"*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$1\r\n3\r\n")  # frozen for 3 s
                await asyncio.sleep(0.3)
                during = await call(http, running.url, 2, "pay", params)
                assert await reader.readline() == b"+OK\r\n"  # awake again
                writer.close()
                after = await call(http, running.url, 3, "pay", params)
                again = (await call(http, running.url, 4, "pay", {"arguments": {"amount": 5}})).json()[
                    "result"
                ]
                params["requestState"] = again["requestState"]
                done = await call(http, running.url, 5, "pay", params)
        finally:
            await store.close()
    _unavailable(during, redis.port)
    assert after.json()["error"] == {"code": -32602, "message": "Invalid or expired requestState"}, after.text
    assert done.json()["result"]["content"] == [{"type": "text", "text": "paid"}], done.text
    assert paid == [5]


async def test_a_single_use_state_the_store_cannot_record_is_never_handed_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The store down when a single-use tool's round ends with a question: its state is not
    recorded, so it is not handed out (a state with no record would be refused): 503, try
    again, the log naming the store. An ordinary tool's rounds write nothing to the store,
    so they go on as usual."""
    from mcp_elicit.transports.http_server import StreamableHTTP

    asked: list[str] = []
    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        app = Server("payments", state_keys=KeyRing([bytes(range(32))]), store=store)

        @app.tool(single_use_state=True)
        async def pay(ctx: Context) -> str:
            asked.append("pay")
            await ctx.elicit("Pay?", Form(ok=Boolean()), key="confirm")
            return "paid"

        @app.tool()
        async def ordinary(ctx: Context) -> str:
            asked.append("ordinary")
            answer = await ctx.elicit("Sure?", Form(ok=Boolean()), key="confirm")
            return answer.action

        redis.proc.kill()
        redis.proc.wait()
        try:
            async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=30) as http:
                first = await call(http, running.url, 1, "pay", {})
                plain = (await call(http, running.url, 2, "ordinary", {})).json()["result"]
                answers = {"confirm": {"action": "decline"}}
                retry = {"inputResponses": answers, "requestState": plain["requestState"]}
                done = (await call(http, running.url, 3, "ordinary", retry)).json()["result"]
        finally:
            await store.close()
    _unavailable(first, redis.port)
    assert "requestState" not in first.text
    assert done["content"] == [{"type": "text", "text": "decline"}], done
    assert asked == ["pay", "ordinary", "ordinary"], "each round ran its handler once"
    assert f"redis://127.0.0.1:{redis.port}/0" in caplog.text


async def test_an_outage_is_logged_when_it_begins_and_when_it_ends_not_once_per_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every request that needs the store fails while Redis is down: the log says so once
    (which store, why), not once per request, and says when the store answers again."""
    from mcp_elicit.transports.http_server import StreamableHTTP

    caplog.set_level(logging.INFO, logger="mcp_elicit.stores")
    with redis_server(tmp_path) as redis:
        store = RedisStore(redis.url)
        app = build(store)
        try:
            async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=30) as http:
                first = (await call(http, running.url, 1, "use_key", {})).json()["result"]
                (key,) = first["inputRequests"]
                answers = {
                    "inputResponses": {key: {"action": "accept"}},
                    "requestState": first["requestState"],
                }
                redis.proc.kill()
                redis.proc.wait()
                down = [await call(http, running.url, n, "use_key", answers) for n in range(2, 7)]
                with started_again(redis):
                    back = await call(http, running.url, 7, "use_key", {})
        finally:
            await store.close()
    for response in down:
        _unavailable(response, redis.port)
    assert back.json()["result"]["resultType"] == "input_required", back.text
    said = [r for r in caplog.records if r.name == "mcp_elicit.stores" and "the store" in r.getMessage()]
    began, ended = said[0].getMessage(), said[-1].getMessage()
    assert len(said) == 2, [r.getMessage() for r in said]
    assert said[0].levelname == "ERROR" and f"redis://127.0.0.1:{redis.port}/0" in began, began
    assert "is Redis running at that address?" in began, began
    assert said[1].levelname == "INFO" and "answers again, after 5 failed calls" in ended, ended
