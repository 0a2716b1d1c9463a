"""Golden wire transcripts: every message of a scenario, in order, at each revision,
compared with ``tests/golden/<revision>/<scenario>.txt``. A change on the wire shows up as
a diff to read, not as a failure somewhere else. Regenerate after an intended change::

    .venv/bin/pytest tests/golden --update-golden

Values that differ from run to run are replaced by stable placeholders: sealed states,
task and elicitation ids, instants, the client's own version.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit import Context, Form, Integer, Server
from mcp_elicit.client import Client, Scripted
from mcp_elicit.errors import ProtocolError
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.memory import connect_memory

from support.memory import MemoryClient
from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}


def build() -> Server:
    app = Server("golden", "1.0.0", task_poll=0.05, task_ttl=60.0)

    @app.tool()
    async def order(ctx: Context, item: str) -> str:
        """Orders an item: asks how many, then for a confirmation."""
        amount = await ctx.elicit(f"How many {item}?", Form(count=Integer(minimum=1, maximum=9)), key="count")
        if not amount.accepted or amount.content is None:
            return f"no order ({amount.action})"
        sure = await ctx.elicit(f"Order {amount.content['count']} {item}?", Form(ok=Boolean()), key="ok")
        return f"ordered {amount.content['count']} {item}" if sure.accepted else f"no order ({sure.action})"

    @app.tool()
    async def connect(ctx: Context) -> str:
        """Sends the user to a page."""
        answer = await ctx.elicit_url("Connect your account", "https://example.com/connect", key="page")
        return f"connect: {answer.action}"

    @app.tool(task="optional")
    async def deploy(ctx: Context, service: str) -> str:
        """Goes on as a task, then asks."""
        await ctx.start_task(f"deploying {service}")
        answer = await ctx.elicit(f"Deploy {service}?", Form(go=Boolean()), key="go")
        return f"{service}: {'deployed' if answer.accepted else answer.action}"

    return app


_ENDED = frozenset({"completed", "failed", "cancelled"})


class Transcript:
    """Every message both ways, in order, with the run-dependent values made stable."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.raw: list[tuple[str, dict[str, Any]]] = []
        self._names: dict[str, str] = {}

    def __call__(self, direction: str, message: Mapping[str, Any]) -> None:
        arrow = "->" if direction == "send" else "<-"
        self.raw.append((direction, json.loads(json.dumps(message))))
        self.lines.append(f"{arrow} {json.dumps(self._stable(message), sort_keys=True)}")

    def check(self, checker: WireChecker) -> int:
        """Validate every message as sent (before the placeholders) at its revision; how many."""
        asked: dict[tuple[str, Any], str] = {}
        for direction, message in self.raw:
            if "method" in message and "id" in message:
                asked[(direction, message["id"])] = message["method"]
                checker.request(message)
            elif "method" in message:
                checker.notification(message)
            else:
                other = "receive" if direction == "send" else "send"
                checker.response(asked[(other, message.get("id"))], message)
        return len(self.raw)

    def _stable(self, value: Any, key: str = "") -> Any:
        if isinstance(value, Mapping):
            stable = {k: self._stable(v, k) for k, v in value.items()}
            ttl = value.get("ttlMs")
            if "taskId" in value and isinstance(ttl, int) and value.get("status") in _ENDED:
                # counted from creation: the time the task ran (which varies) plus the ttl
                stable["ttlMs"] = "<the time it ran + 60000>" if ttl >= 60_000 else ttl
            return stable
        if isinstance(value, list):
            return [self._stable(v) for v in value]
        if key == "requestState" and isinstance(value, str):
            return "<sealed>"
        if key in ("createdAt", "lastUpdatedAt") and isinstance(value, str):
            return "<instant>"
        if key in ("taskId", "elicitationId") and isinstance(value, str):
            kind = "task" if key == "taskId" else "elicitation"
            return self._names.setdefault(value, f"<{kind} {len(self._names) + 1}>")
        if key == "version" and isinstance(value, str) and re.fullmatch(r"\d+\.\d+\.\d+\S*", value):
            return value if value == "1.0.0" else "<version>"
        return value


async def order_accepted(t: Transcript, revision: str) -> None:
    script = Scripted.from_script({"count": {"content": {"count": 2}}, "ok": {"content": {"ok": True}}})
    if revision == "2025-11-25":  # keys are the server's request ids there
        script = Scripted.from_script(
            [{"fields": ["count"], "content": {"count": 2}}, {"fields": ["ok"], "content": {"ok": True}}]
        )
    async with connect_memory(build(), answerer=script, versions=[revision], trace=t) as client:
        out = await client.call_tool("order", {"item": "pears"})
    assert out["content"][0]["text"] == "ordered 2 pears"


async def order_declined(t: Transcript, revision: str) -> None:
    script = Scripted.from_script([{"fields": ["count"], "action": "decline"}])
    async with connect_memory(build(), answerer=script, versions=[revision], trace=t) as client:
        out = await client.call_tool("order", {"item": "figs"})
    assert out["content"][0]["text"] == "no order (decline)"


