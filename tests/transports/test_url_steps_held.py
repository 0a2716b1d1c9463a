"""A handler's own URL step (``ctx.require_url`` with an ``elicitation_id``) over real
HTTP: on 2026-07-28 the accepted retry is held until the page's backend calls
``complete_elicitation``, in bounded waits (state-only rounds meanwhile); a step never
done is asked once more, then answered ``cancel``; another principal's completion
releases nothing; a completion through another instance sharing the store releases it.
The same handler serves 2025-11-25 (-32042, then the notice), through mcp-elicit's own
client on both revisions; every message is checked against its revision's schema."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.server.url_steps import STEP_ASKS
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http

from support.url_mode import Mcp
from support.url_steps import Shop, served, shop
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

MAX_ROUNDS = 200  # a hang guard for the loops below, never reached when it works


def pay(http: httpx.AsyncClient, url: str, wire: WireChecker, who: str = "alice") -> Mcp:
    return Mcp(http, url, wire, token=f"tok-{who}", tool="pay")


async def until_final(mcp: Mcp, result: dict[str, Any], order: str = "1") -> tuple[dict[str, Any], list[Any]]:
    """Retry until the call completes, accepting every step asked; the final result and
    the results of every round (each input_required checked to carry a state)."""
    rounds = [result]
    for _ in range(MAX_ROUNDS):
        if result.get("resultType") != "input_required":
            return result, rounds
        assert isinstance(result["requestState"], str) and result["requestState"]
        answers = {key: {"action": "accept"} for key in result.get("inputRequests", {})}
        extra: dict[str, Any] = {"inputResponses": answers} if answers else {}
        result = (await mcp.call(arguments={"order": order}, requestState=result["requestState"], **extra))[
            "result"
        ]
        rounds.append(result)
    raise AssertionError(f"no final result after {MAX_ROUNDS} rounds")


async def test_the_accepted_retry_waits_for_the_webhook_then_passes(wire: WireChecker) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        mcp = pay(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "1"}))["result"]
        ((key, step),) = first["inputRequests"].items()
        assert step["params"]["mode"] == "url" and step["params"]["url"].startswith(paid.base)
        accepted = {key: {"action": "accept"}}
        waiting = (
            await mcp.call(
                arguments={"order": "1"}, inputResponses=accepted, requestState=first["requestState"]
            )
        )["result"]
        assert waiting["resultType"] == "input_required", "accept is consent: the page is not done"
        assert "inputRequests" not in waiting and waiting["requestState"] != first["requestState"]
        # the person pays; the page's backend completes the step
        assert (await http.get(step["params"]["url"])).text == "paid"
        final, rounds = await until_final(mcp, waiting)
        assert final["content"][0]["text"] == "order 1: paid"
        assert all("inputRequests" not in r for r in rounds[:-1]), "the step was asked once"
    await store.close()


async def test_a_step_never_done_is_asked_again_then_cancelled(wire: WireChecker) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.1, ask_timeout=0.5)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        mcp = pay(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "1"}))["result"]
        final, rounds = await until_final(mcp, first)
        assert final["content"][0]["text"] == "order 1: not paid (cancel)"
        asked = [r["inputRequests"] for r in rounds if "inputRequests" in r]
        assert len(asked) == STEP_ASKS, "asked once, then once more"
        (once,), (again,) = (list(a.items()) for a in asked)
        assert once[0] != again[0] and once[1] == again[1], "the same step, under a key of its own"
    await store.close()


async def test_another_principals_completion_does_not_release_it(wire: WireChecker) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        alice = pay(http, running.url, wire)
        first = (await alice.call(arguments={"order": "1"}))["result"]
        ((key, step),) = first["inputRequests"].items()
        accepted = {key: {"action": "accept"}}
        # bob pays his own order 1: the same elicitation id, another principal
        assert (await http.get(f"{paid.base}/pay/1?who=bob")).text == "paid"
        await eventually(lambda: app.url_mode.steps.marker("pay-1", "bob"), "bob's completion recorded")
        waiting = (
            await alice.call(
                arguments={"order": "1"}, inputResponses=accepted, requestState=first["requestState"]
            )
        )["result"]
        assert waiting["resultType"] == "input_required" and "inputRequests" not in waiting
        assert await app.url_mode.steps.marker("pay-1", "alice") == ""
        assert (await http.get(step["params"]["url"])).text == "paid"  # alice pays
        final, _ = await until_final(alice, waiting)
        assert final["content"][0]["text"] == "order 1: paid"
    await store.close()


async def test_a_completion_made_before_the_step_was_asked_does_not_release_it(wire: WireChecker) -> None:
    """An earlier completion of the same id (an order paid and asked for again) is not
    this step's: only one made after it was asked counts."""
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        app.complete_elicitation("pay-1", "alice")
        await eventually(lambda: app.url_mode.steps.marker("pay-1", "alice"), "the completion recorded")
        alice = pay(http, running.url, wire)
        first = (await alice.call(arguments={"order": "1"}))["result"]
        ((key, _),) = first["inputRequests"].items()
        accepted = {key: {"action": "accept"}}
        waiting = (
            await alice.call(
                arguments={"order": "1"}, inputResponses=accepted, requestState=first["requestState"]
            )
        )["result"]
        assert waiting["resultType"] == "input_required" and "inputRequests" not in waiting
    await store.close()


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_a_completion_through_another_instance_releases_it(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, wire: WireChecker
) -> None:
    """Asked on one instance, held on a second, completed by a third (the webhook's
    process), all sharing one store."""
    if backend == "sqlite":
        url = f"sqlite:///{(tmp_path / 'shared.db').as_posix().lstrip('/')}"
    else:
        url = f"{request.getfixturevalue('redis_url')}?prefix=steps-{abs(hash(tmp_path)) % 10**9}"
    paid = Shop()
    asking, holding, hook = (shop(url, paid, flow_wait=30.0) for _ in range(3))
    async with (
        served(asking, paid) as first_instance,
        served(holding, paid) as second_instance,
        httpx.AsyncClient(timeout=60) as http,
    ):
        first = (await pay(http, first_instance.url, wire).call(arguments={"order": "7"}))["result"]
        ((key, _),) = first["inputRequests"].items()
        held = asyncio.ensure_future(
            pay(http, second_instance.url, wire).call(
                arguments={"order": "7"},
                inputResponses={key: {"action": "accept"}},
                requestState=first["requestState"],
            )
        )
        await asyncio.sleep(0.2)
        assert not held.done(), held.result()
        paid.paid.add(("alice", "7"))  # the webhook's process records the payment, then says so
        assert not hook.complete_elicitation("pay-7", "alice"), "no 2025-11-25 session waits on it"
        final = (await asyncio.wait_for(held, 30))["result"]
        assert final["content"][0]["text"] == "order 7: paid"
    for app in (asking, holding, hook):
        await app.url_mode.close()


