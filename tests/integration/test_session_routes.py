"""2025-11-25 sessions on several instances behind a stock load balancer: two ``mcp-elicit
serve --route a|b`` processes sharing a key file and a real Redis, behind nginx on
127.0.0.1 configured as the README says (``support.nginx``, ``routes=``): a ``map`` from
the ``Mcp-Session-Id`` prefix to the instance it names, round robin for the rest.

A session lives in the process that answered its ``initialize`` and a question waits
there for its answer, so every later request of the session must reach that process.
``initialize`` carries no session id: it goes round robin, and the id the instance
gives out names it (``a.<random>``). What must hold: sessions made on both instances run
their form questions, keep their ``GET`` stream (a resource update arrives on it) and are
never told 404 (no session is renewed); each request naming a session reached the
instance the id names; a URL-mode page (no session id: round robin) saved on the
instance that does not hold the session completes the session's question there; a
resource updated by a request on one instance reaches the subscribed sessions of the
other; a 2026-07-28 client in the same cluster still goes round robin; a session id that
reaches an instance it does not name is a 404 saying so.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from integration.instances import Cluster, claim, running_cluster, submit_secret
from mcp_elicit.client import ElicitAnswer, ElicitationRequest, Scripted
from mcp_elicit.transports.http_client import connect_http

from support.nginx import Nginx, Served

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("routes"), routed=True) as running:
        yield running


def survey_answers(name: str) -> Scripted:
    return Scripted.from_script(
        [
            {"fields": ["name"], "content": {"name": name}},
            {"fields": ["guests"], "content": {"guests": 3}},
            {"fields": ["seat"], "content": {"seat": "inside"}},
        ]
    )


async def one_session(url: str, flow: str) -> tuple[str, list[str]]:
    """A 2025-11-25 session: tools listed, a survey of three form questions answered, the
    board subscribed and changed, its update heard on the session's GET stream. Its id
    (never renewed) and the answers."""
    updated = asyncio.Event()

    def heard(method: str, params: Mapping[str, Any]) -> None:
        if method == "notifications/resources/updated" and params.get("uri") == "test://board":
            updated.set()

    texts: list[str] = []
    async with connect_http(
        url, answerer=survey_answers(flow), versions=["2025-11-25"], on_notification=heard, timeout=20
    ) as client:
        assert client.revision == "2025-11-25"
        session = client.session
        sid = getattr(session, "session_id", None)
        assert isinstance(sid, str)
        assert "survey" in {t["name"] for t in await client.list_tools()}
        texts.append((await client.call_tool("survey", {"flow": flow}))["content"][0]["text"])
        await client.request("resources/subscribe", {"uri": "test://board"})
        texts.append((await client.call_tool("post", {"note": flow}))["content"][0]["text"])
        await asyncio.wait_for(updated.wait(), 10)
        assert getattr(session, "session_id", None) == sid, "the session was renewed: a request met a 404"
    return sid, texts


async def served_when(lb: Nginx, done: Any, seconds: float = 5.0) -> list[Served]:
    """nginx's log once ``done(served)`` holds (a GET stream is logged when it closes)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        served = lb.served()
        if done(served) or asyncio.get_running_loop().time() > deadline:
            return served
        await asyncio.sleep(0.05)


async def test_sessions_on_both_instances_are_routed_by_their_id(cluster: Cluster) -> None:
    before = len(cluster.lb.served())
    sessions = []
    for i in range(4):  # one at a time: round robin puts their initialize on a, b, a, b
        sid, texts = await one_session(cluster.url, f"s{i}")
        assert texts[0] == f"s{i}: s{i}, 3, inside", cluster.logs()
        sessions.append(sid)
    assert {sid.split(".", 1)[0] for sid in sessions} == {"a", "b"}, sessions

    def every_get_and_delete_logged(served: list[Served]) -> bool:  # the last lines nginx writes
        return all(
            {s.session for s in served[before:] if s.method == method} >= set(sessions)
            for method in ("GET", "DELETE")
        )

    served = (await served_when(cluster.lb, every_get_and_delete_logged))[before:]
    assert every_get_and_delete_logged(served), served
    assert [s for s in served if s.status == 404] == [], "no session met a 404"
    for s in served:
        if s.session is not None:  # routed by the id: always the instance it names
            assert s.upstream == cluster.port_of(s.session.split(".", 1)[0]), s
    for sid in sessions:
        requests = [s for s in served if s.session == sid]
        assert {s.method for s in requests} == {"POST", "GET", "DELETE"}, requests
        assert len(requests) >= 8, "tools/list, three questions answered, tools/call twice, subscribe"
    initializes = [s.upstream for s in served if s.session is None and s.method == "POST"]
    assert set(initializes) == {cluster.a.port, cluster.b.port}, "initialize went round robin"


