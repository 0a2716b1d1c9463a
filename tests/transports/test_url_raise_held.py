"""A handler that raises ``URLElicitationRequired`` itself (the shop's ``checkout``: the
official SDK's pattern, raising until its own record says the order is paid), over real
HTTP. On 2026-07-28 the step is an input request; the accepted retry is held, as
``ctx.require_url``'s, until the page's backend calls ``complete_elicitation``: the step
is not shown again meanwhile (state-only rounds of ``flow_wait``), and once the page is
done the handler runs again in the round that waited, whose answer is then the call's.
Not done within ``ask_timeout``: asked once more, then the call fails as cancelled.
Another principal's completion releases nothing; a completion through another instance
sharing the store does. A step raised again once its page was done is asked anew. The
same handler serves 2025-11-25 (-32042, then the notice), through mcp-elicit's own
client on both revisions; every message is checked against its revision's schema."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from client.recorder import Recorder
from transports.test_url_steps_held import LookedAt, Person, until_final

from mcp_elicit.server.url_steps import STEP_ASKS
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_client import connect_http

from support.url_mode import Mcp
from support.url_steps import Shop, served, shop
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio

MAX_ROUNDS = 200  # a hang guard for the loop below, never reached when it works


def checkout(http: httpx.AsyncClient, url: str, wire: WireChecker, who: str = "alice") -> Mcp:
    return Mcp(http, url, wire, token=f"tok-{who}", tool="checkout")


async def accepted_retry(mcp: Mcp, first: dict[str, Any], order: str = "1") -> dict[str, Any]:
    """The retry accepting every step ``first`` asked."""
    answers = {key: {"action": "accept"} for key in first["inputRequests"]}
    retry = await mcp.call(
        arguments={"order": order}, inputResponses=answers, requestState=first["requestState"]
    )
    return retry["result"]  # type: ignore[no-any-return]


async def test_the_accepted_retry_is_held_until_the_webhook_then_the_handler_runs_again(
    wire: WireChecker,
) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        mcp = checkout(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "1"}))["result"]
        ((_, step),) = first["inputRequests"].items()
        assert step["params"] == {
            "mode": "url",
            "message": "Pay for your order",
            "url": f"{paid.base}/pay/1?who=alice",
        }
        waiting = await accepted_retry(mcp, first)
        assert waiting["resultType"] == "input_required", waiting
        assert "inputRequests" not in waiting, "accept is consent: the page is open, not asked again"
        assert (await http.get(step["params"]["url"])).text == "paid"
        final, rounds = await until_final(mcp, waiting)
        assert final["content"][0]["text"] == "order 1: paid"
        assert all("inputRequests" not in r for r in rounds[:-1]), "the step was asked once"
    await store.close()


async def test_the_round_that_waited_answers_once_the_page_is_done(wire: WireChecker) -> None:
    """The completion comes while the accepted retry waits: the handler runs again in that
    round, and its result is the retry's answer (no further round)."""
    paid, store = Shop(), MemoryStore()
    paid.paid = record = LookedAt()
    app = shop(store, paid, flow_wait=30.0)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=60) as http:
        mcp = checkout(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "2"}))["result"]
        ((_, step),) = first["inputRequests"].items()
        held = asyncio.ensure_future(accepted_retry(mcp, first, "2"))
        await eventually(lambda: record.looks >= 2, "the retry's handler found the order unpaid")
        assert not held.done(), held.result()
        assert (await http.get(step["params"]["url"])).text == "paid"
        final = await asyncio.wait_for(held, 30)
        assert final["content"][0]["text"] == "order 2: paid", final
        assert record.looks == 3, "run again once, in the round that waited"
    await store.close()


async def test_a_step_never_done_is_asked_again_then_the_call_fails_as_cancelled(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mcp_elicit")
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.1, ask_timeout=0.5)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        mcp = checkout(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "1"}))["result"]
        final, rounds = await until_final(mcp, first)
        assert final["isError"] is True, final
        assert final["content"][0]["text"] == (
            "The user did not complete a step this request needs (cancel): "
            f"Pay for your order ({paid.base}/pay/1?who=alice)"
        )
        asked = [r["inputRequests"] for r in rounds if "inputRequests" in r]
        assert len(asked) == STEP_ASKS, "asked once, then once more"
        (once,), (again,) = (list(a.items()) for a in asked)
        assert once[0] != again[0] and once[1] == again[1], "the same step, under a key of its own"
    said = [r.getMessage() for r in caplog.records if "was not done within 0.5 s" in r.getMessage()]
    assert len(said) == 1 and re.match(r"tools/call '\w+' \(request \d+\): the page of URL step", said[0]), (
        said
    )
    await store.close()


async def test_another_principals_completion_does_not_release_it(wire: WireChecker) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        alice = checkout(http, running.url, wire)
        first = (await alice.call(arguments={"order": "1"}))["result"]
        ((_, step),) = first["inputRequests"].items()
        # bob pays his own order 1: the same elicitation id, another principal
        assert (await http.get(f"{paid.base}/pay/1?who=bob")).text == "paid"
        await eventually(lambda: app.url_mode.steps.marker("pay-1", "bob"), "bob's completion recorded")
        waiting = await accepted_retry(alice, first)
        assert waiting["resultType"] == "input_required" and "inputRequests" not in waiting, waiting
        assert await app.url_mode.steps.marker("pay-1", "alice") == ""
        assert (await http.get(step["params"]["url"])).text == "paid"  # alice pays
        final, _ = await until_final(alice, waiting)
        assert final["content"][0]["text"] == "order 1: paid"
    await store.close()


