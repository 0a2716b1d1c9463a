"""2025-11-25 sessions over real HTTP: the limits on sessions. A session with an open stream is
not evicted, there is no room while every session listens, one principal cannot push
another's session out or use it, and one session has at most ``max_in_flight`` requests
running at once."""

from __future__ import annotations

import httpx
import orjson
import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import StaticTokens
from mcp_elicit.transports.http_server import StreamableHTTP

from support.http_sessions import Session, accepting
from support.procs import uvicorn_server
from support.sessions import ACCEPT, ask_name_server, initialize_body
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


async def test_a_session_with_an_open_stream_is_not_evicted(wire_2025: WireChecker) -> None:
    app = ask_name_server("http-sessions-bounded", max_sessions=2)
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening, idle = Session(http, running.url, wire_2025), Session(http, running.url, wire_2025)
        await listening.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            await idle.open()
            await Session(http, running.url, wire_2025).open()
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            kept = await http.post(running.url, json=ping, headers=listening.headers())
            assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, "the listening session stays"
            gone = await http.post(running.url, json=ping, headers=idle.headers())
            assert gone.status_code == 404, "the idle session made room"


async def test_no_room_while_every_session_listens(wire_2025: WireChecker) -> None:
    app = ask_name_server("http-sessions-full", max_sessions=1)
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        listening = Session(http, running.url, wire_2025)
        await listening.open()
        async with http.stream("GET", running.url, headers=listening.headers()) as stream:
            assert stream.status_code == 200
            refused = await http.post(
                running.url, json=initialize_body(capabilities={}), headers={"accept": ACCEPT}
            )
            assert refused.status_code == 503
            assert "mcp-session-id" not in refused.headers
            assert refused.json()["error"]["message"] == "Too many sessions; try again later"
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            kept = await http.post(running.url, json=ping, headers=listening.headers())
            assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}


async def test_one_principal_cannot_push_anothers_session_out_or_use_it() -> None:
    """Over HTTP with bearer tokens: ann opening sessions without end leaves bob's
    session open, and ann, holding bob's session id, gets 404 on POST, GET and DELETE."""
    app = ask_name_server(
        "http-sessions-principals",
        auth=StaticTokens({"token-ann": "ann", "token-bob": "bob"}),
        max_sessions=4,
        max_sessions_per_principal=2,
    )
    async with (
        uvicorn_server(StreamableHTTP(app, keepalive=0.2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):

        async def open_as(token: str) -> dict[str, str]:
            headers = {"accept": ACCEPT, "authorization": f"Bearer {token}"}
            opened = await http.post(running.url, json=initialize_body(), headers=headers)
            assert opened.status_code == 200, opened.text
            return {
                **headers,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }

        bob = await open_as("token-bob")
        for _ in range(6):
            await open_as("token-ann")
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        kept = await http.post(running.url, json=ping, headers=bob)
        assert kept.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, (
            "ann's sessions did not push bob's out"
        )
        as_ann = {**bob, "authorization": "Bearer token-ann"}
        for method in ("POST", "GET", "DELETE"):
            foreign = await http.request(
                method, running.url, headers=as_ann, json=ping if method == "POST" else None
            )
            assert foreign.status_code == 404, method
            assert foreign.json()["error"]["message"].startswith("Session not found"), method
        still = await http.post(running.url, json=ping, headers=bob)
        assert still.status_code == 200, "bob's session survived ann's attempts"


async def test_a_session_runs_at_most_max_in_flight_requests_at_once(wire_2025: WireChecker) -> None:
    """Requests waiting for a person hold memory until answered (or until their dropped
    stream is given up): one more than ``max_in_flight`` in a session is refused at once,
    naming the limit, while another session is not held back, and an answer makes room."""
    app = ask_name_server("http-sessions-in-flight")
    async with (
        uvicorn_server(StreamableHTTP(app, max_in_flight=2)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        busy, other = Session(http, running.url, wire_2025), Session(http, running.url, wire_2025)
        await busy.open()
        await other.open()
        async with busy.asked() as (_, events, first), busy.asked():
            async with http.stream(
                "POST", running.url, json=busy.call("ask_name"), headers=busy.headers()
            ) as third:
                assert third.status_code == 429, "refused at once, not run"
                refused = orjson.loads(await third.aread())
            assert refused["id"] == 3
            assert refused["error"]["code"] == -32600
            assert "2 requests of this session are in flight" in refused["error"]["message"]
            async with other.asked() as (_, _, question):
                assert question["method"] == "elicitation/create", "another session is not held back"
            await busy.post(accepting(first, name="Ann"))
            answered = [event async for event in events]
            assert answered[-1]["result"]["content"][0]["text"] == "hello Ann"
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            room = await busy.post(ping)
            assert room.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, "an answer made room"


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "8"])
def test_max_in_flight_is_a_whole_number_above_zero(bad: object) -> None:
    """Refused as every other whole-number option of the server is (``options.whole``)."""
    with pytest.raises(ConfigError) as refused:
        StreamableHTTP(ask_name_server("in-flight-option"), max_in_flight=bad)  # type: ignore[arg-type]
    assert str(refused.value) == f"max_in_flight {bad!r}: expected a whole number above zero"


async def test_a_cancelled_request_gives_its_place_back(wire_2025: WireChecker) -> None:
    """A request the client cancels (``notifications/cancelled``) stops counting against
    ``max_in_flight`` once it has ended: the session's next request runs."""
    app = ask_name_server("http-sessions-cancelled")
    async with (
        uvicorn_server(StreamableHTTP(app, max_in_flight=1)) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        busy = Session(http, running.url, wire_2025)
        await busy.open()
        async with busy.asked() as (_, events, _):
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            assert (await busy.post(cancel)).status_code == 202
            assert [event async for event in events if "id" in event and "method" not in event] == []
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        room = await busy.post(ping)
        assert room.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}, "the cancelled request made room"
