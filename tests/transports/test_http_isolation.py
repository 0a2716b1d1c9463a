"""Isolation between principals over real HTTP (uvicorn on 127.0.0.1): bob, holding
everything he can learn or guess from his own traffic and ann's identifiers, cannot read,
answer, cancel, hear about or exhaust what belongs to ann (her tasks, her requestState on
every method that carries one, her 2025-11-25 session and its streams, her URL-mode
flows and secrets), and what he is told does not say whether ann's things exist."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Form, KeyRing, Principal, Server, String
from mcp_elicit.forms import Boolean
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.http import parse_sse
from support.procs import InProcess, uvicorn_server
from support.sessions import ACCEPT, initialize_body
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
TASKS = "io.modelcontextprotocol/tasks"
CAPS = {"elicitation": {"form": {}, "url": {}}, "extensions": {TASKS: {}}}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": CAPS,
    "io.modelcontextprotocol/clientInfo": {"name": "iso", "version": "1"},
}
UNKNOWN_TASK = "00000000-0000-4000-8000-000000000000"


class Tokens:
    """``tok-<name>`` is the principal ``<name>``."""

    async def verify(self, token: str) -> Principal | None:
        return Principal(token.removeprefix("tok-")) if token.startswith("tok-") else None


class CookieAuth:
    """Who is signed in to the site in this browser: its ``who`` cookie."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return cookies.get("who")


def build(store: MemoryStore) -> Server:
    app = Server(
        "isolation",
        auth=Tokens(),
        state_keys=KeyRing([bytes(range(100, 132))]),
        store=store,
        page_auth=CookieAuth(),
        flow_wait=0.2,
        task_poll=0.05,
    )

    @app.tool(task="optional")
    async def deploy(ctx: Context) -> str:
        """Becomes a task, then asks."""
        await ctx.start_task()
        answer = await ctx.elicit("Go?", Form(go=Boolean()), key="go")
        return f"{ctx.principal.subject if ctx.principal else '-'}: {answer.action} {answer.content}"

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action} {answer.content}"

    @app.prompt()
    async def guided(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action} {answer.content}"

    @app.resource("iso://note")
    async def note(ctx: Context) -> str:
        answer = await ctx.elicit("Format?", Form(fmt=String()))
        return f"{ctx.principal.subject if ctx.principal else '-'} got {answer.action} {answer.content}"

    @app.resource(
        "iso://notes/{user}",
        readable=lambda principal, user: principal is not None and principal.subject == user,
    )
    def notes(user: str) -> str:
        return f"{user}'s notes"

    @app.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your key")
        if answer.secret is None:
            return f"no key ({answer.action})"
        return f"key of {len(await answer.secret.reveal())} characters"

    return app


