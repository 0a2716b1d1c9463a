"""Two instances on a Redis that loses its data (``FLUSHALL``, as a restart without
persistence does): a single-use ``requestState`` is still redeemed once. One redeemed
before the loss and replayed after it is refused, and so is one issued before the loss
and not yet redeemed (the person is asked again): the store cannot tell which of those
were used, so it accepts neither. Rounds begun after the loss go on as usual."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from integration.instances import Cluster, Modern, running_cluster

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
INVALID_STATE = {"code": -32602, "message": "Invalid or expired requestState"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("lost")) as running:
        yield running


def _confirm(first: dict[str, Any]) -> dict[str, Any]:
    ((key, _),) = first["inputRequests"].items()
    return {
        "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }


async def test_single_use_states_from_before_the_store_lost_its_data_are_refused(cluster: Cluster) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        a, b = Modern(http, cluster.a.url), Modern(http, cluster.b.url)
        redeemed = _confirm((await a.call("pay", {"flow": "lost-1", "amount": 7}))["result"])
        pending = _confirm((await a.call("pay", {"flow": "lost-2", "amount": 8}))["result"])
        done = (await b.call("pay", {"flow": "lost-1", "amount": 7}, **redeemed))["result"]
        assert done["content"][0]["text"] == "lost-1: paid 7", done
        r = aioredis.Redis.from_url(cluster.redis.url)
        try:
            assert await r.flushall()
        finally:
            await r.aclose()
        for mcp in (a, b):
            replay = await mcp.call("pay", {"flow": "lost-1", "amount": 7}, **redeemed)
            assert replay.get("error") == INVALID_STATE, replay
            late = await mcp.call("pay", {"flow": "lost-2", "amount": 8}, **pending)
            assert late.get("error") == INVALID_STATE, late
        again = _confirm((await b.call("pay", {"flow": "lost-3", "amount": 9}))["result"])
        done = (await a.call("pay", {"flow": "lost-3", "amount": 9}, **again))["result"]
        assert done["content"][0]["text"] == "lost-3: paid 9", done
    logs = cluster.logs()
    assert logs.count("paid flow=lost-1 ") == 1, "the one-time action ran once"
    assert "paid flow=lost-2 " not in logs and logs.count("paid flow=lost-3 ") == 1, logs
