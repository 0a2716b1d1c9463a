"""Isolation between principals over real HTTP (uvicorn on 127.0.0.1): bob, holding
everything he can learn or guess from his own traffic and ann's identifiers, cannot read,
answer, cancel, hear about or exhaust what belongs to ann (her tasks, her requestState on
every method that carries one, her 2025-11-25 session and its streams, her URL-mode
flows and secrets), and what he is told does not say whether ann's things exist."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.wire.sse import EventDecoder

import support.isolation as isolation_support
from support.isolation import META, Peer, _open
from support.procs import InProcess
from support.waiting import eventually
from support.wire import WireChecker

served = isolation_support.served
http = isolation_support.http

pytestmark = pytest.mark.anyio
UNKNOWN_TASK = "00000000-0000-4000-8000-000000000000"


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