class Peer:
    """One principal talking 2026-07-28 to the server."""

    def __init__(self, http: httpx.AsyncClient, url: str, wire: WireChecker, name: str) -> None:
        self.http, self.url, self.wire, self.name = http, url, wire, name
        self.ids = 0

    def headers(self, method: str, name: str | None = None) -> dict[str, str]:
        headers = {
            "accept": ACCEPT,
            "authorization": f"Bearer tok-{self.name}",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
        }
        if name is not None:
            headers["mcp-name"] = name
        return headers

    async def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return (await self.exchange(method, params))[1]

    async def exchange(self, method: str, params: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and the JSON-RPC response of one request."""
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": {**params, "_meta": META}}
        name = params.get("uri") if method == "resources/read" else params.get("name", params.get("taskId"))
        response = await self.http.post(self.url, json=body, headers=self.headers(method, name))
        assert response.status_code in (200, 400, 429), response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            message: dict[str, Any] = orjson.loads(parse_sse(response.text)[-1])
        else:
            message = response.json()
        self.wire.response(method, message)
        return response.status_code, message

    async def status(self, task_id: str) -> dict[str, Any]:
        result: dict[str, Any] = (await self.request("tasks/get", {"taskId": task_id}))["result"]
        return result


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess]]:
    store = MemoryStore()
    app = build(store)
    async with uvicorn_server(StreamableHTTP(app, keepalive=0.2), lifespan="on") as running:
        yield app, running
    await store.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def _without(message: Mapping[str, Any], task_id: str) -> Any:
    """``message`` with ``task_id`` written as ``<id>``: what else it says."""
    return orjson.loads(orjson.dumps(message).decode().replace(task_id, "<id>"))


async def _task_waiting(ann: Peer) -> str:
    created = (await ann.request("tools/call", {"name": "deploy"}))["result"]
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]

    async def asks() -> bool:
        return (await ann.status(task_id))["status"] == "input_required"

    await eventually(asks, "ann's task to ask")
    return task_id


async def test_anothers_task_answers_exactly_as_one_that_never_existed(
    served: tuple[Server, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    _, running = served
    ann, bob = Peer(http, running.url, wire, "ann"), Peer(http, running.url, wire, "bob")
    task_id = await _task_waiting(ann)
    for method, params in (
        ("tasks/get", {}),
        ("tasks/update", {"inputResponses": {"go": {"action": "accept", "content": {"go": False}}}}),
        ("tasks/cancel", {}),
    ):
        status, foreign = await bob.exchange(method, {"taskId": task_id, **params})
        unknown_status, unknown = await bob.exchange(method, {"taskId": UNKNOWN_TASK, **params})
        assert foreign["error"]["code"] == -32602, (method, foreign)
        assert status == unknown_status, method
        assert _without(foreign["error"], task_id) == _without(unknown["error"], UNKNOWN_TASK), method
    still = await ann.status(task_id)
    assert still["status"] == "input_required" and "go" in still["inputRequests"]
    answer = {"go": {"action": "accept", "content": {"go": True}}}
    assert "result" in await ann.request("tasks/update", {"taskId": task_id, "inputResponses": answer})

    async def completed() -> bool:
        return (await ann.status(task_id))["status"] == "completed"

    await eventually(completed, "ann's task to complete with her own answer")
    result = await ann.status(task_id)
    assert result["result"]["content"][0]["text"] == "ann: accept {'go': True}"


async def test_a_listen_naming_anothers_task_hears_nothing_of_it(
    served: tuple[Server, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    _, running = served
    ann, bob = Peer(http, running.url, wire, "ann"), Peer(http, running.url, wire, "bob")
    task_id = await _task_waiting(ann)
    body = {
        "jsonrpc": "2.0",
        "id": "listen-1",
        "method": "subscriptions/listen",
        "params": {"notifications": {"taskIds": [task_id], "toolsListChanged": True}, "_meta": META},
    }
    heard: list[dict[str, Any]] = []
    acknowledged = asyncio.Event()

    async def listen() -> None:
        async with http.stream(
            "POST", running.url, json=body, headers=bob.headers("subscriptions/listen")
        ) as response:
            assert response.status_code == 200
            decoder = EventDecoder()
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    message = orjson.loads(event.data)
                    heard.append(message)
                    if message.get("method") == "notifications/subscriptions/acknowledged":
                        acknowledged.set()

    listening = asyncio.ensure_future(listen())
    try:
        await asyncio.wait_for(acknowledged.wait(), 5)
        # ann answers: her task moves (working, then completed) while bob listens
        await ann.request(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"go": {"action": "accept", "content": {"go": True}}}},
        )

        async def completed() -> bool:
            return (await ann.status(task_id))["status"] == "completed"

        await eventually(completed, "ann's task to complete")
        await asyncio.sleep(0.3)
    finally:
        listening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listening
    ack = heard[0]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert task_id not in orjson.dumps(heard).decode(), heard


@pytest.mark.parametrize(
    ("method", "params", "key"),
    [
        ("tools/call", {"name": "ask"}, "name"),
        ("prompts/get", {"name": "guided"}, "topic"),
        ("resources/read", {"uri": "iso://note"}, "fmt"),
    ],
)
async def test_anothers_request_state_opens_for_no_one_else(
    served: tuple[Server, InProcess],
    http: httpx.AsyncClient,
    wire: WireChecker,
    method: str,
    params: dict[str, Any],
    key: str,
) -> None:
    _, running = served
    ann, bob = Peer(http, running.url, wire, "ann"), Peer(http, running.url, wire, "bob")
    first = (await ann.request(method, params))["result"]
    assert first["resultType"] == "input_required", first
    (question,) = first["inputRequests"]
    retry = {
        **params,
        "requestState": first["requestState"],
        "inputResponses": {question: {"action": "accept", "content": {key: "bob's"}}},
    }
    stolen = await bob.request(method, retry)
    assert stolen["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    own = (await ann.request(method, retry))["result"]
    assert "ann got accept" in orjson.dumps(own).decode()


# ---- 2025-11-25 sessions ------------------------------------------------------------


async def _open(http: httpx.AsyncClient, url: str, token: str) -> dict[str, str]:
    headers = {"accept": ACCEPT, "authorization": f"Bearer {token}"}
    opened = await http.post(url, json=initialize_body(), headers=headers)
    assert opened.status_code == 200, opened.text
    session = {
        **headers,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=session)).status_code == 202
    return session


async def test_anothers_session_question_and_stream_are_out_of_reach(
    served: tuple[Server, InProcess], http: httpx.AsyncClient
) -> None:
    """ann's tool asks on her request's stream; bob, with her session id, her question's
    id and her stream's event id, can neither answer it, cancel her request, resume her
    stream, listen on her session nor end it; ann then answers and gets her result."""
    _, running = served
    ann = await _open(http, running.url, "tok-ann")
    bob = await _open(http, running.url, "tok-bob")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}
    asked: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
    final: list[dict[str, Any]] = []

    async def ann_calls() -> None:
        async with http.stream("POST", running.url, json=call, headers=ann) as response:
            decoder = EventDecoder()
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if not event.data:
                        continue
                    message = orjson.loads(event.data)
                    if message.get("method") == "elicitation/create" and not asked.done():
                        asked.set_result((message["id"], event.id or ""))
                    elif "result" in message or "error" in message:
                        final.append(message)

    calling = asyncio.ensure_future(ann_calls())
    question, event_id = await asyncio.wait_for(asked, 5)
    assert event_id
    answer = {"jsonrpc": "2.0", "id": question, "result": {"action": "accept", "content": {"name": "bob"}}}
    as_bob = {**ann, "authorization": "Bearer tok-bob"}
    # in ann's session, as bob: not found
    for method, body in (("POST", answer), ("GET", None), ("DELETE", None)):
        foreign = await http.request(method, running.url, headers=as_bob, json=body)
        assert foreign.status_code == 404, (method, foreign.text)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert (await http.post(running.url, json=cancel, headers=as_bob)).status_code == 404
    resumed = await http.get(running.url, headers={**as_bob, "last-event-id": event_id})
    assert resumed.status_code == 404
    # in bob's own session, naming ann's ids: nothing of hers is touched
    assert (await http.post(running.url, json=answer, headers=bob)).status_code == 202
    assert (await http.post(running.url, json=cancel, headers=bob)).status_code == 202
    resumed = await http.get(running.url, headers={**bob, "last-event-id": event_id})
    assert resumed.status_code == 400
    assert not final and not calling.done()
    mine = {"jsonrpc": "2.0", "id": question, "result": {"action": "accept", "content": {"name": "ann"}}}
    assert (await http.post(running.url, json=mine, headers=ann)).status_code == 202
    await asyncio.wait_for(calling, 5)
    assert final[-1]["result"]["content"][0]["text"] == "ann got accept {'name': 'ann'}"


# ---- URL mode -----------------------------------------------------------------------


async def test_anothers_flow_and_secret_stay_hers(
    served: tuple[Server, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """bob's browser, given ann's link, is refused without using it up; bob's own tool
    call never finds ann's secret; ann's page, opened by her, saves it for her."""
    _, running = served
    ann, bob = Peer(http, running.url, wire, "ann"), Peer(http, running.url, wire, "bob")
    first = (await ann.request("tools/call", {"name": "use_key"}))["result"]
    ((key, request),) = first["inputRequests"].items()
    link = request["params"]["url"]
    async with httpx.AsyncClient(cookies={"who": "bob"}, timeout=10) as bobs_browser:
        refused = await bobs_browser.get(link)
        assert refused.status_code == 403
        base = link.split("?")[0]
        assert (await bobs_browser.get(base)).status_code == 403
        assert (await bobs_browser.post(base, data={"action": "cancel"})).status_code == 403
    async with httpx.AsyncClient(cookies={"who": "ann"}, timeout=10) as anns_browser:
        claimed = await anns_browser.get(link)
        assert claimed.status_code == 303, claimed.text
        page = await anns_browser.get(claimed.url.join(claimed.headers["location"]))
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
        saved = await anns_browser.post(
            page.url, data={"csrf": csrf.group(1), "action": "submit", "value": "anns-secret"}
        )
        assert saved.status_code == 200 and "Saved" in saved.text
    retry = {
        "name": "use_key",
        "requestState": first["requestState"],
        "inputResponses": {key: {"action": "accept"}},
    }
    assert (await ann.request("tools/call", retry))["result"]["content"][0]["text"] == "key of 11 characters"
    bobs = (await bob.request("tools/call", {"name": "use_key"}))["result"]
    assert bobs["resultType"] == "input_required", "bob's call asks for his own key"
    stolen = await bob.request("tools/call", {**retry})
    assert stolen["error"]["code"] == -32602


async def test_one_principal_at_its_limits_leaves_anothers_tasks_and_listens_alone(
    served: tuple[Server, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    app, running = served
    app.tasks.max_tasks_per_owner = 1
    app.subscriptions.max_listeners_per_owner = 1
    ann, bob = Peer(http, running.url, wire, "ann"), Peer(http, running.url, wire, "bob")
    await _task_waiting(bob)
    in_place = (await bob.request("tools/call", {"name": "deploy"}))["result"]
    assert in_place["resultType"] == "input_required", "bob's second call goes on in place"
    await _task_waiting(ann)  # ann's call still becomes a task
    acknowledged: dict[str, asyncio.Event] = {"ann": asyncio.Event(), "bob": asyncio.Event()}

    async def listen(peer: Peer) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": f"listen-{peer.name}",
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
        }
        headers = peer.headers("subscriptions/listen")
        async with http.stream("POST", running.url, json=body, headers=headers) as response:
            decoder = EventDecoder()
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if orjson.loads(event.data).get("method") == "notifications/subscriptions/acknowledged":
                        acknowledged[peer.name].set()

    bobs = asyncio.ensure_future(listen(bob))
    try:
        await asyncio.wait_for(acknowledged["bob"].wait(), 5)
        refused = await bob.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        assert refused["error"]["code"] == -32600 and "principal 'bob'" in refused["error"]["message"]
        anns = asyncio.ensure_future(listen(ann))
        try:
            await asyncio.wait_for(acknowledged["ann"].wait(), 5)
        finally:
            anns.cancel()
            await asyncio.gather(anns, return_exceptions=True)
    finally:
        bobs.cancel()
        await asyncio.gather(bobs, return_exceptions=True)


async def test_without_a_token_nothing_of_anothers_is_reached(
    served: tuple[Server, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """A caller with no token (or a token the verifier refuses) naming ann's task or
    session gets 401, as for anything else: it is told nothing about them."""
    _, running = served
    ann = Peer(http, running.url, wire, "ann")
    task_id = await _task_waiting(ann)
    session = await _open(http, running.url, "tok-ann")
    for authorization in (None, "Bearer forged"):
        headers = ann.headers("tasks/cancel", task_id)
        session_headers = dict(session)
        if authorization is None:
            del headers["authorization"], session_headers["authorization"]
        else:
            headers["authorization"] = session_headers["authorization"] = authorization
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tasks/cancel",
            "params": {"taskId": task_id, "_meta": META},
        }
        assert (await http.post(running.url, json=body, headers=headers)).status_code == 401
        for method in ("GET", "DELETE"):
            assert (await http.request(method, running.url, headers=session_headers)).status_code == 401
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert (await http.post(running.url, json=ping, headers=session_headers)).status_code == 401
    assert (await ann.status(task_id))["status"] == "input_required"
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    assert (await http.post(running.url, json=ping, headers=session)).json()["result"] == {}


async def test_anothers_resource_is_neither_read_nor_heard_of(
    served: tuple[Server, InProcess], http: httpx.AsyncClient, wire: WireChecker
) -> None:
    """bob, guessing the URI of ann's notes, reads "not found" as for a URI nothing
    serves, and his listen naming it is acknowledged without it: an update of ann's notes
    reaches no stream of his."""
    app, running = served
    bob = Peer(http, running.url, wire, "bob")
    refused = await bob.request("resources/read", {"uri": "iso://notes/ann"})
    assert refused["error"]["code"] == -32602 and refused["error"]["data"] == {"uri": "iso://notes/ann"}
    nothing = await bob.request("resources/read", {"uri": "iso://nothing"})
    assert refused["error"]["message"] == nothing["error"]["message"].replace(
        "iso://nothing", "iso://notes/ann"
    )
    body = {
        "jsonrpc": "2.0",
        "id": "listen-bob",
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"resourceSubscriptions": ["iso://notes/ann", "iso://notes/bob"]},
            "_meta": META,
        },
    }
    messages: list[dict[str, Any]] = []

    async def listen() -> None:
        async with http.stream(
            "POST", running.url, json=body, headers=bob.headers("subscriptions/listen")
        ) as response:
            decoder = EventDecoder()
            async for chunk in response.aiter_bytes():
                messages.extend(orjson.loads(event.data) for event in decoder.feed(chunk))

    listening = asyncio.ensure_future(listen())
    try:
        await eventually(lambda: len(messages) >= 1, "bob's acknowledgement")
        wire.notification(messages[0])
        assert messages[0]["params"]["notifications"] == {"resourceSubscriptions": ["iso://notes/bob"]}
        assert app.notify_resource_updated("iso://notes/ann") == 0
        assert app.notify_resource_updated("iso://notes/bob") == 1
        await eventually(lambda: len(messages) >= 2, "bob's own update")
        assert [m["params"]["uri"] for m in messages[1:]] == ["iso://notes/bob"]
    finally:
        listening.cancel()
        await asyncio.gather(listening, return_exceptions=True)
