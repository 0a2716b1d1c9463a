"""Isolation between principals over real HTTP (uvicorn on 127.0.0.1): bob cannot reach
ann's 2025-11-25 session, its questions and stream, nor her URL-mode flow and secret."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.wire.sse import EventDecoder

import support.isolation as isolation_support
from support.isolation import Peer, _open
from support.procs import InProcess
from support.wire import WireChecker

served = isolation_support.served
http = isolation_support.http

pytestmark = pytest.mark.anyio


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
