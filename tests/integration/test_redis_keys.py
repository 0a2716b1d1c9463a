"""What two instances leave in Redis after many rounds of every kind, as an operator
running them for months sees it: every key either expires or is a secret a person gave
(``vault``, kept on purpose: README, "Several instances"); no pub/sub channel is left
subscribed per request; the connections to Redis do not grow with the rounds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import redis.asyncio as aioredis

from integration.instances import Cluster, Modern, claim, running_cluster, submit_secret
from mcp_elicit.client import Scripted
from mcp_elicit.transports.http_client import connect_http

from support.waiting import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ROUNDS = 4
KEPT_ON_PURPOSE = ("vault",)  # secrets and connections people gave


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("keys")) as running:
        yield running


async def one_round_of_each(cluster: Cluster, n: int) -> None:
    """Forms, URL-mode pages saved, declined and abandoned, single-use states (used and
    replayed), tasks done and declined, subscriptions opened and closed."""
    answers = Scripted.from_script(
        [
            {"fields": ["name"], "content": {"name": f"guest {n}"}},
            {"fields": ["guests"], "content": {"guests": 2}},
            {"fields": ["seat"], "content": {"seat": "terrace"}},
        ]
    )
    async with connect_http(cluster.url, answerer=answers, timeout=20) as client:
        assert (await client.call_tool("survey", {"flow": f"s{n}"}))["content"][0]["text"].endswith("terrace")
    async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
        mcp = Modern(http, cluster.url)
        for kind in ("unopened", "abandoned", "declined", "saved"):  # once saved, never asked again
            first = (await mcp.call("use_key", {"flow": f"k{n}{kind}"}))["result"]
            if first["resultType"] != "input_required":
                continue  # the secret saved in an earlier round: nothing asked
            ((key, request),) = first["inputRequests"].items()
            link = request["params"]["url"]
            if kind == "unopened":
                continue
            page_url, csrf = await claim(browser, link)
            if kind == "saved":
                await submit_secret(browser, page_url, csrf, f"sk-{n}")
            action = "decline" if kind == "declined" else "accept"
            if kind != "abandoned":
                await mcp.call(
                    "use_key",
                    {"flow": f"k{n}{kind}"},
                    inputResponses={key: {"action": action}},
                    requestState=first["requestState"],
                )
        first = (await mcp.call("pay", {"flow": f"p{n}", "amount": 1}))["result"]
        ((key, _),) = first["inputRequests"].items()
        retry = {"inputResponses": {key: {"action": "accept", "content": {"ok": True}}}}
        retry["requestState"] = first["requestState"]
        paid = await mcp.call("pay", {"flow": f"p{n}", "amount": 1}, **retry)
        assert paid["result"]["content"][0]["text"] == f"p{n}: paid 1", paid
        replayed = await mcp.call("pay", {"flow": f"p{n}", "amount": 1}, **retry)
        assert replayed["error"]["message"] == "Invalid or expired requestState", replayed
    for go in (True, False):
        answers = Scripted.from_script([{"fields": ["go"], "content": {"go": go}}])
        async with connect_http(cluster.url, answerer=answers, tasks=True, timeout=30) as client:
            await client.call_tool("migrate", {"flow": f"t{n}{go}"})
    for instance in cluster.instances:
        async with connect_http(instance.url, versions=["2026-07-28"], timeout=20) as listening:
            async with listening.listen(resource_uris=["test://board"]):
                async with connect_http(cluster.url, versions=["2026-07-28"], timeout=20) as posting:
                    await posting.call_tool("post", {"note": f"n{n}"})


async def test_after_many_rounds_every_key_expires_or_is_kept_on_purpose(cluster: Cluster) -> None:
    r = aioredis.Redis.from_url(cluster.redis.url)
    try:
        clients = []
        for n in range(ROUNDS):
            await one_round_of_each(cluster, n)
            clients.append(len(await r.client_list()))

        async def channels_left() -> list[str]:
            return sorted(c.decode() for c in await r.pubsub_channels(f"{cluster.prefix}:*"))

        async def only_the_relay() -> bool:  # Redis drops a subscription as its socket closes
            return len(await channels_left()) == 1

        await eventually(only_the_relay, "the closed subscriptions dropped by Redis")
        keys = {k.decode(): await r.pttl(k) async for k in r.scan_iter(match=f"{cluster.prefix}:*")}
        channels = await channels_left()
        forever = {k for k, ttl in keys.items() if ttl < 0 and k.split(":")[1] not in KEPT_ON_PURPOSE}
        assert not forever, f"keys that never expire: {sorted(forever)}"
        (relay,) = channels  # no flow's channel is left subscribed
        assert "relay" in relay, channels
        assert (await r.pubsub_numsub(relay))[0][1] == 2, "one subscription per instance"
        # the pools keep the connections the busiest moment needed, not one per request
        assert clients[-1] - clients[0] <= 2, f"Redis connections grew with the rounds: {clients}"
    finally:
        await r.aclose()


async def test_connections_redis_closes_are_opened_again_and_every_kind_of_round_still_works(
    cluster: Cluster,
) -> None:
    """``CLIENT KILL`` of every connection the instances hold (their pools and their
    subscriptions, as a failover or an output buffer limit does): the next rounds work."""
    r = aioredis.Redis.from_url(cluster.redis.url)
    try:
        await one_round_of_each(cluster, 100)
        killed = await r.client_kill_filter(_type="normal", skipme=True)
        killed += await r.client_kill_filter(_type="pubsub")
        assert killed >= 2, "the instances' connections were there to kill"
        await one_round_of_each(cluster, 101)
        for instance in cluster.instances:
            assert "Traceback" not in instance.stderr(), instance.stderr()
    finally:
        await r.aclose()


async def test_a_retry_whose_client_goes_away_leaves_no_subscription(cluster: Cluster) -> None:
    """A retry waiting for a page subscribes to the flow's channel; its client giving up
    (the HTTP request dropped), time after time, leaves no subscription nor connection."""
    r = aioredis.Redis.from_url(cluster.redis.url)

    async def subscribers(channel: str, count: int) -> bool:
        return bool((await r.pubsub_numsub(channel))[0][1] == count)

    try:
        async with httpx.AsyncClient(timeout=20) as http:
            mcp = Modern(http, cluster.a.url)
            async for saved in r.scan_iter(match=f"{cluster.prefix}:vault:*"):  # so it is asked
                await r.delete(saved)
            first = (await mcp.call("use_key", {"flow": "gone"}))["result"]
            ((key, request),) = first["inputRequests"].items()
            flow_id = request["params"]["url"].split("/flows/", 1)[1].split("?", 1)[0]
            channel = f"{cluster.prefix}:flow:{flow_id}"
            retry = {"inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]}
            clients = len(await r.client_list())
            for _ in range(5):
                waiting = asyncio.ensure_future(mcp.call("use_key", {"flow": "gone"}, **retry))
                await eventually(lambda: subscribers(channel, 1), "the retry waiting on the flow")
                waiting.cancel()  # the client gives up: httpx drops the connection
                await eventually(lambda: subscribers(channel, 0), "the abandoned wait unsubscribed")
        assert len(await r.client_list()) <= clients
    finally:
        await r.aclose()
