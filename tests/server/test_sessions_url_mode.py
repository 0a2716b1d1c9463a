"""Handshake sessions (2025-11-25) and URL mode with completion: URL required and completion
reach only the owning session, questions without their page are forgotten, and the ids a
session waits on are unique and bounded; on 2026-07-28 the same is an input request."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from mcp_elicit import Context, Principal, Server
from mcp_elicit.errors import URLElicitationRequired
from mcp_elicit.server.sessions import MAX_ELICITATIONS
from mcp_elicit.stores import MemoryStore

from support.memory import MemoryClient, SessionClient
from support.server_sessions import Silent, build
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_url_required_and_completion_reach_only_the_owning_session(wire_2025: WireChecker) -> None:
    app = build()
    owner = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    other = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    await owner.open()
    await other.open()
    response = await owner.request("tools/call", {"name": "connect"})
    assert response["error"]["code"] == -32042
    (elicitation,) = response["error"]["data"]["elicitations"]
    assert elicitation == {
        "mode": "url",
        "message": "Connect your account",
        "url": "https://example.com/connect",
        "elicitationId": "e-1",
    }
    assert not app.complete_elicitation("unknown-id")
    assert app.complete_elicitation("e-1")
    assert not app.complete_elicitation("e-1"), "a finished id is ignored"
    pushed = await owner.session.next_pushed(0.1)
    notification = orjson.loads(pushed)
    wire_2025.notification(notification)
    assert notification == {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e-1"},
    }
    assert await other.session.next_pushed(0.01) is None


async def test_a_handler_chosen_id_completes_for_its_principal_only(wire_2025: WireChecker) -> None:
    app = build()
    url_caps = {"elicitation": {"url": {}}}
    alice = SessionClient(app, capabilities=url_caps, principal=Principal("alice"), checker=wire_2025)
    alice_too = SessionClient(app, capabilities=url_caps, principal=Principal("alice"), checker=wire_2025)
    bob = SessionClient(app, capabilities=url_caps, principal=Principal("bob"), checker=wire_2025)
    for client in (bob, alice, alice_too):  # bob's session waits on "e-1" first
        await client.open()
        assert (await client.request("tools/call", {"name": "connect"}))["error"]["code"] == -32042
    # the handler chose the id, so several sessions wait on "e-1": the principal says whose it is
    assert not app.complete_elicitation("e-1"), "no unauthenticated session waits on e-1"
    assert app.complete_elicitation("e-1", principal="alice")
    for client in (alice, alice_too):  # every session of alice's that waits on it hears
        pushed = orjson.loads(await client.session.next_pushed(0.1))
        wire_2025.notification(pushed)
        assert pushed["params"] == {"elicitationId": "e-1"}
    assert await bob.session.next_pushed(0.01) is None, "alice's completion reached bob's session"
    assert not app.complete_elicitation("e-1", principal="alice"), "a finished id is ignored"
    assert app.complete_elicitation("e-1", principal="bob")
    assert orjson.loads(await bob.session.next_pushed(0.1))["params"] == {"elicitationId": "e-1"}


async def test_completion_takes_the_principal_a_handler_holds(wire_2025: WireChecker) -> None:
    """``complete_elicitation(id, ctx.principal)``: the ``Principal`` itself names whose
    sessions hear it, as its subject does (it was compared with the subject and matched
    nobody, so the completion went nowhere and nothing said why)."""
    app = build()
    url_caps = {"elicitation": {"url": {}}}
    alice = SessionClient(app, capabilities=url_caps, principal=Principal("alice"), checker=wire_2025)
    bob = SessionClient(app, capabilities=url_caps, principal=Principal("bob"), checker=wire_2025)
    for client in (alice, bob):
        await client.open()
        assert (await client.request("tools/call", {"name": "connect"}))["error"]["code"] == -32042
    assert app.complete_elicitation("e-1", Principal("alice"))
    pushed = orjson.loads(await alice.session.next_pushed(0.1))
    wire_2025.notification(pushed)
    assert pushed["params"] == {"elicitationId": "e-1"}
    assert await bob.session.next_pushed(0.01) is None, "alice's completion reached bob's session"
    with pytest.raises(TypeError, match=r"principal.*Principal.*subject.*not 7"):
        app.complete_elicitation("e-1", 7)  # type: ignore[arg-type]
    assert app.complete_elicitation("e-1", principal="bob"), "a refused call changed nothing"


@pytest.mark.parametrize("action", ["decline", "cancel", None])
async def test_a_url_question_that_ends_without_the_page_is_forgotten(
    wire_2025: WireChecker, action: str | None
) -> None:
    """Declined, cancelled or unanswered in time (None), nothing will complete it: the
    session stops waiting on its id (a long-lived session would otherwise pile them up)."""
    caps = {"elicitation": {"url": {}}}
    app = build(ask_timeout=0.05)
    client = (
        SessionClient(app, capabilities=caps, checker=wire_2025) if action else Silent(app, capabilities=caps)
    )
    client.answer = lambda _k, _r: {"action": action}
    await client.open()
    result = await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    assert result["content"][0]["text"] == f"page: {action or 'cancel'}"
    assert "step-1" not in client.session.elicitations
    assert not app.complete_elicitation("step-1")


async def test_an_accepted_url_question_waits_for_its_completion(wire_2025: WireChecker) -> None:
    app = build()
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "accept"}
    await client.open()
    for _ in range(2):  # the same id asked twice: one completion finishes both
        result = await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
        assert result["content"][0]["text"] == "page: accept"
    client.answer = lambda _k, _r: {"action": "decline"}
    await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    assert "step-1" in client.session.elicitations, "a declined ask dropped the accepted ones' id"
    assert app.complete_elicitation("step-1")
    assert "step-1" not in client.session.elicitations
    assert not app.complete_elicitation("step-1")


async def test_url_questions_sharing_a_handler_chosen_id_get_unique_ids(wire_2025: WireChecker) -> None:
    """An elicitation id is unique per elicitation: a handler that gives one id to every
    step of a kind ("step-1"), asked again while the first step still waits on its page,
    has the second sent under an id of its own, so the client can tell them apart. The
    handler's id still completes them: one notice for each, under the id it was sent with."""
    app = build()
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    client.answer = lambda _k, _r: {"action": "accept"}
    await client.open()
    for _ in range(2):
        await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    sent = [asked["params"]["elicitationId"] for asked in client.asked]
    assert sent[0] == "step-1", "the first step keeps the handler's id"
    assert len(set(sent)) == 2, f"two live elicitations share an id: {sent}"
    assert app.complete_elicitation("step-1")
    notices = [orjson.loads(await client.session.next_pushed(0.1)) for _ in sent]
    for notice in notices:
        wire_2025.notification(notice)
    assert sorted(n["params"]["elicitationId"] for n in notices) == sorted(sent)
    assert await client.session.next_pushed(0.01) is None
    assert client.session.elicitations == {}
    # once the first has completed, the handler's id is free again
    await client.result("tools/call", {"name": "open_page", "arguments": {"n": 1}})
    assert client.asked[-1]["params"]["elicitationId"] == "step-1"


