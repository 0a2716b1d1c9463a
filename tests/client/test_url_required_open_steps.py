"""2025-11-25: the URL steps of a -32042 are registered for their completion notices only
while the client waits for them. A step that ends any way at all (the call cancelled, or
left by the person's Ctrl-C, while the person is shown it or while the client waits for
it to be done; a later step of the error declined) is done with, so a later step of the
same ``elicitationId`` is not refused as "already in use". Two calls whose -32042s name
one id (a server that gives a kind of step one id) each wait for it: one of them done
does not leave the other deaf to the server's notice. A server gone while the person is
on a step ends the call. The server is a real process over stdio (``hostile_server.py``,
scenario ``legacy-url-steps``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest

from client.hostile import hostile
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ProtocolError, TransportError

pytestmark = pytest.mark.anyio


class Person:
    """Accepts every URL but ``e1`` (declined); ``stuck`` says where the first step stops
    for good ("shown": on its page, "waiting": before saying it is done), until cancelled,
    or with ``interrupt`` raises KeyboardInterrupt there (a Ctrl-C in ``input()``).
    ``at`` is set when it gets there. Later steps are accepted and said done at once, except
    for ``waits_for``'s call (``origin.target``), whose step is never said done."""

    modes = frozenset({"form", "url"})

    def __init__(
        self, stuck: str | None = None, waits_for: str | None = None, *, interrupt: bool = False
    ) -> None:
        self.stuck = stuck
        self.interrupt = interrupt
        self.waits_for = waits_for
        self.shown: list[tuple[str, str | None]] = []
        self.at: dict[str, asyncio.Event] = {}

    def reached(self, where: str) -> asyncio.Event:
        return self.at.setdefault(where, asyncio.Event())

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.shown.append((request.origin.target or "", request.elicitation_id))
        self.reached(f"shown {request.origin.target}").set()
        if self.stuck == "shown" and len(self.shown) == 1:
            await self._stop()
        return ElicitAnswer("decline" if request.elicitation_id == "e1" else "accept")

    async def url_done(self, request: ElicitationRequest) -> None:
        self.reached(f"waiting {request.origin.target}").set()
        if self.stuck == "waiting" and len(self.shown) == 1:
            await self._stop()
        if request.origin.target == self.waits_for:
            await asyncio.Event().wait()
        release = self.at.get(f"release {request.origin.target}")
        if release is not None:
            await release.wait()

    async def _stop(self) -> None:
        if self.interrupt:
            raise KeyboardInterrupt
        await asyncio.Event().wait()


async def _cancelled(task: asyncio.Future[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@pytest.mark.parametrize(
    "ended", ["cancelled-shown", "cancelled-waiting", "ctrl-c-shown", "ctrl-c-waiting", "later-declined"]
)
async def test_a_step_that_ended_early_leaves_its_id_free(ended: str) -> None:
    """The first call's -32042 names ``e0`` (and ``e1``, declined, for ``later-declined``);
    that call ends before ``e0`` is complete (cancelled, or left by the person's Ctrl-C).
    The second call's server asks a URL question of ``e0``: the person answers it, not
    refused as a step still open."""
    first = "error:e0,e1" if ended == "later-declined" else "error:e0"
    how, _, where = ended.rpartition("-")
    person = Person(stuck=where if how else None, interrupt=how == "ctrl-c")
    async with hostile(["legacy-url-steps", first, "ask:e0"], "2025-11-25", person) as (client, _):
        if ended == "later-declined":
            with pytest.raises(ProtocolError, match="declin"):
                await asyncio.wait_for(client.call_tool("t"), 10)
        elif how == "ctrl-c":  # in this task: a KeyboardInterrupt out of a task of its own ends the loop
            with pytest.raises(KeyboardInterrupt):
                async with asyncio.timeout(10):
                    await client.call_tool("t")
        else:
            call = asyncio.ensure_future(client.call_tool("t"))
            await asyncio.wait_for(person.reached(f"{where} t").wait(), 10)
            await _cancelled(call)
        out = await asyncio.wait_for(client.call_tool("t"), 10)
    response = json.loads(out["content"][0]["text"])
    assert response.get("result") == {"action": "accept"}, response
    assert person.shown[-1] == ("t", "e0")


async def test_two_calls_waiting_for_steps_of_one_id_both_hear_its_notice() -> None:
    """Calls ``a`` and ``b`` each get a -32042 naming ``e0``. The person says ``a``'s step
    is done (once ``b``'s is waiting too); ``a``'s retry makes the server say ``e0`` is
    complete, before its result. ``b``, whose step nobody says is done, retries on that
    notice."""
    person = Person(waits_for="b")
    release = person.reached("release a")
    steps = ["legacy-url-steps", "error:e0", "error:e0", "notice:e0", "text"]
    async with hostile(steps, "2025-11-25", person) as (client, recorder):
        a = asyncio.ensure_future(client.call_tool("a"))
        b: asyncio.Future[Any] | None = None
        try:
            await asyncio.wait_for(person.reached("waiting a").wait(), 10)
            b = asyncio.ensure_future(client.call_tool("b"))
            await asyncio.wait_for(person.reached("waiting b").wait(), 10)
            release.set()
            assert (await asyncio.wait_for(a, 10))["content"][0]["text"] == "2"
            assert (await asyncio.wait_for(b, 10))["content"][0]["text"] == "3"
        finally:
            for task in (a, b):
                if task is not None and not task.done():
                    await _cancelled(task)
    names = [m["params"]["name"] for m in recorder.sent if m.get("method") == "tools/call"]
    assert names == ["a", "b", "a", "b"]


@pytest.mark.parametrize("where", ["shown", "waiting"])
async def test_a_server_gone_while_the_person_is_on_a_step_ends_the_call(where: str) -> None:
    """The server process exits right after its -32042: the person, on the step's page
    (``shown``) or not yet saying it is done (``waiting``), is not kept there for ever
    (no notice can come, nor a retry be answered); the step is withdrawn and the call
    fails saying the server went, as a 2026-07-28 round's does. (The person may not have
    seen the page yet when the exit is noticed: either way nothing waits for ever.)"""
    person = Person(stuck=where)
    async with hostile(["legacy-url-steps", "gone:e0"], "2025-11-25", person) as (client, _):
        with pytest.raises(
            TransportError, match=r"(?s)cannot go on: .*exited with code 3.*; its URL steps were withdrawn"
        ):
            await asyncio.wait_for(client.call_tool("t"), 20)