async def test_a_2026_client_in_the_same_cluster_goes_round_robin(cluster: Cluster) -> None:
    answered: list[httpx.Request] = []

    async def count(response: httpx.Response) -> None:
        answered.append(response.request)

    url = f"{cluster.url}?client=m1"  # names this client's requests in nginx's log
    async with (
        httpx.AsyncClient(timeout=20, event_hooks={"response": [count]}) as http,
        connect_http(
            url, answerer=survey_answers("modern"), versions=["2026-07-28"], http_client=http, timeout=20
        ) as client,
    ):
        result = await client.call_tool("survey", {"flow": "m1"})
    assert result["content"][0]["text"] == "m1: modern, 3, inside"

    def ours(served: list[Served]) -> list[Served]:
        return [s for s in served if s.uri == "/mcp?client=m1"]

    # nginx logs a request as it ends, which may be after the client read the answer
    served = ours(await served_when(cluster.lb, lambda served: len(ours(served)) >= len(answered)))
    assert len(served) == len(answered) >= 4, (served, answered)  # the survey's rounds at least
    assert all(s.session is None for s in served), served
    assert {s.upstream for s in served} == {cluster.a.port, cluster.b.port}
    assert all(s.status == 200 for s in served), served


async def test_a_session_id_naming_another_instance_is_a_404_saying_so(cluster: Cluster) -> None:
    """What a misconfigured balancer shows: the instance cannot tell a session on another
    live instance from one whose instance is gone, so the client is told to start a new
    session (404), and the body and the log name both routes."""
    sid, _ = await one_session(cluster.url, "elsewhere")  # a session, now closed, on some instance
    other = {"a": "b", "b": "a"}[sid.split(".", 1)[0]]
    async with httpx.AsyncClient(timeout=10) as http:
        direct = f"http://127.0.0.1:{cluster.port_of(other)}/mcp"
        headers = {"accept": ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        response = await http.post(
            direct, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
        )
    assert response.status_code == 404, response.text
    message = response.json()["error"]["message"]
    assert f"route {sid.split('.', 1)[0]!r}" in message and f"route {other!r}" in message, message
    instance = cluster.a if other == "a" else cluster.b
    assert (
        f"a request of a session of route {sid.split('.', 1)[0]!r} reached this instance (route {other!r})"
        in instance.stderr()
    )


async def probe(cluster: Cluster) -> int:
    """The upstream a request without a session id reached: one to a page that does not
    exist, named uniquely, whose own line in nginx's log is waited for (nginx logs a request
    as it ends, maybe after the client read the answer, so the log's last line so far may
    be an earlier request's)."""
    uri = f"/mcp-elicit/flows/probe-{secrets.token_hex(8)}"
    async with httpx.AsyncClient(timeout=10) as http:
        await http.get(f"{cluster.lb.base}{uri}")
    served = await served_when(cluster.lb, lambda served: any(s.uri == uri for s in served))
    (probed,) = [s for s in served if s.uri == uri]
    assert probed.upstream is not None, probed
    return probed.upstream


async def next_in_pool(cluster: Cluster, route: str) -> None:
    """Make ``route``'s instance the one the next request without a session id reaches:
    round robin over two alternates, so a probe that reached it means one more probe."""
    if await probe(cluster) == cluster.port_of(route):
        assert await probe(cluster) != cluster.port_of(route), "round robin alternates"


async def forget_secrets(cluster: Cluster) -> None:
    r = aioredis.Redis.from_url(cluster.redis.url)
    try:
        async for key in r.scan_iter(match=f"{cluster.prefix}:vault:*"):
            await r.delete(key)
    finally:
        await r.aclose()


class OpensPage:
    """A person who agrees to open the URL and hands it to the test (the browser)."""

    modes = frozenset({"url"})

    def __init__(self) -> None:
        self.link: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.mode == "url" and request.url is not None, request
        self.link.set_result(request.url)
        return ElicitAnswer.accept()

    async def url_done(self, request: ElicitationRequest) -> None:
        await asyncio.Event().wait()  # the person never says: only the server's notice ends it


async def test_a_page_finished_on_the_other_instance_completes_the_session_waiting(cluster: Cluster) -> None:
    """2025-11-25 URL mode: the page link names no session, so the balancer sends the
    page's requests round robin; here the page's Save reaches the instance that does not
    hold the session. The session's instance must learn it at once (the Redis event; its
    re-check is a minute away): the client hears ``notifications/elicitation/complete``
    and the call answers with the secret, for a session on each instance."""
    secret = "sk-test-2025-routed-page"
    digest = hashlib.sha256(secret.encode()).hexdigest()[:16]
    for i, held in enumerate("ab"):
        await next_in_pool(cluster, held)  # the session's initialize
        before = len(cluster.lb.served())
        person = OpensPage()
        completed: list[str] = []

        def heard(method: str, params: Mapping[str, Any], completed: list[str] = completed) -> None:
            if method == "notifications/elicitation/complete":
                completed.append(str(params.get("elicitationId")))

        async with (
            connect_http(
                cluster.url, answerer=person, versions=["2025-11-25"], on_notification=heard, timeout=30
            ) as client,
            httpx.AsyncClient(timeout=20) as browser,
        ):
            sid = getattr(client.session, "session_id", None)
            assert isinstance(sid, str)
            route = sid.split(".", 1)[0]
            assert route == held, sid
            call = asyncio.ensure_future(client.call_tool("use_key", {"flow": f"page-{i}"}))
            link = await asyncio.wait_for(asyncio.shield(person.link), 20)
            assert link.startswith(f"{cluster.lb.base}/mcp-elicit/flows/"), link
            flow_id = link.split("/flows/", 1)[1].split("?", 1)[0]
            page_url, csrf = await claim(browser, link)  # two requests: the link, the page
            await next_in_pool(cluster, {"a": "b", "b": "a"}[route])  # the page's Save
            await submit_secret(browser, page_url, csrf, secret)
            # the re-check is a minute away (INTEGRATION_FLOW_RECHECK): an answer within
            # this bound was woken by the Redis event
            result = await asyncio.wait_for(call, 30)
        assert result["content"][0]["text"] == f"page-{i}: key sha256 {digest}", result
        assert completed == [flow_id], "the client heard the page finished"
        page = ("POST", f"/mcp-elicit/flows/{flow_id}")

        def saved(served: list[Served], page: tuple[str, str] = page, before: int = before) -> bool:
            return page in [(s.method, s.uri) for s in served[before:]]

        served = (await served_when(cluster.lb, saved))[before:]
        (page_post,) = [s for s in served if s.method == "POST" and s.uri == f"/mcp-elicit/flows/{flow_id}"]
        assert page_post.upstream != cluster.port_of(route), "the page was saved on the other instance"
        assert all(s.upstream == cluster.port_of(route) for s in served if s.session == sid), served
        await forget_secrets(cluster)  # the next session is asked again


async def test_a_resource_updated_on_one_instance_reaches_the_sessions_held_by_the_other(
    cluster: Cluster,
) -> None:
    """README: ``notify_resource_updated`` on one instance reaches the listeners of all. A
    2025-11-25 session subscribed on one instance hears, on its ``GET`` stream, the update
    a request on the other instance made; both ways."""
    for held, other in (("a", "b"), ("b", "a")):
        updated = asyncio.Event()

        def heard(method: str, params: Mapping[str, Any], updated: asyncio.Event = updated) -> None:
            if method == "notifications/resources/updated" and params.get("uri") == "test://board":
                updated.set()

        await next_in_pool(cluster, held)
        async with connect_http(
            cluster.url, versions=["2025-11-25"], on_notification=heard, timeout=20
        ) as listening:
            sid = getattr(listening.session, "session_id", None)
            assert isinstance(sid, str) and sid.startswith(f"{held}."), sid
            await listening.request("resources/subscribe", {"uri": "test://board"})
            other_url = f"http://127.0.0.1:{cluster.port_of(other)}/mcp"
            async with connect_http(other_url, versions=["2025-11-25"], timeout=20) as posting:
                result = await posting.call_tool("post", {"note": f"to-{held}"})
            assert result["content"][0]["text"] == "told 0 listener(s) here"  # none on the other
            await asyncio.wait_for(updated.wait(), 10)
        assert f"post note=to-{held} " in (cluster.a if other == "a" else cluster.b).stderr()