async def test_the_ids_a_session_waits_on_are_bounded() -> None:
    app = build()
    client = SessionClient(app, capabilities={"elicitation": {"url": {}}})
    client.answer = lambda _k, _r: {"action": "accept"}  # and the pages are never completed
    await client.open()
    for n in range(MAX_ELICITATIONS + 10):
        await client.result("tools/call", {"name": "open_page", "arguments": {"n": n}})
    assert len(client.session.elicitations) == MAX_ELICITATIONS
    assert "step-0" not in client.session.elicitations, "the oldest makes room"
    assert app.complete_elicitation(f"step-{MAX_ELICITATIONS + 9}")


async def test_require_url_on_2026_is_an_input_request_held_until_complete(wire: WireChecker) -> None:
    """The step is an input request; its accepted retry is held until the app says the
    page is done (``complete_elicitation``), as the 2025-11-25 client waits for the notice."""
    store = MemoryStore()
    app = build(store=store, flow_wait=30.0)
    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
    first = await client.result("tools/call", {"name": "connect"})
    ((key, request),) = first["inputRequests"].items()
    assert (
        request["params"]["mode"] == "url" and "elicitationId" not in request["params"]
    )  # none at 2026-07-28
    accepted = {"name": "connect", "inputResponses": {key: {"action": "accept"}}}
    held = asyncio.ensure_future(
        client.result("tools/call", {**accepted, "requestState": first["requestState"]})
    )
    assert not app.complete_elicitation("e-1"), "no 2025-11-25 session waits on it"
    final = await asyncio.wait_for(held, 20)
    assert final["content"][0]["text"] == "connected: accept"
    await store.close()


