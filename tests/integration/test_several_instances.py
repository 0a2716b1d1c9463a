"""Several instances behind a real load balancer: two ``mcp-elicit serve`` processes
sharing a key file and a real Redis, behind nginx on 127.0.0.1 doing plain round robin.

Round robin with one nginx worker sends consecutive requests to the two instances in
turn, so the rounds of one flow land on both, and the test knows which: nginx's access
log names the upstream of every request, and every handler run is logged with its pid.
What must hold: every form flow completes with its answers (sequential and concurrent);
a secret typed into a page served by one instance wakes the retry waiting on the other at
once (Redis pub/sub, not the waiter's one-second re-check); a page link opened twice on
one instance is held by the browser back first on the other; a single-use state is
redeemed once and refused on both instances afterwards.

Only 2026-07-28 is run here: its requests carry everything a round needs. A 2025-11-25
session lives in the process that answered ``initialize`` (README, "Several instances"),
so its requests are routed by its id: ``test_session_routes``.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from integration.instances import Cluster, Modern, claim, running_cluster, submit_secret
from mcp_elicit.client import Scripted
from mcp_elicit.transports.http_client import connect_http

from support.nginx import Nginx, Served

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SECRET = "sk-live-4f9a-shared-across-instances"
INVALID_STATE = {"code": -32602, "message": "Invalid or expired requestState"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


def survey_answers(name: str, guests: int) -> Scripted:
    return Scripted.from_script(
        [
            {"fields": ["name"], "content": {"name": name}},
            {"fields": ["guests"], "content": {"guests": guests}},
            {"fields": ["seat"], "content": {"seat": "terrace"}},
        ]
    )


async def run_survey(url: str, flow: str, guests: int) -> str:
    async with connect_http(url, answerer=survey_answers(f"guest {flow}", guests), timeout=20) as client:
        assert client.revision == "2026-07-28"
        result = await client.call_tool("survey", {"flow": flow})
    assert result.get("isError") is not True, result
    text: str = result["content"][0]["text"]
    return text


async def test_form_flows_complete_with_their_rounds_on_both_instances(cluster: Cluster) -> None:
    before = len(cluster.lb.served())
    for i in range(3):
        assert await run_survey(cluster.url, f"seq-{i}", i + 1) == f"seq-{i}: guest seq-{i}, {i + 1}, terrace"
    flows = [f"par-{i}" for i in range(8)]
    done = await asyncio.gather(*(run_survey(cluster.url, flow, 2) for flow in flows))
    assert done == [f"{flow}: guest {flow}, 2, terrace" for flow in flows], "every flow completed"

    runs = cluster.runs("survey")
    both = {cluster.a.pid, cluster.b.pid}
    for i in range(3):  # one client at a time: its four rounds alternate between the instances
        assert runs[f"seq-{i}"] == both, cluster.logs()
    assert set(runs) >= set(flows)

    def rounds(served: list[Served]) -> list[Served]:
        return [s for s in served[before:] if s.uri == "/mcp"]

    # nginx logs a request as it ends, which may be after the client read the answer
    served = await logged_when(cluster.lb, lambda served: len(rounds(served)) >= 11 * 4)
    mcp = rounds(served)
    assert {s.upstream for s in mcp} == {cluster.a.port, cluster.b.port}
    assert all(s.status == 200 for s in mcp), served[before:]
    assert len(mcp) >= 11 * 4, "each survey is four rounds of tools/call at least"


async def test_a_page_on_one_instance_wakes_the_retry_waiting_on_the_other(cluster: Cluster) -> None:
    r = aioredis.Redis.from_url(cluster.redis.url)
    try:
        async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
            mcp = Modern(http, cluster.url)
            first = (await mcp.call("use_key", {"flow": "secret-1"}))["result"]
            assert first["resultType"] == "input_required"
            ((key, request),) = first["inputRequests"].items()
            link = request["params"]["url"]
            assert link.startswith(f"{cluster.lb.base}/mcp-elicit/flows/"), "--public-url is the balancer"
            flow_id = link.split("/flows/", 1)[1].split("?", 1)[0]
            page_url, csrf = await claim(browser, link)  # the person opens the page

            # the client accepted; its retry waits for the page on whichever instance it reached
            # (its URL's query names it in nginx's log; the server looks at the path only)
            retrying = Modern(http, f"{cluster.url}?retry=secret-1")
            retrying.ids = mcp.ids
            waiting = asyncio.ensure_future(
                retrying.call(
                    "use_key",
                    {"flow": "secret-1"},
                    inputResponses={key: {"action": "accept"}},
                    requestState=first["requestState"],
                )
            )
            channel = f"{cluster.prefix}:flow:{flow_id}"
            async with asyncio.timeout(10):
                while (await r.pubsub_numsub(channel))[0][1] < 1:
                    assert not waiting.done(), waiting.result()
                    await asyncio.sleep(0.02)

            await submit_secret(browser, page_url, csrf, SECRET)  # the next request: the other instance
            # without the Redis event the waiter would look again only after 60 s: the
            # client's 20 s timeout fails the retry then
            final = (await waiting)["result"]

        digest = hashlib.sha256(SECRET.encode()).hexdigest()[:16]
        assert final["content"][0]["text"] == f"secret-1: key sha256 {digest}", final
        page = ("POST", f"/mcp-elicit/flows/{flow_id}")
        retried = ("POST", "/mcp?retry=secret-1")
        # the page's Save and the retry it woke, in either order: each is logged as it ends
        served = await logged_when(
            cluster.lb, lambda served: {page, retried} <= {(s.method, s.uri) for s in served}
        )
        (page_post,) = [s for s in served if (s.method, s.uri) == page]
        (retry,) = [s for s in served if (s.method, s.uri) == retried]
        assert retry.upstream != page_post.upstream, "the page and the waiting retry on different instances"

        # both instances open the vault (one key ring); neither asks again
        async with httpx.AsyncClient(timeout=20) as http:
            mcp = Modern(http, cluster.url)
            for _ in range(2):
                again = (await mcp.call("use_key", {"flow": "secret-2"}))["result"]
                assert again["content"][0]["text"] == f"secret-2: key sha256 {digest}"
        assert cluster.runs("use_key")["secret-2"] == {cluster.a.pid, cluster.b.pid}

        # Redis holds it sealed: no value under the prefix contains the secret
        keys = [k async for k in r.scan_iter(match=f"{cluster.prefix}:*")]
        assert any(k.startswith(f"{cluster.prefix}:vault:".encode()) for k in keys), keys
        for k in keys:
            if await r.type(k) == b"string":
                assert SECRET.encode() not in (await r.get(k) or b""), k
    finally:
        await r.aclose()


async def test_a_link_opened_on_one_instance_is_held_by_the_browser_back_first_on_the_other(
    cluster: Cluster,
) -> None:
    """The link opened twice on instance a (an answer lost, then a reload), the page then
    reached on instance b: the browser back first holds it, the other is refused there, and
    the link is used up on both instances."""
    r = aioredis.Redis.from_url(cluster.redis.url)
    try:  # the key saved by another test would be used without asking
        for key in [k async for k in r.scan_iter(match=f"{cluster.prefix}:vault:*")]:
            await r.delete(key)
    finally:
        await r.aclose()
    async with (
        httpx.AsyncClient(timeout=20) as http,
        httpx.AsyncClient(timeout=20) as lost,
        httpx.AsyncClient(timeout=20) as browser,
    ):
        first = (await Modern(http, cluster.url).call("use_key", {"flow": "claim-1"}))["result"]
        ((_, request),) = first["inputRequests"].items()
        link = httpx.URL(request["params"]["url"])
        link_on = {i.port: link.copy_with(port=i.port) for i in cluster.instances}
        for client in (lost, browser):
            assert (await client.get(link_on[cluster.a.port])).status_code == 303
        page_on_b = link_on[cluster.b.port].copy_with(query=None)
        page = await browser.get(page_on_b)
        assert page.status_code == 200 and 'name="csrf"' in page.text, page.text
        refused = await lost.get(page_on_b)
        assert refused.status_code == 403 and "opened in another browser" in refused.text, refused.text
        for port in link_on:
            used = await lost.get(link_on[port])
            assert used.status_code == 403 and "already used" in used.text, used.text


async def logged_when(lb: Nginx, done: Callable[[list[Served]], bool], seconds: float = 5.0) -> list[Served]:
    """nginx's log once ``done(served)`` holds: nginx logs a request as it ends, which may
    be after the client read the whole answer."""
    deadline = time.monotonic() + seconds
    while True:
        served = lb.served()
        if done(served) or time.monotonic() > deadline:
            return served
        await asyncio.sleep(0.05)


async def test_a_replayed_single_use_state_is_refused_on_either_instance(cluster: Cluster) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        mcp = Modern(http, cluster.url)
        first = (await mcp.call("pay", {"flow": "pay-1", "amount": 20}))["result"]
        ((key, _),) = first["inputRequests"].items()
        retry: dict[str, Any] = {
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"],
        }
        done = (await mcp.call("pay", {"flow": "pay-1", "amount": 20}, **retry))["result"]
        assert done["content"][0]["text"] == "pay-1: paid 20"
        replaying = Modern(http, f"{cluster.url}?replay=pay-1")  # named in nginx's log
        for _ in range(2):
            replay = await replaying.call("pay", {"flow": "pay-1", "amount": 20}, **retry)
            assert replay["error"] == INVALID_STATE

    def replayed(served: list[Served]) -> list[Served]:
        return [s for s in served if s.uri == "/mcp?replay=pay-1"]

    replays = replayed(await logged_when(cluster.lb, lambda served: len(replayed(served)) >= 2))
    assert len(replays) == 2, replays
    assert {s.upstream for s in replays} == {cluster.a.port, cluster.b.port}, "refused by both"
    paid = sum(i.stderr().count("paid flow=pay-1 ") for i in cluster.instances)
    assert paid == 1, "the one-time action ran once"


async def test_a_resource_updated_on_one_instance_is_heard_by_a_listener_on_the_other(
    cluster: Cluster,
) -> None:
    """A listen stream stays on the instance that took it; the update is made wherever the
    request that changes the resource lands. Both are asked directly here, not through the
    balancer, so the two are surely different processes."""
    async with connect_http(cluster.b.url, versions=["2026-07-28"], timeout=20) as listening:
        async with listening.listen(resource_uris=["test://board"]) as changes:
            assert changes.agreed.get("resourceSubscriptions") == ["test://board"]
            async with connect_http(cluster.a.url, versions=["2026-07-28"], timeout=20) as posting:
                result = await posting.call_tool("post", {"note": "hello"})
            assert result["content"][0]["text"] == "told 0 listener(s) here"  # none on a
            method, params = await asyncio.wait_for(anext(changes), 10)
    assert method == "notifications/resources/updated" and params["uri"] == "test://board"
    assert any("post note=hello" in line for line in cluster.a.stderr().splitlines())


async def test_a_task_is_followed_through_the_balancer_whichever_instance_is_asked(cluster: Cluster) -> None:
    """The task's handler runs on the instance that created it; the client's tasks/get
    polls and its tasks/update alternate between the instances, round robin."""
    before = len(cluster.lb.served())
    answers = Scripted.from_script([{"fields": ["go"], "content": {"go": True}}])
    async with connect_http(cluster.url, answerer=answers, tasks=True, timeout=30) as client:
        result = await client.call_tool("migrate", {"flow": "task-1"})
    assert result["content"][0]["text"] == "task-1: migrated", result
    assert [len(pids) for pids in cluster.runs("migrate").values()] == [1]  # one handler, one process
    upstreams = {served.upstream for served in cluster.lb.served()[before:]}
    assert upstreams == {cluster.a.port, cluster.b.port}, "the task's requests reached both instances"
