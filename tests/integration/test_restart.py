"""A restart loses nothing: one ``mcp-elicit serve`` process with a key file and a SQLite
store is killed with SIGKILL between two rounds and started again on the same port, key
and store; the next round carries on.

* A secret typed into the page before the kill is in the vault after it (sealed with the
  key file's keys, so the new process opens it) and the retry finishes with it.
* A form flow half answered before the kill finishes after it: its answers travel in the
  sealed ``requestState``, which the new process opens with the same keys.
* A single-use state redeemed before the kill stays redeemed after it (the marker is in
  SQLite).

Only 2026-07-28 is run: a 2025-11-25 session lives in the memory of the process that
answered ``initialize`` and ends with it, by design (the client gets 404 and starts a new
session, as the spec says).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from integration.instances import APP, Instance, Modern, claim, keygen, submit_secret

from support.procs import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SECRET = "tb-9c1e-survives-a-restart"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Instance]:
    keys = keygen(tmp_path / "state.keys")
    store = f"sqlite:///{tmp_path / 'state.db'}"
    instance = Instance(
        APP, free_port(), tmp_path / "server.stderr", ("--state-key-file", str(keys), "--store", store)
    )
    try:
        instance.restart()
        yield instance
    finally:
        instance.stop()


async def test_a_secret_entered_before_a_crash_finishes_the_retry_after_it(server: Instance) -> None:
    async with httpx.AsyncClient(timeout=20) as http, httpx.AsyncClient(timeout=20) as browser:
        first = (await Modern(http, server.url).call("use_key", {"flow": "r1"}))["result"]
        ((key, request),) = first["inputRequests"].items()
        link = request["params"]["url"]
        assert link.startswith(f"http://127.0.0.1:{server.port}/mcp-elicit/flows/"), "the bound address"
        page_url, csrf = await claim(browser, link)
        await submit_secret(browser, page_url, csrf, SECRET)
    before = server.pid
    server.kill9()
    server.restart()
    assert server.pid != before
    async with httpx.AsyncClient(timeout=20) as http:
        retry = {"inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]}
        final = (await Modern(http, server.url).call("use_key", {"flow": "r1"}, **retry))["result"]
    digest = hashlib.sha256(SECRET.encode()).hexdigest()[:16]
    assert final["content"][0]["text"] == f"r1: key sha256 {digest}", server.stderr()
    assert {pid for _, flow, pid in server.runs("use_key") if flow == "r1"} == {before, server.pid}


async def test_a_form_flow_carries_on_after_a_crash(server: Instance) -> None:
    answers = {"name": {"name": "Ada"}, "guests": {"guests": 4}, "seat": {"seat": "inside"}}
    sent: dict[str, object] = {}
    async with httpx.AsyncClient(timeout=20) as http:
        mcp = Modern(http, server.url)
        result = (await mcp.call("survey", {"flow": "f1"}))["result"]
        ((key, _),) = result["inputRequests"].items()
        result = (
            await mcp.call(
                "survey",
                {"flow": "f1"},
                inputResponses={key: {"action": "accept", "content": answers[key]}},
                requestState=result["requestState"],
            )
        )["result"]
        sent[key] = answers[key]
    server.kill9()
    server.restart()
    async with httpx.AsyncClient(timeout=20) as http:
        mcp = Modern(http, server.url)
        while result.get("resultType") == "input_required":
            ((key, _),) = result["inputRequests"].items()
            assert key not in sent, "a question answered before the crash was asked again"
            sent[key] = answers[key]
            result = (
                await mcp.call(
                    "survey",
                    {"flow": "f1"},
                    inputResponses={key: {"action": "accept", "content": answers[key]}},
                    requestState=result["requestState"],
                )
            )["result"]
    assert result["content"][0]["text"] == "f1: Ada, 4, inside"
    assert list(sent) == ["name", "guests", "seat"]


async def test_a_redeemed_single_use_state_stays_redeemed_after_a_crash(server: Instance) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        mcp = Modern(http, server.url)
        first = (await mcp.call("pay", {"flow": "p1", "amount": 5}))["result"]
        ((key, _),) = first["inputRequests"].items()
        retry = {
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"],
        }
        done = (await mcp.call("pay", {"flow": "p1", "amount": 5}, **retry))["result"]
        assert done["content"][0]["text"] == "p1: paid 5"
    server.kill9()
    server.restart()
    async with httpx.AsyncClient(timeout=20) as http:
        replay = await Modern(http, server.url).call("pay", {"flow": "p1", "amount": 5}, **retry)
    assert replay["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    assert server.stderr().count("paid flow=p1 ") == 1