async def url_step(t: Transcript, revision: str) -> None:
    script = Scripted.from_script([{"mode": "url", "action": "accept"}])
    async with connect_memory(build(), answerer=script, versions=[revision], trace=t) as client:
        out = await client.call_tool("connect")
    assert out["content"][0]["text"] == "connect: accept"


async def no_capability(t: Transcript, revision: str) -> None:
    async with connect_memory(build(), versions=[revision], trace=t) as client:
        client_: Client = client
        with pytest.raises(Exception, match="elicitation"):
            await client_.call_tool("order", {"item": "plums"})


async def unknown_tool(t: Transcript, revision: str) -> None:
    async with connect_memory(build(), versions=[revision], trace=t) as client:
        client_: Client = client
        with pytest.raises(ProtocolError, match="Unknown tool: book") as raised:
            await client_.call_tool("book", {})
    assert raised.value.code == -32602


async def task_with_a_question(t: Transcript, revision: str) -> None:
    """The tasks extension, message by message (the client side driven by hand, so that
    the number of polls is fixed)."""
    app = build()
    client = MemoryClient(app, capabilities=TASKS, revision=revision)
    record = _RecordingClient(client, t)
    created = await record.result("tools/call", {"name": "deploy", "arguments": {"service": "api"}})
    await eventually(lambda: _status(app) == "input_required", "the task to ask")
    await record.result("tasks/get", {"taskId": created["taskId"]})
    answer = {"go": {"action": "accept", "content": {"go": True}}}
    await record.result("tasks/update", {"taskId": created["taskId"], "inputResponses": answer})
    await eventually(lambda: _status(app) == "completed", "the task to end")
    done = await record.result("tasks/get", {"taskId": created["taskId"]})
    assert done["result"]["content"][0]["text"] == "api: deployed"


async def listen_for_changes(t: Transcript, revision: str) -> None:
    app = build()
    client = MemoryClient(app, capabilities={}, revision=revision)
    record = _RecordingClient(client, t)
    listening = asyncio.ensure_future(
        record.result("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    )
    await eventually(lambda: len(client.notifications) == 1, "the acknowledgement")
    app.tool(name="extra", description="Added while the client listens")(lambda: "extra")
    await eventually(lambda: len(client.notifications) == 2, "the list change")
    app.subscriptions.close_all()
    await asyncio.wait_for(listening, 5)


class _RecordingClient:
    """A ``MemoryClient`` whose requests, notifications and responses go to a transcript."""

    def __init__(self, client: MemoryClient, transcript: Transcript) -> None:
        self.client = client
        self.transcript = transcript
        notify = client.notify

        async def noted(method: str, params: dict[str, Any]) -> None:
            await notify(method, params)
            transcript("receive", client.notifications[-1])

        client.notify = noted  # type: ignore[method-assign]

    async def result(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        body = {**params, "_meta": self.client.meta()}
        message = {"jsonrpc": "2.0", "id": next(self.client.ids), "method": method, "params": body}
        self.transcript("send", message)
        response = await self.client.raw(message)
        self.transcript("receive", response)
        return response["result"]  # type: ignore[no-any-return]


def _status(app: Server) -> str:
    (running,) = app.tasks._tasks.values()
    return running.record.status


Scenario = Callable[[Transcript, str], Awaitable[None]]
SCENARIOS: dict[str, tuple[Scenario, tuple[str, ...]]] = {
    "order-accepted": (order_accepted, ("2026-07-28", "2025-11-25")),
    "order-declined": (order_declined, ("2026-07-28", "2025-11-25")),
    "url-step": (url_step, ("2026-07-28", "2025-11-25")),
    "no-capability": (no_capability, ("2026-07-28", "2025-11-25")),
    "unknown-tool": (unknown_tool, ("2026-07-28", "2025-11-25")),
    "task-with-a-question": (task_with_a_question, ("2026-07-28",)),
    "listen-for-changes": (listen_for_changes, ("2026-07-28",)),
}
CASES = [(name, revision) for name, (_, revisions) in SCENARIOS.items() for revision in revisions]


@pytest.mark.parametrize(("name", "revision"), CASES, ids=[f"{r}/{n}" for n, r in CASES])
async def test_the_wire_is_as_recorded(name: str, revision: str, request: pytest.FixtureRequest) -> None:
    transcript = Transcript()
    await SCENARIOS[name][0](transcript, revision)
    checker = WireChecker.if_present(revision)  # the transcript is compared either way
    if checker is not None:
        assert transcript.check(checker) == len(transcript.lines) > 0
    text = "\n".join(transcript.lines) + "\n"
    path = HERE / revision / f"{name}.txt"
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"no transcript at {path}: run pytest tests/golden --update-golden"
    recorded = path.read_text(encoding="utf-8")
    if text != recorded:
        diff = "".join(
            difflib.unified_diff(
                recorded.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "this run"
            )
        )
        pytest.fail(f"the wire changed (rerun with --update-golden if that is intended):\n{diff}")
