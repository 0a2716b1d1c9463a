"""Tasks on the server (the ``io.modelcontextprotocol/tasks`` extension), over a client in memory: the limits on tasks. Past the task limit, overall or a
principal's own, a call goes on in place; expired tasks free their slots; the task durations
and limits are checked."""

from __future__ import annotations

import math
import re
import time
from typing import Any

import pytest

from mcp_elicit import Principal, Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.tasks import Tasks

from support.memory import MemoryClient, accept
from support.tasks import WITH_TASKS, build, settle
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_past_the_task_limit_a_call_goes_on_in_place(wire: WireChecker) -> None:
    app = build()
    app.tasks.max_tasks = 1
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    first = await client.result("tools/call", {"name": "deploy", "arguments": {"service": "a"}})
    assert first["resultType"] == "task"
    app.gate.set()  # type: ignore[attr-defined]
    final, rounds = await client.rounds(
        "tools/call", {"name": "deploy", "arguments": {"service": "b"}}, accept(go=True)
    )
    assert [r["resultType"] for r in rounds] == ["input_required", "complete"]
    assert final["result"]["content"][0]["text"] == "b: deployed (in place)"
    assert len(app.tasks) == 1


async def test_a_task_that_expired_since_the_last_sweep_frees_its_slot_at_once(wire: WireChecker) -> None:
    """Expired tasks are swept at most once a second, but a call that finds the limit
    reached sweeps first: an expired task never keeps a later call from being a task."""
    now = [1_000_000.0]
    app = build(clock=lambda: now[0], task_ttl=0.1)
    app.tasks.max_tasks = 1
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    fails = {"name": "broken", "arguments": {"how": "tool"}}
    ended = (await client.result("tools/call", fails))["taskId"]
    await settle(client, ended, "completed")
    now[0] += 0.2  # expired, well within a second of the last sweep
    assert (await client.result("tools/call", fails))["resultType"] == "task"
    assert len(app.tasks) == 1


async def test_a_caller_held_at_the_limit_cannot_make_every_call_sweep(wire: WireChecker) -> None:
    """A sweep walks every task, so a call at a limit sweeps at most every 0.1 s: a caller
    hammering at its limit costs one walk per tenth of a second, not one per call."""
    now = [1_000_000.0]
    app = build(clock=lambda: now[0], task_ttl=0.01)
    app.tasks.max_tasks = 1
    client = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    fails = {"name": "broken", "arguments": {"how": "tool"}}
    await settle(client, (await client.result("tools/call", fails))["taskId"], "completed")
    now[0] += 0.05  # expired, but the last sweep (the call's own) was 0.05 s ago
    assert (await client.result("tools/call", fails))["resultType"] == "complete"  # in place
    now[0] += 0.06
    assert (await client.result("tools/call", fails))["resultType"] == "task"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        *(("task_ttl", v) for v in (0, 0.0, -60, 0.0001, math.nan, math.inf, -math.inf, True, "60", 1e20)),
        *(("task_poll", v) for v in (0, -1, math.nan, math.inf, False, None)),
    ],
)
async def test_a_task_duration_that_is_not_one_is_refused(option: str, value: Any) -> None:
    """task_ttl and task_poll are numbers of seconds above zero that make whole
    milliseconds the wire can carry (task_ttl=None keeps tasks for good): anything else
    is refused, naming the option and the value, not accepted to misbehave later."""
    with pytest.raises(ConfigError, match=f"^{option} {re.escape(repr(value))}: expected "):
        Server("tasks", **{option: value})


