"""Session ids that name their instance (``StreamableHTTP(route=...)``), over real HTTP on
127.0.0.1: the id format (``<route>.`` and the usual 32 random URL-safe characters, all
visible ASCII), routes refused at construction, and a session id naming another route
answered 404 with both routes named (and one log line per route), on POST, GET and
DELETE alike."""

from __future__ import annotations

import logging
import re

import httpx
import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import uvicorn_server
from support.sessions import ACCEPT, ask_name_server, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
RANDOM = r"[A-Za-z0-9_-]{32}"
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


@pytest.mark.parametrize("route", ["a", "eu-west_2", "X" * 32])
async def test_a_routed_instance_starts_its_session_ids_with_its_route(
    route: str, wire_2025: WireChecker
) -> None:
    async with uvicorn_server(StreamableHTTP(ask_name_server("routes"), route=route)) as running:
        async with httpx.AsyncClient() as http:
            ids = [(await open_session(http, running.url, wire_2025))["mcp-session-id"] for _ in range(3)]
            pong = await http.post(
                running.url, json=PING, headers={"accept": ACCEPT, "mcp-session-id": ids[0]}
            )
    for sid in ids:
        assert re.fullmatch(re.escape(route) + r"\." + RANDOM, sid), sid
        assert all(0x21 <= ord(c) <= 0x7E for c in sid)
    assert len(set(ids)) == 3
    assert pong.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


async def test_without_a_route_the_ids_are_as_before(wire_2025: WireChecker) -> None:
    async with uvicorn_server(StreamableHTTP(ask_name_server("routes"))) as running:
        async with httpx.AsyncClient() as http:
            sid = (await open_session(http, running.url, wire_2025))["mcp-session-id"]
    assert re.fullmatch(RANDOM, sid), sid


@pytest.mark.parametrize("route", ["", "a.b", "a b", "é", "a/b", "X" * 33, "a\n"])
def test_a_route_that_cannot_start_a_session_id_is_refused(route: str) -> None:
    with pytest.raises(ConfigError, match=r"route must be 1 to 32 letters, digits, '-' or '_'"):
        StreamableHTTP(ask_name_server("routes"), route=route)


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_a_session_id_of_another_route_is_a_404_naming_both(
    method: str, wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit.http")
    a, b = StreamableHTTP(ask_name_server("a"), route="a"), StreamableHTTP(ask_name_server("b"), route="b")
    async with uvicorn_server(a) as on_a, uvicorn_server(b) as on_b, httpx.AsyncClient() as http:
        headers = await open_session(http, on_b.url, wire_2025)  # a session of b's, sent to a
        for _ in range(2):
            if method == "POST":
                refused = await http.post(on_a.url, json=PING, headers=headers)
            else:
                refused = await http.request(method, on_a.url, headers=headers)
            assert refused.status_code == 404, refused.text
            message = refused.json()["error"]["message"]
            assert message.startswith(
                "Session not found: its id names route 'b' and this instance has route 'a'"
            )
            assert message.endswith("initialize a new session"), message
        # its own instance still holds it
        assert (await http.post(on_b.url, json=PING, headers=headers)).status_code == 200
        # an unknown id of a's own route is an ordinary 404
        own = {**headers, "mcp-session-id": "a." + "x" * 32}
        unknown = await http.post(on_a.url, json=PING, headers=own)
    assert unknown.status_code == 404
    assert unknown.json()["error"]["message"] == "Session not found: initialize a new session"
    warned = [r.getMessage() for r in caplog.records if "route 'b'" in r.getMessage()]
    assert len(warned) == 1, warned  # once per route, however many requests
    assert "reached this instance (route 'a')" in warned[0]


async def test_a_session_id_of_a_route_sent_to_an_instance_without_one_says_so(
    wire_2025: WireChecker,
) -> None:
    """Instances started with and without ``--route`` behind one balancer: the 404 says the
    instance that got the request has no route, in words a person reads."""
    routed, plain = StreamableHTTP(ask_name_server("a"), route="a"), StreamableHTTP(ask_name_server("p"))
    async with uvicorn_server(routed) as on_a, uvicorn_server(plain) as on_plain, httpx.AsyncClient() as http:
        headers = await open_session(http, on_a.url, wire_2025)
        refused = await http.post(on_plain.url, json=PING, headers=headers)
    assert refused.status_code == 404, refused.text
    assert refused.json()["error"]["message"].startswith(
        "Session not found: its id names route 'a' and this instance has no route (the load balancer"
    ), refused.text


@pytest.mark.parametrize(("first", "second"), [("a", "b"), ("a", None), (None, "b")])
async def test_a_second_app_of_one_server_naming_another_route_is_refused(
    first: str | None, second: str | None, wire_2025: WireChecker
) -> None:
    """A route names the process holding the sessions, and one ``Server`` (one session
    table) lives in one process: two apps of it (mounted at two paths, say) with different
    routes would each rename the other's sessions. The second is refused, and the first
    keeps its ids."""
    server = ask_name_server("two-apps")
    app = StreamableHTTP(server, route=first)
    with pytest.raises(ConfigError) as refused:
        StreamableHTTP(server, route=second)
    shown = {None: "no route", "a": "route 'a'", "b": "route 'b'"}
    assert str(refused.value) == (
        f"this Server's sessions are already served with {shown[first]} by another StreamableHTTP, "
        f"not {shown[second]}: a route names the process holding the sessions, so every "
        "StreamableHTTP of one Server has the same route"
    )
    async with uvicorn_server(app) as running, httpx.AsyncClient() as http:
        sid = (await open_session(http, running.url, wire_2025))["mcp-session-id"]
    assert re.fullmatch((re.escape(first) + r"\." if first else "") + RANDOM, sid), sid


@pytest.mark.parametrize("route", [None, "a"])
async def test_apps_of_one_server_with_the_same_route_share_its_sessions(
    route: str | None, wire_2025: WireChecker
) -> None:
    server = ask_name_server("two-apps")
    one, two = StreamableHTTP(server, route=route), StreamableHTTP(server, route=route)
    async with uvicorn_server(one) as on_one, uvicorn_server(two) as on_two, httpx.AsyncClient() as http:
        headers = await open_session(http, on_one.url, wire_2025)
        pong = await http.post(on_two.url, json=PING, headers=headers)
    assert pong.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert headers["mcp-session-id"].startswith(f"{route}." if route else "")