async def test_a_handler_whose_own_record_says_done_answers_without_a_completion(wire: WireChecker) -> None:
    """Each held round runs the handler first: work recorded by other means (no call of
    ``complete_elicitation``) ends the wait at the next round."""
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        mcp = checkout(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "4"}))["result"]
        waiting = await accepted_retry(mcp, first, "4")
        assert waiting["resultType"] == "input_required" and "inputRequests" not in waiting, waiting
        paid.paid.add(("alice", "4"))
        final, rounds = await until_final(mcp, waiting, "4")
        assert final["content"][0]["text"] == "order 4: paid"
        assert all("inputRequests" not in r for r in rounds[:-1])
    await store.close()


async def test_a_step_raised_again_once_its_page_was_done_is_asked_anew(
    wire: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The page's backend completed the step but recorded nothing the handler finds: the
    step is asked again, and only a later completion releases it."""
    caplog.set_level(logging.INFO, "mcp_elicit")
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=0.2)
    async with served(app, paid) as running, httpx.AsyncClient(timeout=30) as http:
        mcp = checkout(http, running.url, wire)
        first = (await mcp.call(arguments={"order": "5"}))["result"]
        ((_, step),) = first["inputRequests"].items()
        result = await accepted_retry(mcp, first, "5")
        assert "inputRequests" not in result, result
        app.complete_elicitation("pay-5", "alice")  # completed, the payment not recorded
        for _ in range(MAX_ROUNDS):
            if "inputRequests" in result:
                break
            result = (await mcp.call(arguments={"order": "5"}, requestState=result["requestState"]))["result"]
        assert result["inputRequests"] == first["inputRequests"], "asked anew"
        assert "asked anew" in caplog.text
        again = await accepted_retry(mcp, result, "5")
        assert "inputRequests" not in again, "held again: the earlier completion does not release it"
        assert (await http.get(step["params"]["url"])).text == "paid"
        final, rounds = await until_final(mcp, again, "5")
        assert final["content"][0]["text"] == "order 5: paid"
        assert all("inputRequests" not in r for r in rounds[:-1])
    await store.close()


async def test_a_completion_through_another_instance_releases_it(tmp_path: Path, wire: WireChecker) -> None:
    """Asked on one instance, held on a second, completed by a third (the webhook's
    process), all sharing one SQLite store."""
    url = f"sqlite:///{(tmp_path / 'shared.db').as_posix().lstrip('/')}"
    paid = Shop()
    paid.paid = record = LookedAt()
    asking, holding, hook = (shop(url, paid, flow_wait=30.0) for _ in range(3))
    async with (
        served(asking, paid) as first_instance,
        served(holding, paid) as second_instance,
        httpx.AsyncClient(timeout=60) as http,
    ):
        first = (await checkout(http, first_instance.url, wire).call(arguments={"order": "7"}))["result"]
        held = asyncio.ensure_future(accepted_retry(checkout(http, second_instance.url, wire), first, "7"))
        await eventually(lambda: record.looks >= 2, "the retry's handler found the order unpaid")
        assert not held.done(), held.result()
        paid.paid.add(("alice", "7"))  # the webhook's process records the payment, then says so
        assert not hook.complete_elicitation("pay-7", "alice"), "no 2025-11-25 session waits on it"
        final = await asyncio.wait_for(held, 30)
        assert final["content"][0]["text"] == "order 7: paid"
    for app in (asking, holding, hook):
        await app.url_mode.close()


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_one_handler_serves_both_revisions_through_our_client(revision: str) -> None:
    paid, store = Shop(), MemoryStore()
    app = shop(store, paid, flow_wait=30.0)
    recorder = Recorder()
    async with (
        served(app, paid) as running,
        httpx.AsyncClient(timeout=30) as http,
    ):
        person = Person(http)
        async with connect_http(
            running.url,
            answerer=person,
            versions=[revision],
            headers={"authorization": "Bearer tok-alice"},
            trace=recorder,
        ) as client:
            out = await asyncio.wait_for(client.call_tool("checkout", {"order": "3"}), 60)
        assert out["content"][0]["text"] == "order 3: paid"
        assert person.shown == [f"{paid.base}/pay/3?who=alice"], "asked once"
        await asyncio.gather(*person.visits)
    await store.close()
    checker = WireChecker.load(revision)
    assert recorder.check(checker) > 0 and recorder.received  # what the client sent
    asked = {m["id"]: m["method"] for m in recorder.sent if "method" in m and "id" in m}
    for message in recorder.received:  # and what the server sent
        checker.outgoing(message, None if "method" in message else asked[message["id"]])
    methods = [m.get("method") for m in recorder.received]
    if revision == "2025-11-25":  # the -32042, then the notice the retry waited for
        assert any(m.get("error", {}).get("code") == -32042 for m in recorder.received)
        assert "notifications/elicitation/complete" in methods
    else:
        assert "notifications/elicitation/complete" not in methods
