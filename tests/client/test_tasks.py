"""The client and the tasks extension (``io.modelcontextprotocol/tasks``): a tool call the
server turns into a task is followed to its end, its questions answered once each, and an
abandoned call cancels its task. Against the project's own ``Server`` in memory; every
message the client sends is checked against the schema and the extension's shapes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

import pytest

from client.answerers import NeverAnswering
from client.fakes import FakeTransport, discover, error, result
from client.recorder import Recorder
from mcp_elicit import Context, Form, Server, ToolError
from mcp_elicit.client import Client, ElicitAnswer, RoundLimits
from mcp_elicit.client.rev_2026_07_28 import ModernSession
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import InternalError, ProtocolError, RoundsExceeded, TaskCancelled
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.memory import connect_memory

from support.waiting import eventually
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
TASKS = "io.modelcontextprotocol/tasks"


class Person:
    """Answers every form with ``go`` (True unless told otherwise); keeps what it was asked."""

    modes = frozenset({"form"})

    def __init__(self, go: bool = True) -> None:
        self.go = go
        self.asked: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        return ElicitAnswer("accept", {"go": self.go})


def build() -> Server:
    app = Server("task-server", task_poll=0.02)
    release = asyncio.Event()
    app.release = release  # type: ignore[attr-defined]

    @app.tool(task="optional")
    async def deploy(ctx: Context, service: str) -> str:
        """Deploys after the user confirms; a task when the client takes tasks."""
        became = await ctx.start_task(f"deploying {service}")
        answer = await ctx.elicit(f"Deploy {service}?", Form(go=Boolean()), key="go")
        if not (answer.accepted and answer.content and answer.content["go"]):
            return f"{service}: kept"
        return f"{service}: deployed ({'as a task' if became else 'in place'})"

    @app.tool(task="optional")
    async def wait(ctx: Context) -> str:
        """Waits until the test releases it."""
        await ctx.start_task()
        await release.wait()
        return "released"

    @app.tool(task="optional")
    async def broken(ctx: Context, how: str) -> str:
        """Fails as a tool, or with a protocol error."""
        await ctx.start_task()
        if how == "tool":
            raise ToolError("out of disk")
        raise InternalError("Internal error: the worker went away")

    return app


TOLD: list[tuple[str, dict[str, Any]]] = []


def told(method: str, params: Mapping[str, Any]) -> None:
    TOLD.append((method, dict(params)))


@pytest.fixture(params=[False, True], ids=["plain", "http"])
async def tasking(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Client, Server, Person, Recorder]]:
    app, person, recorder = build(), Person(), Recorder()
    TOLD.clear()
    async with connect_memory(
        app,
        answerer=person,
        http=request.param,
        versions=["2026-07-28"],
        trace=recorder,
        tasks=True,
        on_notification=told,
    ) as client:
        yield client, app, person, recorder
    assert recorder.check(WireChecker.load("2026-07-28")) == len(recorder.sent) > 0


async def test_a_task_is_followed_to_its_end_and_its_question_asked_once(
    tasking: tuple[Client, Server, Person, Recorder],
) -> None:
    client, app, person, recorder = tasking
    assert client.capabilities["extensions"] == {TASKS: {}}
    out = await asyncio.wait_for(client.call_tool("deploy", {"service": "api"}), 10)
    assert out["content"][0]["text"] == "api: deployed (as a task)"
    (asked,) = person.asked
    assert asked.message == "Deploy api?" and asked.key == "go"
    assert str(asked.origin) == "tools/call deploy"
    methods = recorder.methods()
    assert methods[-1] == "tasks/get" and methods.count("tasks/update") == 1
    assert methods.count("tasks/get") >= 2 and "tasks/cancel" not in methods
    update = next(m for m in recorder.sent if m.get("method") == "tasks/update")
    assert update["params"]["inputResponses"] == {"go": {"action": "accept", "content": {"go": True}}}
    assert len(app.tasks) == 1
    # each change of the task's course reached on_notification, once, as notifications/tasks
    assert {m for m, _ in TOLD} == {"notifications/tasks"}
    statuses = [p["status"] for _, p in TOLD]
    assert statuses[:2] == ["working", "input_required"] and statuses[-1] == "completed"
    assert set(statuses[2:-1]) <= {"working"}  # a poll may catch it between answer and end
    assert TOLD[1][1]["inputRequests"]["go"]["params"]["message"] == "Deploy api?"
    assert TOLD[-1][1]["result"]["content"][0]["text"] == "api: deployed (as a task)"
    assert all("resultType" not in p for _, p in TOLD)


async def test_a_tool_error_is_a_result_and_a_failed_task_raises_its_error(
    tasking: tuple[Client, Server, Person, Recorder],
) -> None:
    client, _, _, _ = tasking
    out = await asyncio.wait_for(client.call_tool("broken", {"how": "tool"}), 10)
    assert out["isError"] is True and out["content"][0]["text"] == "out of disk"
    with pytest.raises(ProtocolError) as failed:
        await asyncio.wait_for(client.call_tool("broken", {"how": "protocol"}), 10)
    assert failed.value.code == -32603 and "the worker went away" in failed.value.message


async def test_an_abandoned_call_cancels_its_task(tasking: tuple[Client, Server, Person, Recorder]) -> None:
    client, app, _, recorder = tasking
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(client.call_tool("wait"), 0.2)
    assert recorder.methods()[-1] == "tasks/cancel"
    (running,) = app.tasks._tasks.values()
    assert running.record.status == "cancelled"


async def test_a_task_the_server_cancels_raises_task_cancelled(
    tasking: tuple[Client, Server, Person, Recorder],
) -> None:
    client, app, _, recorder = tasking
    call = asyncio.ensure_future(client.call_tool("wait"))
    await eventually(lambda: len(app.tasks), "the task")
    (task_id,) = app.tasks._tasks
    app.tasks.cancel(task_id, None)
    with pytest.raises(TaskCancelled, match=f"cancelled task {task_id}: Cancelled") as info:
        await asyncio.wait_for(call, 10)
    assert info.value.task_id == task_id
    assert "tasks/cancel" not in recorder.methods()


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
async def test_without_the_extension_or_at_2025_11_25_the_call_is_answered_in_place(revision: str) -> None:
    recorder = Recorder()
    tasks = revision == "2025-11-25"  # declared, but a handshake session has no extensions
    async with connect_memory(
        build(), answerer=Person(), versions=[revision], trace=recorder, tasks=tasks
    ) as client:
        assert "extensions" not in client.capabilities
        out = await client.call_tool("deploy", {"service": "db"})
    assert out["content"][0]["text"] == "db: deployed (in place)"
    assert not [m for m in recorder.methods() if m.startswith("tasks/")]
    init = [m for m in recorder.sent if m.get("method") == "initialize"]
    assert all("extensions" not in m["params"]["capabilities"] for m in init)
    assert recorder.check(WireChecker.load(revision)) == len(recorder.sent)


async def test_the_person_declining_inside_a_task_reaches_the_tool() -> None:
    async with connect_memory(
        build(), answerer=Person(go=False), versions=["2026-07-28"], tasks=True
    ) as client:
        out: dict[str, Any] = await asyncio.wait_for(client.call_tool("deploy", {"service": "x"}), 10)
    assert out["content"][0]["text"] == "x: kept"


def slow_polling() -> Server:
    """A task tool on a server that asks to be polled every 30 s."""
    app = Server("slow-polls", task_poll=30.0)

    @app.tool(task="required")
    async def deploy(ctx: Context) -> str:
        await ctx.start_task("deploying")
        answer = await ctx.elicit("Deploy?", Form(go=Boolean()), key="go")
        return "deployed" if answer.accepted else "kept"

    return app


@pytest.mark.parametrize("http", [False, True], ids=["plain", "http"])
async def test_the_task_is_heard_as_it_moves_not_at_the_next_poll(http: bool) -> None:
    """The client listens for its task: the question and the end reach it when they
    happen. Polling alone would wait 30 s between looks; the call ends long before."""
    app, person, recorder = slow_polling(), Person(), Recorder()
    async with connect_memory(
        app, answerer=person, http=http, versions=["2026-07-28"], trace=recorder, tasks=True
    ) as client:
        out = await asyncio.wait_for(client.call_tool("deploy"), 10)
    assert out["content"][0]["text"] == "deployed"
    assert len(person.asked) == 1
    (listen,) = [m for m in recorder.sent if m.get("method") == "subscriptions/listen"]
    assert listen["params"]["notifications"] == {"taskIds": list(app.tasks._tasks)}
    assert recorder.check(WireChecker.load("2026-07-28")) == len(recorder.sent)


async def test_a_server_without_listen_is_polled_and_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    app, recorder = build(), Recorder()
    respond = app.respond

    async def no_listen(message: Any, **options: Any) -> tuple[bytes, int]:
        if message.method == "subscriptions/listen":
            return await respond(replace(message, method="subscriptions/unknown"), **options)
        return await respond(message, **options)

    monkeypatch.setattr(app, "respond", no_listen)
    async with connect_memory(
        app, answerer=Person(), versions=["2026-07-28"], trace=recorder, tasks=True
    ) as client:
        call = asyncio.ensure_future(client.call_tool("wait"))
        session = client.session
        assert isinstance(session, ModernSession)
        await eventually(lambda: not session.listens, "the refusal of subscriptions/listen")
        app.release.set()  # type: ignore[attr-defined]
        assert (await asyncio.wait_for(call, 10))["content"][0]["text"] == "released"
        out = await asyncio.wait_for(client.call_tool("deploy", {"service": "b"}), 10)
    assert out["content"][0]["text"] == "b: deployed (as a task)"  # polled to its end
    assert recorder.methods().count("subscriptions/listen") == 1  # refused once, not asked again


async def test_a_bug_while_listening_leaves_the_call_to_the_polls(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_elicit.client import rev_2026_07_28

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the listener")

    monkeypatch.setattr(rev_2026_07_28, "open_subscription", broken)
    async with connect_memory(build(), answerer=Person(), versions=["2026-07-28"], tasks=True) as client:
        out = await asyncio.wait_for(client.call_tool("deploy", {"service": "c"}), 10)
    assert out["content"][0]["text"] == "c: deployed (as a task)"
    assert any("polling only" in r.message and r.exc_info for r in caplog.records)


@pytest.mark.parametrize("ends", ["timeout", "cancelled"])
async def test_a_question_the_task_stops_waiting_for_is_withdrawn_from_the_person(ends: str) -> None:
    """The task stops waiting for the person (its question timed out on the server, or
    the server cancelled the task) while the person is still being asked: the polls go
    on meanwhile, the question is taken back, and the call ends with the task."""
    app = Server("impatient", task_poll=0.02, ask_timeout=0.3 if ends == "timeout" else 600.0)

    @app.tool(task="optional")
    async def deploy(ctx: Context) -> str:
        await ctx.start_task()
        answer = await ctx.elicit("Deploy?", Form(go=Boolean()), key="go")
        return f"deploy: {answer.action}"

    person, recorder = NeverAnswering(), Recorder()
    async with connect_memory(
        app, answerer=person, versions=["2026-07-28"], trace=recorder, tasks=True
    ) as client:
        call = asyncio.ensure_future(client.call_tool("deploy"))
        await asyncio.wait_for(person.asked.wait(), 10)
        if ends == "timeout":
            out = await asyncio.wait_for(call, 10)
            assert out["content"][0]["text"] == "deploy: cancel"
        else:
            (task_id,) = app.tasks._tasks
            app.tasks.cancel(task_id, None)
            with pytest.raises(TaskCancelled):
                await asyncio.wait_for(call, 10)
        assert person.withdrawn.is_set()
    assert "tasks/update" not in recorder.methods()  # nothing to answer with
    assert recorder.check(WireChecker.load("2026-07-28")) == len(recorder.sent)


class AsksForEver:
    """A scripted server whose task (no ttl) asks a new question at every poll once the last
    was answered, and never ends; it records the client's requests."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.asked = 0
        self.answered = 0

    def __call__(self, message: dict[str, Any], headers: dict[str, str]) -> list[Any]:
        self.sent.append(message)
        method, params = message["method"], message.get("params", {})
        task = {
            "taskId": "t-1",
            "createdAt": "2026-12-05T00:00:00Z",
            "lastUpdatedAt": "2026-12-05T00:00:00Z",
            "ttlMs": None,
            "pollIntervalMs": 0,
        }
        if method == "server/discover":
            return [discover(message)]
        if method == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            return [result(message, {"resultType": "complete", "tools": tools})]
        if method == "tools/call":
            return [result(message, {"resultType": "task", "status": "working", **task})]
        if method == "tasks/update":
            self.answered += len(params["inputResponses"])
            return [result(message, {"resultType": "complete"})]
        if method == "tasks/cancel":
            return [result(message, {"resultType": "complete"})]
        if method == "tasks/get":
            if self.asked == self.answered:
                self.asked += 1
            ask = {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Go on?", "requestedSchema": GO_FORM},
            }
            waiting = {f"q{self.asked}": ask}
            body = {"resultType": "complete", "status": "input_required", "inputRequests": waiting}
            return [result(message, {**body, **task})]
        return [error(message, -32601, "Method not found")]


GO_FORM = {"type": "object", "properties": {"go": {"type": "boolean"}}}


async def test_a_task_that_asks_for_ever_is_given_up_at_the_question_limit() -> None:
    """A task with no time to live that asks one question after another: the person is
    asked as many questions as a request's rounds could carry (max_rounds x max_requests,
    as for a 2025-11-25 server asking for ever), then the call fails saying so and the task
    is cancelled; the client does not answer for ever."""
    server, person = AsksForEver(), Person()
    limits = RoundLimits(max_rounds=2, max_requests=3)
    async with Client(FakeTransport(server), answerer=person, tasks=True, limits=limits, timeout=5) as client:
        with pytest.raises(RoundsExceeded, match=r"task t-1 asked more than 6 questions"):
            await asyncio.wait_for(client.call_tool("t"), 10)
    assert len(person.asked) == 6 and server.answered == 6
    assert [m["method"] for m in server.sent][-1] == "tasks/cancel"
    wire = WireChecker.load("2026-07-28")
    for message in server.sent:
        wire.request(message)
