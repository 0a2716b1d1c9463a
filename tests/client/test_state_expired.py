"""2026-07-28: a person slower than the server's ``state_ttl``. The retry that carries
their answers is refused (-32602, the state lapsed); the client starts the request once
more from its original params and answers each question identical to one the person
already answered with that answer, so the call completes with the person asked once. A
question that differs after the restart is asked; a state refused again fails the call,
saying so. A real server over HTTP on 127.0.0.1 whose clock the slow person moves on (so
the state lapses without the test sleeping)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.client import ElicitAnswer
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import InvalidParams
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server

pytestmark = pytest.mark.anyio

TTL = 3.0  # seconds the server's states live
SLOW = 5.0  # seconds the slow person takes, on the server's clock


class World:
    """The server's clock (real time, moved on by ``skew``) and what its questions say."""

    def __init__(self) -> None:
        self.skew = 0.0
        self.edition = 1  # in the mood question's text: a new edition is a new question

    def clock(self) -> float:
        return time.time() + self.skew


def survey_server(world: World) -> Server:
    app = Server("survey", state_keys=KeyRing([bytes(range(40, 72))]), state_ttl=TTL, clock=world.clock)

    @app.tool()
    async def survey(ctx: Context) -> str:
        """Asks a name, then a mood, in two rounds."""
        name = await ctx.elicit("Your name?", Form(name=String()), key="name")
        mood = await ctx.elicit(f"Your mood? (edition {world.edition})", Form(mood=String()), key="mood")
        assert name.content is not None and mood.content is not None
        return f"{name.content['name']} is {mood.content['mood']}"

    return app


class Person:
    """Answers each question; on the mood question the first ``slow`` times, takes longer
    than the state lives (the server's clock moves on ``SLOW`` seconds), and may make the
    server's next mood question a different one (``changes``)."""

    modes = frozenset({"form"})

    def __init__(self, world: World, *, slow: int = 1, changes: bool = False) -> None:
        self.world, self.slow, self.changes = world, slow, changes
        self.asked: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request.message)
        if request.key == "name":
            return ElicitAnswer.accept(name="Ann")
        if self.slow > 0:
            self.slow -= 1
            self.world.skew += SLOW
            if self.changes:
                self.world.edition += 1
        return ElicitAnswer.accept(mood="calm")

    async def url_done(self, request: ElicitationRequest) -> None:
        raise AssertionError("no URL step here")


async def _call(world: World, person: Person, app: Server | None = None) -> str:
    async with (
        uvicorn_server(StreamableHTTP(app or survey_server(world))) as running,
        connect_http(running.url, answerer=person) as client,
    ):
        async with asyncio.timeout(60):
            out = await client.call_tool("survey")
    return str(out["content"][0]["text"])


async def test_answers_given_after_the_state_lapsed_are_used_when_the_call_starts_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world = World()
    person = Person(world)
    with caplog.at_level(logging.INFO, logger="mcp_elicit.client"):
        text = await _call(world, person)
    assert text == "Ann is calm"
    assert person.asked == ["Your name?", "Your mood? (edition 1)"]  # each once
    said = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.client"]
    assert any("refused" in m and "started again" in m for m in said), said


async def test_a_question_that_differs_after_the_restart_is_asked() -> None:
    world = World()
    person = Person(world, changes=True)
    text = await _call(world, person)
    assert text == "Ann is calm"
    assert person.asked == ["Your name?", "Your mood? (edition 1)", "Your mood? (edition 2)"]


async def test_a_state_refused_again_after_the_restart_fails_the_call_saying_so() -> None:
    world = World()
    person = Person(world, slow=2, changes=True)
    with pytest.raises(InvalidParams, match="refused again") as caught:
        await _call(world, person)
    assert caught.value.code == -32602
    assert "answers could not be used" in str(caught.value)
    assert person.asked == ["Your name?", "Your mood? (edition 1)", "Your mood? (edition 2)"]


class Wordy(Person):
    """Gives a name longer than the server's states carry: the server refuses the answer
    (-32602, "answer with less"), not the state."""

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request.message)
        return ElicitAnswer.accept(name="Ann " * 600)


async def test_a_refused_answer_is_not_sent_again_as_if_the_state_had_lapsed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world = World()
    person = Wordy(world)
    app = survey_server(world)
    app.sealer = app.sealer.with_max_token_size(2048)  # the name's answer does not fit in it
    with caplog.at_level(logging.INFO, logger="mcp_elicit.client"), pytest.raises(InvalidParams) as caught:
        await _call(world, person, app)
    said = str(caught.value)
    assert "answer with less" in said  # the server's words, about the answer
    assert "expired" not in said and "again" not in said, said
    assert person.asked == ["Your name?"]
    logged = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.client"]
    assert not any("started again" in m for m in logged), logged


async def test_a_refusal_that_does_not_name_the_state_is_raised_as_the_server_said_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler that refuses with -32602 after its question (here: no such account) is
    not a lapsed state: started again, it would refuse the same answer the same way."""
    world = World()
    app = Server("accounts", state_keys=KeyRing([bytes(range(40, 72))]), state_ttl=TTL, clock=world.clock)

    @app.tool()
    async def survey(ctx: Context) -> str:
        """Asks whose account, then finds none."""
        name = await ctx.elicit("Your name?", Form(name=String()), key="name")
        assert name.content is not None
        raise InvalidParams(f"Invalid params: no account named {name.content['name']!r}")

    person = Person(world)
    with caplog.at_level(logging.INFO, logger="mcp_elicit.client"), pytest.raises(InvalidParams) as caught:
        await _call(world, person, app)
    assert str(caught.value) == "Invalid params: no account named 'Ann'"
    assert person.asked == ["Your name?"]
    logged = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.client"]
    assert not any("started again" in m for m in logged), logged