def raising_url_required(store: MemoryStore) -> tuple[Server, list[bool]]:
    """Tools that raise ``URLElicitationRequired`` themselves until their step is done:
    ``link`` gives its step an ``elicitationId``, ``agree`` none."""
    app, linked = Server("raises", store=store, flow_wait=0.05), [False]
    step = {"mode": "url", "message": "Link your account", "url": "https://example.com/link"}

    @app.tool()
    async def link(ctx: Context) -> str:
        if linked[0]:
            return "linked"
        raise URLElicitationRequired(
            "Link your account first", {"elicitations": [{**step, "elicitationId": "l-1"}]}
        )

    @app.tool()
    async def agree(ctx: Context) -> str:
        if linked[0]:
            return "agreed"
        raise URLElicitationRequired("Link your account first", {"elicitations": [step]})

    return app, linked


async def test_a_raised_url_elicitation_required_on_2026_is_an_input_request(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """2026-07-28 has no -32042: a handler's own ``URLElicitationRequired`` asks its steps
    as ``ctx.require_url`` would (an input request); the accepted retry of a step with an
    ``elicitationId`` is held (a state-only round, not asked again) until
    ``complete_elicitation``; one without is asked again; a declined step ends the tool
    with an error."""
    store = MemoryStore()
    app, linked = raising_url_required(store)
    client = MemoryClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire)
    for name, held in (("link", True), ("agree", False)):
        first = await client.result("tools/call", {"name": name})
        assert first["resultType"] == "input_required"
        (request,) = first["inputRequests"].values()
        assert request == {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Link your account", "url": "https://example.com/link"},
        }
        retry = {
            "name": name,
            "inputResponses": {key: {"action": "accept"} for key in first["inputRequests"]},
        }
        again = await client.result("tools/call", {**retry, "requestState": first["requestState"]})
        assert again["resultType"] == "input_required"
        if held:
            assert "inputRequests" not in again, "accepted, its page open: held, not asked again"
        else:
            assert list(again["inputRequests"].values()) == [request], "nothing can complete it: asked again"
    declined, _ = await client.rounds("tools/call", {"name": "link"}, lambda k, r: {"action": "decline"})
    assert declined["result"]["isError"] is True
    assert "Link your account" in declined["result"]["content"][0]["text"]
    linked[0] = True
    final, _ = await client.rounds("tools/call", {"name": "link"}, lambda k, r: {"action": "accept"})
    assert final["result"]["content"][0]["text"] == "linked"
    bare = MemoryClient(app, capabilities={"elicitation": {"form": {}}}, checker=wire)
    linked[0] = False
    refused = await bare.request("tools/call", {"name": "link"})
    assert refused["error"]["code"] == -32021, "as ctx.require_url: the client must declare elicitation.url"
    session = SessionClient(app, capabilities={"elicitation": {"url": {}}}, checker=wire_2025)
    await session.open()
    assert (await session.request("tools/call", {"name": "link"}))["error"]["code"] == -32042
    await store.close()