async def test_a_task_duration_in_range_is_kept() -> None:
    assert Server("tasks", task_ttl=None).tasks.ttl_ms is None
    assert Server("tasks", task_ttl=0.001, task_poll=0.25).tasks.ttl_ms == 1
    assert Server("tasks", task_ttl=90, task_poll=0.25).tasks.poll_ms == 250


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        *(("ttl_ms", v) for v in (0, -1, 1.5, 60.0, True, "60", 2**53)),
        *(("poll_ms", v) for v in (0, -1, 0.5, None)),
        *((name, v) for name in ("max_tasks", "max_tasks_per_owner") for v in (0, -1, 2.0, True, None)),
    ],
)
async def test_a_task_limit_that_is_not_a_whole_number_above_zero_is_refused(
    attribute: str, value: Any
) -> None:
    """The registry's ttl, poll interval and limits are whole numbers above zero (the ttl
    may be None), whether given to it or set later on ``server.tasks`` (given as None, the
    limit for one principal is not given: a tenth of ``max_tasks``)."""
    tasks = Server("tasks").tasks
    with pytest.raises(ConfigError, match=f"^Tasks.{attribute} {re.escape(repr(value))}: expected "):
        setattr(tasks, attribute, value)
    if (attribute, value) != ("max_tasks_per_owner", None):
        with pytest.raises(ConfigError, match=f"^Tasks.{attribute} {re.escape(repr(value))}: expected "):
            Tasks(clock=time.time, **{attribute: value})
    setattr(tasks, attribute, 7)
    assert getattr(tasks, attribute) == 7


async def test_a_task_share_for_one_principal_above_the_whole_is_refused() -> None:
    """``max_tasks_per_owner`` above ``max_tasks`` would let one principal take every task:
    refused, naming both, whether given to the registry or set on it (either one); not
    set, the share is a tenth of ``max_tasks`` (at least one)."""
    both = (
        r"^Tasks.max_tasks_per_owner 11 is above Tasks.max_tasks 10: one principal could hold all of them; "
    )
    with pytest.raises(ConfigError, match=both):
        Tasks(clock=time.time, max_tasks=10, max_tasks_per_owner=11)
    tasks = Server("tasks").tasks
    assert (tasks.max_tasks, tasks.max_tasks_per_owner) == (10_000, 1_000)
    tasks.max_tasks = 10
    assert tasks.max_tasks_per_owner == 1
    with pytest.raises(ConfigError, match=both):
        tasks.max_tasks_per_owner = 11
    tasks.max_tasks_per_owner = 10
    with pytest.raises(ConfigError, match=r"^Tasks.max_tasks_per_owner 10 is above Tasks.max_tasks 9: "):
        tasks.max_tasks = 9
    assert (tasks.max_tasks, tasks.max_tasks_per_owner) == (10, 10)


@pytest.mark.parametrize("ttl", [60.0, None])
async def test_past_its_own_task_limit_a_principals_call_goes_on_in_place(
    wire: WireChecker, caplog: pytest.LogCaptureFixture, ttl: float | None
) -> None:
    """One principal cannot take every task the server holds: past ``max_tasks_per_owner``
    (running, or ended and not yet forgotten) its calls go on in place, as past
    ``max_tasks``, while others' calls still become tasks. Without a ttl its ended tasks
    are never forgotten, and the limit holds all the same."""
    now = [1_000_000.0]
    app = build(clock=lambda: now[0], task_ttl=ttl)
    app.tasks.max_tasks_per_owner = 2
    ann = MemoryClient(app, capabilities=WITH_TASKS, principal=Principal("ann"), checker=wire)
    bob = MemoryClient(app, capabilities=WITH_TASKS, principal=Principal("bob"), checker=wire)
    nobody = MemoryClient(app, capabilities=WITH_TASKS, checker=wire)
    fails = {"name": "broken", "arguments": {"how": "tool"}}
    ended = (await ann.result("tools/call", fails))["taskId"]
    await settle(ann, ended, "completed")
    running = await ann.result("tools/call", {"name": "deploy", "arguments": {"service": "a"}})
    assert running["resultType"] == "task"
    app.gate.set()  # type: ignore[attr-defined]
    with caplog.at_level("WARNING", logger="mcp_elicit.server"):
        final, rounds = await ann.rounds(
            "tools/call", {"name": "deploy", "arguments": {"service": "b"}}, accept(go=True)
        )
    assert [r["resultType"] for r in rounds] == ["input_required", "complete"]
    assert final["result"]["content"][0]["text"] == "b: deployed (in place)"
    assert "principal 'ann' holds 2 tasks" in caplog.text
    for other in (bob, nobody):  # the others' calls are tasks still
        assert (await other.result("tools/call", fails))["resultType"] == "task"
    assert len(app.tasks) == 4

    now[0] += 86_400.0  # ann's ended task is forgotten, if it has a ttl: a slot is free again
    again = await ann.result("tools/call", fails)
    assert again["resultType"] == ("task" if ttl is not None else "complete")
