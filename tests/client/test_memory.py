"""The client against the project's own ``Server`` in memory, at both revisions: every
question kind, both transports' header behaviour, and every message the client sends
checked against the official schema of the revision it speaks. No sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from client.app import CONNECTED, TOMORROW, User, app, roots, sample
from client.recorder import Recorder
from mcp_elicit import Context, Form, Number, Server
from mcp_elicit.client import Client, Scripted
from mcp_elicit.errors import InvalidParams, ProtocolError, ResourceNotFound
from mcp_elicit.transports.memory import MemoryTransport, connect_memory

from support.wire import WireChecker

pytestmark = pytest.mark.anyio

REVISIONS = ["2026-07-28", "2025-11-25"]


@pytest.fixture(
    params=[(r, http) for r in REVISIONS for http in (False, True)],
    ids=lambda p: f"{p[0]}-{'http' if p[1] else 'plain'}",
)
async def session(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Client, Recorder, User]]:
    revision, http = request.param
    recorder = Recorder()
    user = User()
    CONNECTED.clear()
    async with connect_memory(
        app, answerer=user, sampling=sample, roots=roots, http=http, versions=[revision], trace=recorder
    ) as client:
        assert client.revision == revision
        yield client, recorder, user
    checker = WireChecker.load(revision)
    assert recorder.check(checker) == len(recorder.sent) > 0


async def test_a_form_booking_with_two_questions(session: tuple[Client, Recorder, User]) -> None:
    client, _, user = session
    out = await client.call_tool("book", {"restaurant": "noma"})
    assert out["content"][0]["text"] == f"booked noma for 2 on {TOMORROW}, inside"
    assert [r.key for r in user.asked][-1] in ("confirm", "request s-2")
    asked = user.asked[0]
    assert asked.server.name == "memory-test"
    assert asked.fields == ("guests", "date", "seating")
    assert str(asked.origin) == "tools/call book"
    assert asked.key == ("details" if client.revision == "2026-07-28" else "request s-1")


async def test_three_kinds_of_question_in_one_round(session: tuple[Client, Recorder, User]) -> None:
    client, _, _ = session
    out = await client.call_tool("plan")
    assert out["content"][0]["text"] == "loud / the harbour / ['file:///home/me/plans']"


async def test_prompts_and_resources_ask_too(session: tuple[Client, Recorder, User]) -> None:
    client, _, _ = session
    prompt = await client.get_prompt("evening", {"city": "Oslo"})
    assert prompt["messages"][0]["content"]["text"] == "A loud evening in Oslo"
    resource = await client.read_resource("menu://noma")
    assert resource["contents"][0]["text"] == "noma: mains"


async def test_a_resource_not_found_is_read_as_such(session: tuple[Client, Recorder, User]) -> None:
    """-32602 from a 2026-07-28 server, -32002 from a 2025-11-25 one: either way the
    caller gets the server's words and code, and from 2025-11-25 a ``ResourceNotFound``
    naming the URI (whose ``code`` said -32602, the 2026-07-28 code, though -32002 came)."""
    client, _, _ = session
    with pytest.raises(ProtocolError) as caught:
        await client.read_resource("menu://nowhere/at/all")
    assert "Resource not found: menu://nowhere/at/all" in str(caught.value)
    if client.revision == "2025-11-25":
        assert isinstance(caught.value, ResourceNotFound) and caught.value.uri == "menu://nowhere/at/all"
        assert caught.value.to_error()["code"] == -32002
        assert caught.value.code == -32002
    else:
        assert isinstance(caught.value, InvalidParams)
        assert caught.value.code == -32602


async def test_a_url_step(session: tuple[Client, Recorder, User]) -> None:
    client, recorder, user = session
    out = await client.call_tool("connect", {"service": "calendar"})
    if client.revision == "2025-11-25":
        assert out["content"][0]["text"] == "calendar: connected"  # -32042, URL shown, retried
        assert recorder.methods().count("tools/call") == 2
    else:
        assert out["content"][0]["text"] == "calendar: accept"
    assert [r.mode for r in user.asked] == ["url"]
    assert user.asked[0].url == "https://example.com/calendar"


async def test_listing_and_header_mirroring(session: tuple[Client, Recorder, User]) -> None:
    client, _, _ = session
    names = [t["name"] for t in await client.list_tools()]
    assert names == ["book", "plan", "connect", "regional", "slow"]
    assert [p["name"] for p in await client.list_prompts()] == ["evening"]
    assert await client.list_resources() == []
    assert [t["uriTemplate"] for t in await client.list_resource_templates()] == ["menu://{place}"]
    out = await client.call_tool("regional", {"region": "eu west ✓", "query": "q"})
    assert out["content"][0]["text"] == "eu west ✓:q"
    completion = await client.complete(
        {"type": "ref/prompt", "name": "evening"}, {"name": "city", "value": "O"}
    )
    assert completion["completion"]["values"] == []


async def test_discover_describes_the_server(session: tuple[Client, Recorder, User]) -> None:
    client, _, _ = session
    info = await client.discover()
    assert client.revision in info["supportedVersions"]
    assert "tools" in info["capabilities"]
    assert client.server_info.title == "Memory test server"


async def test_the_era_is_detected_and_headers_reach_the_server_in_http_mode() -> None:
    recorder = Recorder()
    transport = MemoryTransport(app, http=True, trace=recorder)
    async with Client(transport, answerer=Scripted.from_script([{"action": "accept"}])) as client:
        assert client.revision == "2026-07-28"
        await client.call_tool("regional", {"region": "north", "query": "x"})
    assert recorder.methods() == ["server/discover", "tools/list", "tools/call"]


async def test_a_declined_form_is_an_answer_not_an_error() -> None:
    # Keys exist on 2026-07-28 only; field names match on both revisions.
    answers = Scripted.from_script([{"fields": ["guests"], "action": "decline"}])
    for revision in REVISIONS:
        async with connect_memory(app, answerer=answers, versions=[revision]) as client:
            out = await client.call_tool("book", {"restaurant": "x"})
        assert out["content"][0]["text"] == "not booked (decline)"


async def test_an_unanswered_question_is_cancelled_and_reported() -> None:
    answers = Scripted.from_script({})
    async with connect_memory(app, answerer=answers) as client:
        out = await client.call_tool("book", {"restaurant": "x"})
    assert out["content"][0]["text"] == "not booked (cancel)"
    assert "memory-test" in answers.reports[0]
    assert "guests, date, seating" in answers.reports[0]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_fractional_number_is_answered_and_valid_on_the_wire(revision: str) -> None:
    """A ``number`` field takes 72.5, end to end: the client sends it as a JSON number (the
    specification's ``schema.ts`` types form answers ``string | number | boolean |
    string[]``; see ``support.wire._as_specified``), the server's handler gets a float."""
    weigh = Server("scales")

    @weigh.tool()
    async def weigh_in(ctx: Context) -> str:
        answer = await ctx.elicit("Your weight?", Form(kg=Number(minimum=0.5, maximum=500.5)))
        assert answer.data is not None
        return f"{answer.data['kg']!r} kg"

    recorder = Recorder()
    answers = Scripted.from_script([{"fields": ["kg"], "action": "accept", "content": {"kg": 72.5}}])
    async with connect_memory(weigh, answerer=answers, versions=[revision], trace=recorder) as client:
        out = await client.call_tool("weigh_in")
    assert out["content"][0]["text"] == "72.5 kg"
    assert recorder.check(WireChecker.load(revision)) == len(recorder.sent) > 0
