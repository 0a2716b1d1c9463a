"""requestState in a client's hands, over real HTTP (uvicorn on 127.0.0.1).

The client holding valid states from its own requests tries to move one to another
method, tool, argument, principal or server sharing the key; to rewind to an earlier
round; to send it late, altered or under a key the ring dropped. What each attempt
gets is what docs/design/request-state-sealing.md and docs/design/mrtr-replay.md
promise: every refusal is the same -32602 on the wire, and the server's log says why.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Boolean, Context, Form, KeyRing, Server, String
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http import parse_sse
from support.principals import Tokens
from support.procs import InProcess, uvicorn_server
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
OLD_KEY = bytes(range(140, 172))
KEYS = KeyRing([bytes(range(100, 132)), OLD_KEY])
REFUSED = {"code": -32602, "message": "Invalid or expired requestState"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "attacks", "version": "1"},
}
NAME = {"name": {"action": "accept", "content": {"name": "Ann"}}}
SURE = {"sure": {"action": "accept", "content": {"sure": True}}}
DONE: list[str] = []


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def build(name: str, keys: KeyRing, clock: Clock, store: MemoryStore) -> Server:
    app = Server(name, auth=Tokens(), state_keys=keys, clock=clock, store=store)

    async def two_questions(ctx: Context, dest: str) -> str:
        who = await ctx.elicit("Name?", Form(name=String()), key="name")
        sure = await ctx.elicit(f"Book {dest}?", Form(sure=Boolean()), key="sure")
        DONE.append(f"{dest} for {who.content}")
        return f"{dest} {who.content} {sure.content}"

    @app.tool()
    async def book(ctx: Context, dest: str, seats: float = 1) -> str:
        return await two_questions(ctx, dest)

    @app.tool()
    async def cancel(ctx: Context, dest: str, seats: float = 1) -> str:
        return await two_questions(ctx, dest)

    @app.tool(single_use_state=True)
    async def pay(ctx: Context, dest: str) -> str:
        return await two_questions(ctx, dest)

    @app.prompt()
    async def trip(ctx: Context, dest: str) -> str:
        return await two_questions(ctx, dest)

    @app.resource("trip://{dest}")
    async def plan(ctx: Context, dest: str) -> str:
        return await two_questions(ctx, dest)

    return app


class Peer:
    """One principal (or none) talking 2026-07-28 to one server."""

    def __init__(self, http: httpx.AsyncClient, url: str, wire: WireChecker, who: str | None) -> None:
        self.http, self.url, self.wire, self.who = http, url, wire, who

    async def send(self, method: str, params: dict[str, Any], body: bytes | None = None) -> dict[str, Any]:
        if body is None:
            message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
            body = orjson.dumps(message)
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
            "mcp-name": params["uri"] if method == "resources/read" else params["name"],
        }
        if self.who is not None:
            headers["authorization"] = f"Bearer tok-{self.who}"
        response = await self.http.post(self.url, content=body, headers=headers)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            reply: dict[str, Any] = orjson.loads(parse_sse(response.text)[-1])
        else:
            reply = response.json()
        self.wire.response(method, reply)
        return reply

    async def state(self, method: str, params: dict[str, Any], answers: dict[str, Any] | None = None) -> str:
        """The requestState of a round of ``method`` (the first, or one answering ``answers``)."""
        reply = await self.send(method, params if answers is None else {**params, "inputResponses": answers})
        assert reply["result"]["resultType"] == "input_required", reply
        token: str = reply["result"]["requestState"]
        return token

    async def retry(self, method: str, params: dict[str, Any], state: str, answers: dict[str, Any]) -> Any:
        """The result of a retry, or its error."""
        reply = await self.send(method, {**params, "requestState": state, "inputResponses": answers})
        return reply.get("result", reply.get("error"))


@pytest.fixture
async def servers() -> AsyncIterator[tuple[Clock, InProcess, InProcess]]:
    """Two servers sharing a key ring but not a server id (their names differ)."""
    clock, store = Clock(), MemoryStore()
    async with (
        uvicorn_server(StreamableHTTP(build("travel", KEYS, clock, store)), lifespan="on") as one,
        uvicorn_server(StreamableHTTP(build("travel-staging", KEYS, clock, store)), lifespan="on") as two,
    ):
        yield clock, one, two
    await store.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def asks(result: Any, key: str) -> bool:
    return isinstance(result, dict) and key in result.get("inputRequests", {})


BOOK = {"name": "book", "arguments": {"dest": "SFO", "seats": 2}}


async def test_a_state_opens_only_for_the_request_and_principal_it_was_sealed_for(
    servers: tuple[Clock, InProcess, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    _, one, two = servers
    ann = Peer(http, one.url, wire, "ann")
    state = await ann.state("tools/call", BOOK)
    moved = [
        (ann, "tools/call", {"name": "cancel", "arguments": BOOK["arguments"]}),  # another tool
        (ann, "tools/call", {"name": "book", "arguments": {"dest": "LAX", "seats": 2}}),  # other arguments
        (ann, "tools/call", {"name": "book", "arguments": {"dest": "SFO"}}),  # one left out
        (ann, "prompts/get", {"name": "trip", "arguments": {"dest": "SFO"}}),  # another method
        (ann, "resources/read", {"uri": "trip://SFO"}),
        (Peer(http, one.url, wire, "bob"), "tools/call", BOOK),  # another principal
        (Peer(http, one.url, wire, "Ann"), "tools/call", BOOK),  # subjects are compared exactly
        (Peer(http, two.url, wire, "ann"), "tools/call", BOOK),  # another server, the same keys
    ]
    for peer, method, params in moved:
        assert await peer.retry(method, params, state, NAME) == REFUSED, (peer.who, method, params)
    assert asks(await ann.retry("tools/call", BOOK, state, NAME), "sure")
    # each method's own state moves to none of the others either
    prompt = await ann.state("prompts/get", {"name": "trip", "arguments": {"dest": "SFO"}})
    resource = await ann.state("resources/read", {"uri": "trip://SFO"})
    assert await ann.retry("resources/read", {"uri": "trip://SFO"}, prompt, NAME) == REFUSED
    assert (
        await ann.retry("prompts/get", {"name": "trip", "arguments": {"dest": "SFO"}}, resource, NAME)
        == REFUSED
    )
    assert await ann.retry("resources/read", {"uri": "trip://LAX"}, resource, NAME) == REFUSED
    assert asks(await ann.retry("resources/read", {"uri": "trip://SFO"}, resource, NAME), "sure")


async def test_arguments_bind_as_they_decode(
    servers: tuple[Clock, InProcess, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """Arguments that decode to the same JSON values open the state (key order, a repeated
    key whose last value is the same); any other spelling of a value does not, even one the
    tool would take as equal (2 and 2.0, NFC and NFD, 0.0 and -0.0)."""
    _, one, _ = servers
    ann = Peer(http, one.url, wire, "ann")
    cafe = unicodedata.normalize("NFC", "Café")
    state = await ann.state("tools/call", {"name": "book", "arguments": {"dest": cafe, "seats": 0.0}})
    reordered = {"name": "book", "arguments": {"seats": 0.0, "dest": cafe}}
    assert asks(await ann.retry("tools/call", reordered, state, NAME), "sure")
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book","arguments":'
    body += b'{"dest":"LAX","seats":0.0,"dest":' + orjson.dumps(cafe) + b"},"
    body += b'"requestState":' + orjson.dumps(state) + b',"inputResponses":' + orjson.dumps(NAME)
    body += b',"_meta":' + orjson.dumps(META) + b"}}"
    assert asks((await ann.send("tools/call", {"name": "book"}, body))["result"], "sure")
    for dest, seats in ((cafe, 0), (cafe, -0.0), (unicodedata.normalize("NFD", cafe), 0.0)):
        respelled = {"name": "book", "arguments": {"dest": dest, "seats": seats}}
        assert await ann.retry("tools/call", respelled, state, NAME) == REFUSED, (dest, seats)


async def test_an_earlier_rounds_state_can_be_answered_again_unless_single_use(
    servers: tuple[Clock, InProcess, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """Rewinding: a client keeps the first round's state, sees the second question, then
    goes back and answers the first one differently. Every round's state opens until it
    expires; only a single_use_state tool refuses the rewind."""
    _, one, _ = servers
    ann = Peer(http, one.url, wire, "ann")
    first = await ann.state("tools/call", BOOK)
    second = await ann.state("tools/call", {**BOOK, "requestState": first}, NAME)
    DONE.clear()
    assert "{'name': 'Ann'}" in (await ann.retry("tools/call", BOOK, second, SURE))["content"][0]["text"]
    eve = {"name": {"action": "accept", "content": {"name": "Eve"}}, **SURE}
    assert "{'name': 'Eve'}" in (await ann.retry("tools/call", BOOK, first, eve))["content"][0]["text"]
    # an answer the state recorded wins over a new one under the same key
    assert "{'name': 'Ann'}" in (await ann.retry("tools/call", BOOK, second, eve))["content"][0]["text"]
    assert DONE == ["SFO for {'name': 'Ann'}", "SFO for {'name': 'Eve'}", "SFO for {'name': 'Ann'}"]

    pay = {"name": "pay", "arguments": {"dest": "SFO"}}
    first = await ann.state("tools/call", pay)
    second = await ann.state("tools/call", {**pay, "requestState": first}, NAME)
    assert "content" in await ann.retry("tools/call", pay, second, SURE)
    assert await ann.retry("tools/call", pay, first, eve) == REFUSED
    assert await ann.retry("tools/call", pay, second, SURE) == REFUSED


async def test_each_round_seals_a_fresh_expiry(
    servers: tuple[Clock, InProcess, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """The expiry bounds the time between two rounds, not the whole request: a client
    that retries within the ttl carries the answers so far on for as long as it likes."""
    clock, one, _ = servers
    ann = Peer(http, one.url, wire, "ann")
    state = await ann.state("tools/call", BOOK, NAME)
    for _ in range(3):
        clock.now += 599
        state = await ann.state("tools/call", {**BOOK, "requestState": state})
    clock.now += 599
    done = await ann.retry("tools/call", BOOK, state, SURE)
    assert "{'name': 'Ann'}" in done["content"][0]["text"]
    clock.now += 600
    assert await ann.retry("tools/call", BOOK, state, SURE) == REFUSED


async def test_every_refusal_says_the_same_on_the_wire_and_why_in_the_log(
    servers: tuple[Clock, InProcess, InProcess],
    http: httpx.AsyncClient,
    wire: WireChecker,
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, one, _ = servers
    ann = Peer(http, one.url, wire, "ann")
    state = await ann.state("tools/call", BOOK)
    flipped = state[:30] + ("B" if state[30] == "A" else "A") + state[31:]  # inside the body
    tokens = {
        "authentication failed": flipped,
        "too large": state + "A" * 70_000,
        "unsupported version": "v3." + state[3:],
        "bad prefix": "x" + state,
        "unknown key id": "v2.00000000." + state[12:],
        "bad base64": state[:-1] + "!",
    }
    with caplog.at_level(logging.INFO, logger="mcp_elicit.server"):
        for reason, token in tokens.items():
            assert await ann.retry("tools/call", BOOK, token, NAME) == REFUSED, reason
        clock.now += 600
        assert await ann.retry("tools/call", BOOK, state, NAME) == REFUSED
    logged = [r.getMessage() for r in caplog.records if "requestState" in r.getMessage()]
    for reason in (*tokens, "expired"):
        assert any(reason in line and "tools/call" in line for line in logged), (reason, logged)
    assert not any(state[12:40] in line for line in logged), "the log names no token body"


async def test_rotation_opens_what_the_ring_still_holds(
    servers: tuple[Clock, InProcess, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """A state sealed before the ring got a new first key opens while the old key stays
    in the ring; one sealed under a key the ring dropped is refused like any other."""
    clock, one, _ = servers
    store = MemoryStore()
    before = build("travel", KeyRing([OLD_KEY]), clock, store)
    dropped = build("travel", KeyRing([bytes(range(1, 33))]), clock, store)
    async with (
        uvicorn_server(StreamableHTTP(before), lifespan="on") as old,
        uvicorn_server(StreamableHTTP(dropped), lifespan="on") as gone,
    ):
        sealed_old = await Peer(http, old.url, wire, "ann").state("tools/call", BOOK)
        sealed_gone = await Peer(http, gone.url, wire, "ann").state("tools/call", BOOK)
    await store.close()
    ann = Peer(http, one.url, wire, "ann")
    assert asks(await ann.retry("tools/call", BOOK, sealed_old, NAME), "sure")
    assert await ann.retry("tools/call", BOOK, sealed_gone, NAME) == REFUSED
