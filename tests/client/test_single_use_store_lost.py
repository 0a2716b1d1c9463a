"""2026-07-28, a single-use tool on a Redis that loses its data (keys gone, as after a
restart without persistence) while the person answers: the retry carrying their answer
is refused (-32602) as a state never issued; mcp-elicit's client starts the call again
once and answers the question asked again identically with the answer already given, so
the person is asked once and the one-time action runs once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from mcp_elicit import Boolean, Context, Form, KeyRing, Server
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.stores import RedisStore
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RedisStore]:
    shared = RedisStore(redis_url, prefix=f"lost-{uuid.uuid4().hex[:12]}")
    yield shared
    await shared.close()


class Person:
    """Confirms; while they do, the first time, the store loses every key it held."""

    modes = frozenset({"form"})

    def __init__(self, redis_url: str, prefix: str) -> None:
        self.redis_url, self.prefix = redis_url, prefix
        self.asked: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request.message)
        if len(self.asked) == 1:
            r = aioredis.Redis.from_url(self.redis_url)
            try:
                lost = [key async for key in r.scan_iter(match=f"{self.prefix}:*")]
                assert lost, "the state handed out is recorded in the store"
                await r.delete(*lost)
            finally:
                await r.aclose()
        return ElicitAnswer.accept(ok=True)

    async def url_done(self, request: ElicitationRequest) -> None:
        raise AssertionError("no URL step here")


async def test_a_state_the_store_lost_restarts_the_call_and_the_person_is_asked_once(
    store: RedisStore, redis_url: str
) -> None:
    paid: list[int] = []
    app = Server("payments", state_keys=KeyRing([bytes(range(50, 82))]), store=store)

    @app.tool(single_use_state=True)
    async def pay(ctx: Context, amount: int) -> str:
        answer = await ctx.elicit(f"Pay {amount} EUR?", Form(ok=Boolean()), key="confirm")
        if answer.content and answer.content["ok"]:
            paid.append(amount)
            return f"paid {amount}"
        return "not paid"

    person = Person(redis_url, store.prefix)
    async with (
        uvicorn_server(StreamableHTTP(app)) as running,
        connect_http(running.url, answerer=person) as client,
    ):
        async with asyncio.timeout(60):
            out = await client.call_tool("pay", {"amount": 12})
    assert out["content"][0]["text"] == "paid 12"
    assert person.asked == ["Pay 12 EUR?"], "asked once: the answer given is used again"
    assert paid == [12], "the one-time action ran once"
