"""An answerer is told how its answer travels (``ElicitationRequest.sent_with``), so what
it tells a person can be true: at 2025-11-25 the answer is the response to the server's
own request, sent as soon as it is given; at 2026-07-28 it goes with the retried request
once the round is answered, or, in a task, with ``tasks/update``. The same tool in each
case, against the project's own server in memory."""

from __future__ import annotations

import asyncio

import pytest

from client.test_tasks import Person, build
from mcp_elicit.transports.memory import connect_memory

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("revision", "tasks", "sent_with"),
    [
        ("2025-11-25", False, ""),
        ("2026-07-28", False, "retry"),
        ("2026-07-28", True, "tasks/update"),
    ],
    ids=["response", "retry", "task"],
)
async def test_the_answerer_is_told_what_carries_its_answer(
    revision: str, tasks: bool, sent_with: str
) -> None:
    app, person = build(), Person()
    async with connect_memory(app, answerer=person, versions=[revision], tasks=tasks) as client:
        out = await asyncio.wait_for(client.call_tool("deploy", {"service": "api"}), 10)
    assert out["content"][0]["text"].startswith("api: deployed")
    (asked,) = person.asked
    assert asked.sent_with == sent_with
