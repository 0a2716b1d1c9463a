"""2025-11-25 session streams a client can resume (``Last-Event-ID``), over real HTTP
(uvicorn on 127.0.0.1): the priming event, a stream the server ends mid-call, a
connection lost while a person answers, replay of what was missed, streams that cannot be
resumed, and mcp-elicit's own client doing it by itself. Messages are checked against
the schema of their revision."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.transports.http_streams import KEEP_FINISHED, KEEP_FINISHED_STREAMS
from mcp_elicit.wire.sse import Event, EventDecoder

from support.http import meta, mirrored_headers
from support.procs import InProcess, uvicorn_server
from support.sessions import ask_name_server, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def build(chatty_may_answer: asyncio.Event | None = None) -> Server:
    """The server; ``chatty`` answers once ``chatty_may_answer`` is set (None: at once)."""
    app = ask_name_server("resume")

    @app.tool()
    async def chatty(ctx: Context) -> str:
        for step in range(1005):
            await ctx.report_progress(step, 1005)
        await ctx.close_stream()
        if chatty_may_answer is not None:
            await chatty_may_answer.wait()  # still running when the client resumes
        return "said a lot"

    @app.tool()
    async def steady(ctx: Context) -> str:
        for step in range(8):
            await ctx.report_progress(step, 8)
            await asyncio.sleep(0.1)
        return "steady done"

    @app.tool()
    async def report_away(ctx: Context) -> str:
        await ctx.close_stream()
        for step in range(KEEP_FINISHED + 8):  # more than an answered stream keeps
            await ctx.report_progress(step, KEEP_FINISHED + 8)
        return "reported"

    @app.tool()
    async def poll(ctx: Context) -> str:
        closed = await ctx.close_stream()
        await asyncio.sleep(0.2)
        return f"closed={closed}"

    return app


@pytest.fixture
async def running() -> AsyncIterator[InProcess]:
    async with uvicorn_server(StreamableHTTP(build(), resume_within=5.0)) as served:
        yield served


def call(name: str, rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}}


async def read_events(
    response: httpx.Response, *, until_method: str | None = None, count: int | None = None
) -> tuple[list[Event], bytes]:
    """The events of ``response`` (priming events included: they are read raw here) and
    its raw bytes, up to the end, to the first message with ``until_method`` or to the
    ``count``-th event."""
    raw = b""
    events: list[Event] = []
    async for chunk in response.aiter_bytes():
        raw += chunk
        for block in raw.split(b"\n\n")[len(events) : -1]:
            fields = dict(line.split(": ", 1) for line in block.decode().split("\n") if ": " in line)
            events.append(Event(fields.get("data", ""), "message", fields.get("id"), None))
            if (until_method and until_method in fields.get("data", "")) or len(events) == count:
                return events, raw
    return events, raw


def message(event: Event) -> dict[str, Any]:
    parsed: dict[str, Any] = orjson.loads(event.data)
    return parsed


async def test_a_stream_the_server_ends_is_primed_and_resumed(
    running: InProcess, wire_2025: WireChecker
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        wire_2025.request(call("poll"))
        async with http.stream("POST", running.url, json=call("poll"), headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            events, raw = await read_events(response)
        # the priming event came first: an id, a retry hint, no data; then the stream ended
        assert raw.startswith(b"id: ") and b"\nretry: 1000\ndata: \n\n" in raw
        (priming,) = events
        assert priming.data == "" and priming.id is not None and priming.id.endswith("-0")
        resumed = await http.get(running.url, headers={**headers, "last-event-id": priming.id})
        assert resumed.status_code == 200
        decoded = EventDecoder().feed(resumed.content)
        (answer,) = decoded
        wire_2025.response("tools/call", message(answer))
        assert message(answer)["result"]["content"][0]["text"] == "closed=True"
        assert answer.id is not None and answer.id.startswith(priming.id[:-1])  # the same stream


async def test_a_connection_lost_while_a_person_answers_is_resumed(
    running: InProcess, wire_2025: WireChecker
) -> None:
    """The network drops after the question arrived; the person answers anyway and the
    client comes back for the result."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        async with http.stream("POST", running.url, json=call("ask_name"), headers=headers) as response:
            events, _ = await read_events(response, until_method="elicitation/create")
        # the connection is gone now; the request waits for us (resume_within)
        question = events[-1]
        ask = message(question)
        wire_2025.outgoing(ask)
        answer = {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        await asyncio.sleep(0.3)  # long enough for the server to notice the drop
        assert (await http.post(running.url, json=answer, headers=headers)).status_code == 202
        assert question.id is not None
        resumed = await http.get(running.url, headers={**headers, "last-event-id": question.id})
        (result,) = EventDecoder().feed(resumed.content)
        wire_2025.response("tools/call", message(result))
        assert message(result)["result"]["content"][0]["text"] == "hello Ada"


async def test_what_was_missed_is_replayed(running: InProcess, wire_2025: WireChecker) -> None:
    """Resuming from the priming event's id gets the question again, then the answer."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        async with http.stream("POST", running.url, json=call("ask_name"), headers=headers) as response:
            events, _ = await read_events(response, until_method="elicitation/create")
        priming, question = events
        assert priming.id is not None
        await asyncio.sleep(0.3)
        async with http.stream(
            "GET", running.url, headers={**headers, "last-event-id": priming.id}
        ) as resumed:
            decoder = EventDecoder()
            got: list[dict[str, Any]] = []
            async for chunk in resumed.aiter_bytes():
                for event in decoder.feed(chunk):
                    got.append(message(event))
                    if got[-1].get("method") == "elicitation/create":
                        assert got[-1] == message(question)  # the same request, replayed
                        answer = {
                            "jsonrpc": "2.0",
                            "id": got[-1]["id"],
                            "result": {"action": "accept", "content": {"name": "Bo"}},
                        }
                        assert (await http.post(running.url, json=answer, headers=headers)).status_code == 202
        assert [m.get("method") for m in got] == ["elicitation/create", None]
        wire_2025.response("tools/call", got[-1])
        assert got[-1]["result"]["content"][0]["text"] == "hello Bo"


async def test_an_answer_given_while_the_client_was_away_comes_with_all_it_missed(
    running: InProcess, wire_2025: WireChecker
) -> None:
    """The server ends the stream, then sends more notifications than an answered stream
    keeps, and answers before the client is back: coming back from the priming event, the
    client still gets every one of them and the answer (not 400, its answer lost)."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        body = call("report_away")
        body["params"]["_meta"] = {"progressToken": "away"}
        async with http.stream("POST", running.url, json=body, headers=headers) as response:
            (priming,), _ = await read_events(response)
        assert priming.id is not None
        await asyncio.sleep(0.5)  # the tool answers at once: it is over by now
        resumed = await http.get(running.url, headers={**headers, "last-event-id": priming.id})
        assert resumed.status_code == 200, resumed.text
        got = [message(event) for event in EventDecoder().feed(resumed.content)]
        for note in got[:-1]:
            wire_2025.notification(note)
        wire_2025.response("tools/call", got[-1])
        steps = [m["params"]["progress"] for m in got[:-1]]
        assert steps == list(range(KEEP_FINISHED + 8)), got
        assert got[-1]["result"]["content"][0]["text"] == "reported"


async def test_each_priming_event_has_an_id_of_its_own_and_resumes_right_after_it(
    running: InProcess, wire_2025: WireChecker
) -> None:
    """Event ids are unique within a session (2025-11-25, basic/transports, "Resumability
    and Redelivery"), but the priming event of each resume repeated the id it resumed
    after: two events of the session had one id. Each priming event now has its own, and
    a ``Last-Event-ID`` naming it resumes right after where it stood."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        async with http.stream("POST", running.url, json=call("ask_name"), headers=headers) as response:
            (first, question), _ = await read_events(response, until_method="elicitation/create")
        primings = [first]
        for _ in range(2):  # from the stream's first priming event, then from each resume's
            after = primings[-1]
            assert after.id is not None
            async with asyncio.timeout(10):
                async with http.stream(
                    "GET", running.url, headers={**headers, "last-event-id": after.id}
                ) as again:
                    (priming, replayed), _ = await read_events(again, count=2)
            assert priming.data == "", "a priming event first"
            assert (replayed.id, replayed.data) == (question.id, question.data), "then what came after"
            primings.append(priming)
        ask = message(question)
        answer = {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"action": "accept", "content": {"name": "Cy"}},
        }
        assert (await http.post(running.url, json=answer, headers=headers)).status_code == 202
        assert question.id is not None
        async with asyncio.timeout(10):
            async with http.stream(
                "GET", running.url, headers={**headers, "last-event-id": question.id}
            ) as last:
                (priming, *rest), _ = await read_events(last)
        primings.append(priming)
        ids = [event.id for event in [*primings, question]]
        assert None not in ids and len(set(ids)) == len(ids), ids
        (result,) = rest
        wire_2025.response("tools/call", message(result))
        assert message(result)["result"]["content"][0]["text"] == "hello Cy"


async def test_streams_that_cannot_be_resumed_are_400(running: InProcess, wire_2025: WireChecker) -> None:
    """Refused with 400, never 404: a 404 to a request carrying Mcp-Session-Id tells the
    client its session is gone, and a conforming client then drops it and starts anew."""
    async with httpx.AsyncClient(timeout=10) as http:
        mine = await open_session(http, running.url, wire_2025)
        other = await open_session(http, running.url, wire_2025)
        async with http.stream("POST", running.url, json=call("poll"), headers=mine) as response:
            (priming,), _ = await read_events(response)
        assert priming.id is not None
        for headers, last in (
            (mine, "nonsense"),
            (mine, "unknown-3"),
            (other, priming.id),
            (mine, "x-1" * 3000),
            (mine, "x-\xb2".encode("latin-1")),  # "²" passes str.isdigit, but int() cannot read it
            (mine, f"\xa0{priming.id}\x85".encode("latin-1")),  # not HTTP's white space: not trimmed
            (mine, f"{priming.id}."),  # a priming event's id is <stream>-<n>.<k>, k a number
            (mine, f"{priming.id}.1.2"),
        ):
            refused = await http.get(running.url, headers={**headers, "last-event-id": last})
            assert refused.status_code == 400, last
            wire_2025.response("ping", refused.json())
            error = refused.json()["error"]["message"]
            assert "no stream of this session to resume" in error and len(error) < 300
        # the owner still can
        resumed = await http.get(running.url, headers={**mine, "last-event-id": priming.id})
        assert (
            message(EventDecoder().feed(resumed.content)[0])["result"]["content"][0]["text"] == "closed=True"
        )


async def test_an_answer_the_client_never_got_outlives_a_busy_sessions_answered_streams(
    wire_2025: WireChecker,
) -> None:
    """A session keeps a bounded number of finished streams, but the answer of one whose
    connection had gone (the server ended it) is still there after more than that many
    other requests were answered on streams of their own while the client was away."""
    served = uvicorn_server(StreamableHTTP(build(), resume_within=60.0))
    async with served as running, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        async with http.stream("POST", running.url, json=call("poll"), headers=headers) as response:
            (priming,), _ = await read_events(response)
        assert priming.id is not None
        await asyncio.sleep(0.5)  # poll answers 0.2 s after ending its stream: nobody is there
        streamed = {**headers, "accept": "text/event-stream"}
        for rid in range(2, 2 + KEEP_FINISHED_STREAMS + 20):
            ping = {"jsonrpc": "2.0", "id": rid, "method": "ping"}
            answered = await http.post(running.url, json=ping, headers=streamed)
            assert answered.headers["content-type"] == "text/event-stream", answered
        resumed = await http.get(running.url, headers={**headers, "last-event-id": priming.id})
        assert resumed.status_code == 200, resumed.text
        (answer,) = EventDecoder().feed(resumed.content)
        wire_2025.response("tools/call", message(answer))
        assert message(answer)["result"]["content"][0]["text"] == "closed=True"


async def test_an_event_id_never_sent_is_400_not_read_as_a_near_one(
    running: InProcess, wire_2025: WireChecker
) -> None:
    """A priming event's id is ``<stream>-<n>.<k>``; one the server never sent (a ``k`` no
    connection has had yet, an ``n`` that connection did not stand after, a number written
    with leading zeros or ``k`` 0) is as unknown as ``unknown-3``: refused with 400, as
    every other id the session never sent, not taken for the id it resembles."""
    async with httpx.AsyncClient(timeout=10) as http:
        mine = await open_session(http, running.url, wire_2025)
        async with http.stream("POST", running.url, json=call("poll"), headers=mine) as response:
            (priming,), _ = await read_events(response)
        assert priming.id is not None and priming.id.endswith("-0")
        stream = priming.id[: -len("-0")]
        never_sent = (
            f"{stream}-0.1",  # no connection has resumed yet: a future priming event
            f"{stream}-0.999999999",
            f"{stream}-0.0",
            f"{stream}-00",
            f"{stream}-01",
            f"{stream}-1.1",
        )
        for last in never_sent:
            refused = await http.get(running.url, headers={**mine, "last-event-id": last})
            assert refused.status_code == 400, last
            wire_2025.response("ping", refused.json())
            assert "no stream of this session to resume" in refused.json()["error"]["message"]
        async with asyncio.timeout(10):
            async with http.stream(
                "GET", running.url, headers={**mine, "last-event-id": priming.id}
            ) as again:
                (primed, result), _ = await read_events(again)
        assert (
            primed.id == f"{stream}-0.1" and message(result)["result"]["content"][0]["text"] == "closed=True"
        )
        # the resume's priming event, now sent, resumes; one standing elsewhere still does not
        for last, status in ((f"{stream}-1.1", 400), (f"{stream}-0.2", 400), (primed.id, 200)):
            got = await http.get(running.url, headers={**mine, "last-event-id": last})
            assert got.status_code == status, last


async def test_an_older_session_gets_ids_but_no_priming_and_cannot_be_closed(
    running: InProcess, wire_2025: WireChecker
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(
            http, running.url, wire_2025, version="2025-06-18", capabilities={"elicitation": {}}
        )
        raw = b""
        ids: list[str | None] = []
        async with http.stream("POST", running.url, json=call("ask_name"), headers=headers) as response:
            decoder = EventDecoder()
            async for chunk in response.aiter_bytes():
                raw += chunk
                for event in decoder.feed(chunk):
                    ids.append(event.id)
                    ask = message(event)
                    if ask.get("method") == "elicitation/create":
                        answer = {"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}
                        assert (await http.post(running.url, json=answer, headers=headers)).status_code == 202
        assert b"data: \n\n" not in raw and b"retry:" not in raw  # no priming event before 2025-11-25
        assert len(ids) == 2 and all(i is not None for i in ids)
        assert [i.rsplit("-", 1)[1] for i in ids if i is not None] == ["1", "2"]
        assert message(decoder_last(raw))["result"]["content"][0]["text"] == "hello decline"
        polled = await http.post(running.url, json=call("poll", 2), headers=headers)
        assert polled.headers["content-type"] == "application/json"
        assert polled.json()["result"]["content"][0]["text"] == "closed=False"


def decoder_last(raw: bytes) -> Event:
    return EventDecoder().feed(raw)[-1]


async def test_modern_requests_never_carry_event_ids(running: InProcess) -> None:
    body = call("poll")
    body["params"]["_meta"] = meta({})
    headers = mirrored_headers("tools/call", body["params"])
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(running.url, json=body, headers=headers)
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "closed=False"


async def test_mcp_elicits_own_client_resumes_a_stream_the_server_ended(running: InProcess) -> None:
    async with connect_http(running.url, versions=["2025-11-25"]) as client:
        result = await client.call_tool("poll")
    assert result["content"][0]["text"] == "closed=True"


async def test_a_resume_from_before_the_kept_events_is_refused_not_gapped(wire_2025: WireChecker) -> None:
    """1,005 progress notifications, then the server ends the stream: the last 1,000 are
    kept (6 to 1,005), so resuming after event 4 (5 is gone) is refused, and after event 5
    gets everything from 6 on, then the answer. Once answered, only the last 16 events
    are kept: enough to fetch a lost answer again. The tool answers once the resume is
    under way: it used to answer half a second after ending its stream, which a loaded
    machine could take to read the 1,005 events, so the resume after 5 came after the
    answer and was rightly refused (400)."""
    may_answer = asyncio.Event()
    async with (
        uvicorn_server(StreamableHTTP(build(may_answer), resume_within=5.0)) as running,
        httpx.AsyncClient(timeout=20) as http,
    ):
        headers = await open_session(http, running.url, wire_2025)
        body = call("chatty")
        body["params"]["_meta"] = {"progressToken": "p"}
        wire_2025.request(body)
        async with http.stream("POST", running.url, json=body, headers=headers) as response:
            events, _ = await read_events(response)
        assert len(events) == 1 + 1005  # the priming event, then the notifications
        stream = events[1].id.rsplit("-", 1)[0] if events[1].id else ""
        too_old = await http.get(running.url, headers={**headers, "last-event-id": f"{stream}-4"})
        assert too_old.status_code == 400
        assert "no longer kept" in too_old.json()["error"]["message"]
        async with http.stream(
            "GET", running.url, headers={**headers, "last-event-id": f"{stream}-5"}
        ) as resumed:
            assert resumed.status_code == 200, (await resumed.aread())[:300]
            may_answer.set()  # the stream is this connection's: the answer comes on it
            content = await resumed.aread()
        got = [message(e) for e in EventDecoder().feed(content)]
        assert len(got) == 1001  # events 6 to 1,005 (progress 5 to 1,004), then the answer
        assert got[0]["params"]["progress"] == 5 and got[-2]["params"]["progress"] == 1004
        wire_2025.response("tools/call", got[-1])
        assert got[-1]["result"]["content"][0]["text"] == "said a lot"
        # answered: the tail is kept, the rest is not
        again = await http.get(running.url, headers={**headers, "last-event-id": f"{stream}-1000"})
        assert [
            message(e)["result"]["content"][0]["text"] for e in EventDecoder().feed(again.content)[-1:]
        ] == ["said a lot"]
        assert len(EventDecoder().feed(again.content)) == 6  # 1,001 to 1,005, then the answer
        gone = await http.get(running.url, headers={**headers, "last-event-id": f"{stream}-5"})
        assert gone.status_code == 400


async def test_a_resume_ends_the_connection_it_takes_over(running: InProcess, wire_2025: WireChecker) -> None:
    """A client resumes while the POST's connection still looks open to the server, then
    resumes again: each connection taken over ends there, as a complete response (it
    used to stay open with nothing more on it, then be cut off mid-stream when the request
    ended, the server logging "ASGI callable returned without completing response"), and
    the last one gets the rest, the answer last."""

    async def until_data(chunks: AsyncIterator[bytes], decoder: EventDecoder) -> None:
        while not decoder.feed(await anext(chunks)):
            pass

    async def rest(chunks: AsyncIterator[bytes], decoder: EventDecoder) -> list[dict[str, Any]]:
        return [message(e) for chunk in [c async for c in chunks] for e in decoder.feed(chunk)]

    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, running.url, wire_2025)
        body = call("steady")
        body["params"]["_meta"] = {"progressToken": "p"}
        async with http.stream("POST", running.url, json=body, headers=headers) as posted:
            post_chunks, post_decoder = posted.aiter_bytes(), EventDecoder()
            await until_data(post_chunks, post_decoder)
            resume = {**headers, "last-event-id": post_decoder.last_event_id or ""}
            async with http.stream("GET", running.url, headers=resume) as first:
                assert first.status_code == 200
                rest_of_post = await rest(post_chunks, post_decoder)  # taken over: it ends, complete
                first_chunks, first_decoder = first.aiter_bytes(), EventDecoder()
                await until_data(first_chunks, first_decoder)
                resume["last-event-id"] = first_decoder.last_event_id or ""
                async with http.stream("GET", running.url, headers=resume) as second:
                    assert second.status_code == 200
                    rest_of_first = await rest(first_chunks, first_decoder)  # ends too, complete
                    last = await rest(second.aiter_bytes(), EventDecoder())
    assert last[-1]["result"]["content"][0]["text"] == "steady done"
    wire_2025.response("tools/call", last[-1])
    for sent in rest_of_post + rest_of_first + last[:-1]:
        wire_2025.notification(sent)
        assert sent["method"] == "notifications/progress"
