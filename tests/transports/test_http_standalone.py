"""The standalone (GET) stream of a 2025-11-25 session over real HTTP (uvicorn on
127.0.0.1): one connection at a time, the newest replacing the one before, and no
server-to-client message lost on the way, whether the client opens a second stream, gives
one up, or loses its connection; ``Last-Event-ID`` gets back what a lost connection took."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Server
from mcp_elicit.server.sessions import Session
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import Event, EventDecoder

from support.procs import InProcess, uvicorn_server
from support.sessions import ask_name_server, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, InProcess]]:
    app = ask_name_server("http-standalone")
    async with uvicorn_server(StreamableHTTP(app, keepalive=0.2, resume_within=1.0)) as running:
        yield app, running


class Events:
    """The events of one GET stream, read as they come."""

    def __init__(self, response: httpx.Response, wire: WireChecker) -> None:
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"] == "text/event-stream"
        self._chunks = response.aiter_bytes()
        self._wire = wire
        self._ready: deque[Event] = deque()
        self.decoder = EventDecoder()

    async def _more(self) -> bool:
        try:
            chunk = await anext(self._chunks)
        except StopAsyncIteration:
            return False
        self._ready.extend(self.decoder.feed(chunk))
        return True

    async def next(self) -> Event:
        """The next message (checked against the schema), within 5 s."""
        async with asyncio.timeout(5.0):
            while not self._ready:
                assert await self._more(), "the stream ended"
        event = self._ready.popleft()
        self._wire.notification(orjson.loads(event.data))
        return event

    async def primed(self) -> str:
        """The id of the priming event the stream starts with."""
        async with asyncio.timeout(5.0):
            while self.decoder.last_event_id is None:
                assert await self._more(), "the stream ended before its priming event"
        assert not self._ready, "a message came before the priming event"
        return self.decoder.last_event_id

    async def rest(self) -> list[Event]:
        """Every message still to come: the stream must end within 5 s."""
        async with asyncio.timeout(5.0):
            while await self._more():
                pass
        rest = list(self._ready)
        self._ready.clear()
        return rest


def notify(session: Session, n: int) -> None:
    session.notify("notifications/elicitation/complete", {"elicitationId": f"e-{n}"}, None)


def numbers(events: list[Event]) -> list[int]:
    return [int(orjson.loads(e.data)["params"]["elicitationId"][2:]) for e in events]


async def _session(
    app: Server, http: httpx.AsyncClient, url: str, wire: WireChecker
) -> tuple[dict[str, str], Session]:
    headers = await open_session(http, url, wire)
    live = app.sessions.get(headers["mcp-session-id"], None)
    assert live is not None
    return headers, live


async def test_a_second_stream_replaces_the_first_and_gets_every_message(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, live = await _session(app, http, running.url, wire_2025)
        async with http.stream("GET", running.url, headers=headers) as first:
            old = Events(first, wire_2025)
            await old.primed()
            async with http.stream("GET", running.url, headers=headers) as second:
                new = Events(second, wire_2025)
                await new.primed()
                for n in range(6):
                    notify(live, n)
                got = [await new.next() for _ in range(6)]
                assert numbers(got) == list(range(6)), "every message, once, in order, on the newest stream"
                assert await old.rest() == [], "the replaced stream ends, and gets none of them"
                notify(live, 6)
                assert numbers([await new.next()]) == [6]


async def test_a_message_on_a_stream_the_client_gave_up_is_replayed_with_last_event_id(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """The client stopped reading its first stream (a half-open connection the server
    cannot see): what was written there is not lost, the resume names the last it got."""
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, live = await _session(app, http, running.url, wire_2025)
        async with http.stream("GET", running.url, headers=headers) as first:
            old = Events(first, wire_2025)
            await old.primed()
            notify(live, 1)
            seen = await old.next()
            assert seen.id is not None
            notify(live, 2)
            lost = await old.next()  # written to the first connection; say the client never got it
            resume = {**headers, "last-event-id": seen.id}
            async with http.stream("GET", running.url, headers=resume) as second:
                new = Events(second, wire_2025)
                again = await new.next()
                assert (again.id, again.data) == (lost.id, lost.data)
                assert await old.rest() == []
                notify(live, 3)
                assert numbers([await new.next()]) == [3], "nothing twice"


async def test_a_message_sent_as_the_connection_dies_comes_with_the_resume(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """Whether the server wrote the message to the dead connection, or kept it for the next
    one, a resume from the last event the client got delivers it exactly once."""
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, live = await _session(app, http, running.url, wire_2025)
        for round_ in range(5):
            async with http.stream("GET", running.url, headers=headers) as stream:
                events = Events(stream, wire_2025)
                notify(live, 10 * round_)
                got = await events.next()
                assert numbers([got]) == [10 * round_]
                last = got.id
            notify(live, 10 * round_ + 1)  # the client has just closed the connection
            assert last is not None, "the stream's events carry ids"
            async with http.stream("GET", running.url, headers={**headers, "last-event-id": last}) as resumed:
                events = Events(resumed, wire_2025)
                assert numbers([await events.next()]) == [10 * round_ + 1]
                notify(live, 10 * round_ + 2)
                assert numbers([await events.next()]) == [10 * round_ + 2], "nothing twice"


async def test_a_message_waiting_for_a_stream_goes_to_a_fresh_one(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, live = await _session(app, http, running.url, wire_2025)
        notify(live, 1)
        async with http.stream("GET", running.url, headers=headers) as stream:
            events = Events(stream, wire_2025)
            assert numbers([await events.next()]) == [1]


async def test_a_standalone_event_id_resumes_only_in_its_session(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, _ = await _session(app, http, running.url, wire_2025)
        other, _ = await _session(app, http, running.url, wire_2025)
        async with http.stream("GET", running.url, headers=headers) as stream:
            primed = await Events(stream, wire_2025).primed()
        refused = await http.get(running.url, headers={**other, "last-event-id": primed})
        assert refused.status_code == 400
        error: dict[str, Any] = refused.json()["error"]
        assert "Last-Event-ID" in error["message"] and "still open" in error["message"]


async def raw_events(response: httpx.Response, count: int) -> list[tuple[str | None, str]]:
    """The first ``count`` events of ``response`` as (id, data), priming events included,
    within 5 s."""
    raw, events = b"", []
    async with asyncio.timeout(5.0):
        async for chunk in response.aiter_bytes():
            raw += chunk
            for block in raw.split(b"\n\n")[len(events) : -1]:
                fields = dict(line.split(": ", 1) for line in block.decode().split("\n") if ": " in line)
                events.append((fields.get("id"), fields.get("data", "")))
            if len(events) >= count:
                return events[:count]
    raise AssertionError(f"the stream ended after {len(events)} events")


async def test_each_priming_event_has_an_id_of_its_own_and_resumes_right_after_it(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """Event ids are unique within a session (2025-11-25, basic/transports, "Resumability
    and Redelivery"), but the priming event of each GET repeated an id already sent: the
    last message's, or the Last-Event-ID it resumed from. Each now has its own, and a
    ``Last-Event-ID`` naming it resumes right after where it stood."""
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, live = await _session(app, http, running.url, wire_2025)
        notify(live, 1)
        async with http.stream("GET", running.url, headers=headers) as first:
            (priming, sent) = await raw_events(first, 2)
        primings, messages = [priming[0]], {sent[0]}
        async with http.stream("GET", running.url, headers=headers) as fresh:  # no Last-Event-ID
            ((after, _),) = await raw_events(fresh, 1)
        primings.append(after)
        notify(live, 2)
        for _ in range(2):  # from the fresh stream's priming event, then from the resume's
            assert after is not None
            async with http.stream(
                "GET", running.url, headers={**headers, "last-event-id": after}
            ) as resumed:
                (primed, got) = await raw_events(resumed, 2)
            assert primed[1] == "", "a priming event first"
            assert numbers([Event(got[1], "message", got[0], None)]) == [2], "then what came after it"
            primings.append(primed[0])
            messages.add(got[0])
            after = primed[0]
        assert None not in primings and len(set(primings)) == len(primings), primings
        assert not set(primings) & messages, (primings, messages)


async def test_a_priming_id_the_stream_never_sent_is_400(
    served: tuple[Server, InProcess], wire_2025: WireChecker
) -> None:
    """The standalone stream's priming ids are ``<stream>-<n>.<k>``, ``k`` its connection's
    number: one of a connection still to come, or standing where that connection did not,
    or the ``<stream>-0`` it never sends, is unknown (400), not read as from event ``n``."""
    app, running = served
    async with httpx.AsyncClient(timeout=10) as http:
        headers, live = await _session(app, http, running.url, wire_2025)
        notify(live, 1)
        async with http.stream("GET", running.url, headers=headers) as first:
            ((primed, _), _sent) = await raw_events(first, 2)
        assert primed is not None and primed.endswith("-0.1"), primed
        stream = primed[: -len("-0.1")]
        for last in (f"{stream}-0.2", f"{stream}-1.1", f"{stream}-0", f"{stream}-0.01"):
            async with (
                asyncio.timeout(5.0),  # a stream taken for a resume would not end
                http.stream("GET", running.url, headers={**headers, "last-event-id": last}) as refused,
            ):
                assert refused.status_code == 400, last
                wire_2025.response("ping", orjson.loads(await refused.aread()))
            wire_2025.response("ping", refused.json())
        async with http.stream("GET", running.url, headers={**headers, "last-event-id": primed}) as again:
            (_, (_, data)) = await raw_events(again, 2)
        assert numbers([Event(data, "message", None, None)]) == [1], "what came after it"