class LookedAt(set[tuple[str, str]]):
    """The shop's record of payments, counting how often the handler looked at it."""

    looks = 0

    def __contains__(self, item: object) -> bool:
        self.looks += 1
        return super().__contains__(item)


async def test_a_completion_through_an_instance_that_never_opened_the_default_store_releases_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wire: WireChecker
) -> None:
    """No store configured: the instance holding the step made the default file; the
    webhook's instance, which asked nothing yet, records the completion there too."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    paid = Shop()
    paid.paid = record = LookedAt()
    asking, hook = shop(None, paid, flow_wait=30.0), shop(None, paid)
    async with served(asking, paid) as running, httpx.AsyncClient(timeout=60) as http:
        mcp = pay(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "8"}))["result"]
        ((key, _),) = first["inputRequests"].items()
        accepted = {key: {"action": "accept"}}
        held = asyncio.ensure_future(
            mcp.call(arguments={"order": "8"}, inputResponses=accepted, requestState=first["requestState"])
        )
        await eventually(lambda: record.looks >= 2, "the retry's handler found the order unpaid")
        paid.paid.add(("alice", "8"))
        hook.complete_elicitation("pay-8", "alice")
        final = (await asyncio.wait_for(held, 20))["result"]
        assert final["content"][0]["text"] == "order 8: paid"
    assert hook.url_mode._store is None, "the webhook's instance opened the file for that write alone"
    for app in (asking, hook):
        await app.url_mode.close()


class Person:
    """Consents to each page and pays on it a moment later, as a person would."""

    modes = frozenset({"url"})

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.shown: list[str] = []
        self.visits: set[asyncio.Task[httpx.Response]] = set()

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        assert request.url is not None
        self.shown.append(request.url)
        self.visits.add(asyncio.ensure_future(self._visit(request.url)))
        return ElicitAnswer("accept")

    async def _visit(self, url: str) -> httpx.Response:
        await asyncio.sleep(0.3)
        return await self.http.get(url)

    async def url_done(self, request: ElicitationRequest) -> None:
        """Never says it is done: on 2025-11-25 the server's notice does (2026-07-28 does
        not ask)."""
        await asyncio.Event().wait()


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_one_handler_serves_both_revisions_through_our_client(revision: str) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=30.0)
    async with (
        served(app, paid) as running,
        httpx.AsyncClient(timeout=30) as http,
    ):
        person = Person(http)
        async with connect_http(
            running.url, answerer=person, versions=[revision], headers={"authorization": "Bearer tok-alice"}
        ) as client:
            out = await asyncio.wait_for(client.call_tool("pay", {"order": "3"}), 60)
        assert out["content"][0]["text"] == "order 3: paid"
        assert person.shown == [f"{paid.base}/pay/3?who=alice"], "asked once"
        await asyncio.gather(*person.visits)
    await store.close()
