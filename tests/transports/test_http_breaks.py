"""Connections that break mid-round, through a TCP proxy on 127.0.0.1 (``support.proxy``)
between the real client and a real server: closed inside the headers, inside the body or
between SSE events, reset, stalled, or dropped before the request arrives, during a form
and a URL-mode round at both revisions. Each case says what the caller gets and how many
times the tool's side effect ran: a call that recovers runs it once; one that fails says
what broke, and runs it at most once (a tool call is never sent again)."""

from __future__ import annotations

import asyncio
import json
import logging
from asyncio.subprocess import PIPE
from pathlib import Path

import httpx
import pytest

from mcp_elicit import Context, Form, KeyRing, Server, String
from mcp_elicit.client.answerers import Scripted
from mcp_elicit.errors import TransportError
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.http_server import StreamableHTTP

from support.procs import _env, cli, uvicorn_server
from support.proxy import Fault, breaking, fresh

pytestmark = pytest.mark.anyio

NEW, OLD = "2026-07-28", "2025-11-25"
SCRIPT = [{"action": "accept", "content": {"name": "Ada"}}, {"action": "accept"}]
FIRST, RETRY = b'"tools/call"', b"inputResponses"


def build(done: dict[str, int]) -> Server:
    """``order`` asks a form, ``link`` a URL step; each counts its side effect in ``done``."""
    app = Server("breaks", state_keys=KeyRing([bytes(range(40, 72))]))

    @app.tool()
    async def order(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Form(name=String()))
        done["order"] += 1
        return f"ordered for {answer.content['name'] if answer.content else answer.action}"

    @app.tool()
    async def link(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in", "https://example.com/connect")
        done["link"] += 1
        return f"signed in: {answer.action}"

    return app


async def run(revision: str, tool: str, fault: Fault) -> tuple[str | BaseException, int]:
    """Call ``tool`` through a proxy applying ``fault``: the result's text (or what the call
    raised) and how many times the tool acted; a hang guard of 60 s."""
    fault = fresh(fault)
    done = {"order": 0, "link": 0}
    async with (
        uvicorn_server(StreamableHTTP(build(done))) as running,
        breaking(running.port, [fault]) as proxy,
    ):
        try:
            async with (
                asyncio.timeout(60),
                connect_http(
                    proxy.url(), answerer=Scripted.from_script(SCRIPT), versions=[revision], timeout=20
                ) as client,
            ):
                result = await client.call_tool(tool)
            out: str | BaseException = result["content"][0]["text"]
        except Exception as exc:
            out = exc
    assert fault.fired.is_set(), "the fault never met its request"
    return out, done[tool]


RECOVERED = {
    "2026 retry stalled": (NEW, Fault(RETRY, "stall", seconds=2)),
    "2025 call closed after its priming event": (OLD, Fault(FIRST, marker=b"\n\n")),
    "2025 call reset after its priming event": (OLD, Fault(FIRST, "reset", marker=b"\n\n")),
    "2025 call closed after the question": (OLD, Fault(FIRST, marker=b"\n\n", nth=2)),
    "2025 call stalled after its priming event": (OLD, Fault(FIRST, "stall", marker=b"\n\n", seconds=2)),
    "2025 event stream cut": (OLD, Fault(b"GET /mcp", marker=b"\r\n\r\n")),
    "2025 answer's POST closed unanswered": (OLD, Fault(b'"result"')),
    "2025 answer's POST reset unanswered": (OLD, Fault(b'"result"', "reset")),
    "2025 answer's POST closed in its headers": (OLD, Fault(b'"result"', after=10)),
    "2025 answer's POST dropped": (OLD, Fault(b'"result"', "drop")),
}


@pytest.mark.parametrize("tool", ["order", "link"])
@pytest.mark.parametrize(("revision", "fault"), list(RECOVERED.values()), ids=list(RECOVERED))
async def test_a_break_the_client_recovers_from_runs_the_tool_once(
    revision: str, fault: Fault, tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Resumed from the last event id, or the answer's POST sent again: the call ends as
    if nothing broke, nothing is logged as an error, and the tool acted once."""
    out, done = await run(revision, tool, fault)
    assert out in ("ordered for Ada", "signed in: accept"), out
    assert done == 1
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


LISTED = {
    "closed unanswered": Fault(b'"tools/list"'),
    "closed in its headers": Fault(b'"tools/list"', after=20),
    "reset unanswered": Fault(b'"tools/list"', "reset"),
    "closed after its headers": Fault(b'"tools/list"', marker=b"\r\n\r\n"),
    "dropped": Fault(b'"tools/list"', "drop"),
}


@pytest.mark.parametrize("revision", [NEW, OLD])
@pytest.mark.parametrize("fault", list(LISTED.values()), ids=list(LISTED))
async def test_a_read_whose_connection_broke_is_sent_again(fault: Fault, revision: str) -> None:
    """A read is sent again once whether its connection broke before the response began
    (a keep-alive connection the server or a proxy had closed, a reset) or inside it; at
    2025-11-25 too, when the stream gave no event id to resume from."""
    fault = fresh(fault)
    async with uvicorn_server(StreamableHTTP(build({}))) as running, breaking(running.port, [fault]) as proxy:
        async with asyncio.timeout(60), connect_http(proxy.url(), versions=[revision], timeout=20) as client:
            tools = await client.list_tools()
    assert fault.fired.is_set()
    assert sorted(tool["name"] for tool in tools) == ["link", "order"]


@pytest.mark.parametrize("revision", [NEW, OLD])
async def test_a_read_whose_connection_broke_twice_says_it_was_sent_again(revision: str) -> None:
    """The second connection breaks too: no third try, and the error says the read was
    already sent again once (else a person would think the client gave up at once)."""
    faults = [Fault(b'"tools/list"'), Fault(b'"tools/list"')]
    async with uvicorn_server(StreamableHTTP(build({}))) as running, breaking(running.port, faults) as proxy:
        async with asyncio.timeout(60), connect_http(proxy.url(), versions=[revision], timeout=20) as client:
            with pytest.raises(TransportError) as raised:
                await client.list_tools()
    assert all(fault.fired.is_set() for fault in faults)
    assert "already sent again once" in str(raised.value), raised.value


FAILED = {
    "2026 call closed unanswered": (NEW, Fault(FIRST, unless=RETRY), 0, "the tool may have acted"),
    "2026 call reset after its headers": (
        NEW,
        Fault(FIRST, "reset", marker=b"\r\n\r\n", unless=RETRY),
        0,
        "the tool may have acted",
    ),
    "2026 retry closed in its headers": (NEW, Fault(RETRY, after=20), 1, "the tool may have acted"),
    "2026 retry closed after its headers": (
        NEW,
        Fault(RETRY, marker=b"\r\n\r\n"),
        1,
        "the tool may have acted",
    ),
    "2026 retry reset": (NEW, Fault(RETRY, "reset"), 1, "the tool may have acted"),
    "2025 call closed in its headers": (OLD, Fault(FIRST, after=20), 0, "the tool may have acted"),
    "2025 call closed before any event": (
        OLD,
        Fault(FIRST, marker=b"\r\n\r\n"),
        0,
        "the tool may have acted",
    ),
}


@pytest.mark.parametrize("tool", ["order", "link"])
@pytest.mark.parametrize(("revision", "fault", "acted", "said"), list(FAILED.values()), ids=list(FAILED))
async def test_a_tool_call_whose_stream_broke_fails_saying_so(
    revision: str, fault: Fault, acted: int, said: str, tool: str
) -> None:
    """Nothing to resume from: the call fails with ``TransportError`` saying the connection
    broke, and that it was not sent again since the tool may have acted;
    the tool acted at most once."""
    out, done = await run(revision, tool, fault)
    assert isinstance(out, TransportError), out
    assert "broke" in str(out) and said in str(out), out
    assert done == acted


async def test_an_answer_whose_post_breaks_twice_fails_the_call_saying_so() -> None:
    """The person answered, but neither POST of the answer reached the server: the call
    fails at once saying the answer could not be sent, not after its timeout blaming
    the server for not answering; the tool never acted."""
    done = {"order": 0, "link": 0}
    faults = [Fault(b'"result"', "drop"), Fault(b'"result"', "drop")]
    async with (
        uvicorn_server(StreamableHTTP(build(done))) as running,
        breaking(running.port, faults) as proxy,
    ):
        async with connect_http(
            proxy.url(), answerer=Scripted.from_script(SCRIPT), versions=[OLD], timeout=120
        ) as client:
            with pytest.raises(TransportError, match="was given but could not be sent") as raised:
                async with asyncio.timeout(60):
                    await client.call_tool("order")
    assert "elicitation/create" in str(raised.value)
    assert all(fault.fired.is_set() for fault in faults)
    assert done["order"] == 0


CLI = {
    "2026 retry reset": (NEW, Fault(RETRY, "reset"), 3, 1, "the tool may have acted"),
    "2025 call closed before any event": (
        OLD,
        Fault(FIRST, marker=b"\r\n\r\n"),
        3,
        0,
        "the tool may have acted",
    ),
    "2025 answer's POST dropped": (OLD, Fault(b'"result"', "drop"), 0, 1, ""),
}


@pytest.mark.parametrize(("revision", "fault", "code", "acted", "said"), list(CLI.values()), ids=list(CLI))
async def test_mcp_elicit_call_through_a_break(
    revision: str, fault: Fault, code: int, acted: int, said: str, tmp_path: Path
) -> None:
    """``mcp-elicit call`` exits 3 saying what broke and that the tool may have acted, or,
    recovered, 0 with the result; no traceback either way."""
    fault = fresh(fault)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(SCRIPT))
    done = {"order": 0, "link": 0}
    async with (
        uvicorn_server(StreamableHTTP(build(done))) as running,
        breaking(running.port, [fault]) as proxy,
    ):
        args = ["call", proxy.url(), "order", "--answers", str(answers), "--protocol", revision]
        proc = await asyncio.create_subprocess_exec(*cli(), *args, stdout=PIPE, stderr=PIPE, env=_env())
        try:
            out, err = await asyncio.wait_for(proc.communicate(), 60)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    stderr = err.decode()
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    assert said in stderr
    assert (out.decode() == "ordered for Ada\n") == (code == 0)
    assert done["order"] == acted


async def test_a_result_is_not_held_while_the_answers_post_stalls() -> None:
    """The tool's result came on the call's stream while the POST of the person's answer
    still waits for its own HTTP answer (a stalled connection): the call returns the
    result, rather than holding it until that POST's own time limit (30 s) ends and it
    is sent again; the server needs no answer to a request it has answered."""
    stalls = [Fault(b'"result"', "stall", seconds=300), Fault(b'"result"', "stall", seconds=300)]
    done = {"order": 0, "link": 0}
    async with (
        uvicorn_server(StreamableHTTP(build(done))) as running,
        breaking(running.port, stalls) as proxy,
    ):
        async with connect_http(
            proxy.url(), answerer=Scripted.from_script(SCRIPT), versions=[OLD], timeout=20
        ) as client:
            async with asyncio.timeout(120):
                result = await client.call_tool("order")
            assert stalls[0].fired.is_set() and not stalls[0].resumed.is_set()
            assert not stalls[1].fired.is_set(), "the answer was POSTed again"
    assert result["content"][0]["text"] == "ordered for Ada"
    assert done["order"] == 1


async def test_an_answer_posted_twice_is_applied_once(caplog: pytest.LogCaptureFixture) -> None:
    """The answer's first POST reached the server but its HTTP answer never came back, and
    the call's result is held until the second POST has gone: the server gets the answer
    twice, applies it once, and the session goes on (tests/transports/test_http_breaks_peers.py:
    the SDKs' servers)."""
    cut, again = Fault(b'"result"'), Fault(b'"result"', "stall")
    hold = Fault(FIRST, "stall", marker=b"\n\n", nth=2, seconds=30, until=again.fired)
    done = {"order": 0, "link": 0}
    async with (
        uvicorn_server(StreamableHTTP(build(done))) as running,
        breaking(running.port, [hold, cut, again]) as proxy,
    ):
        async with (
            asyncio.timeout(60),
            connect_http(
                proxy.url(), answerer=Scripted.from_script(SCRIPT), versions=[OLD], timeout=20
            ) as client,
        ):
            ordered = await client.call_tool("order")
            assert hold.resumed.is_set() and again.fired.is_set(), "the answer was not POSTed twice"
            linked = await client.call_tool("link")
    assert [ordered["content"][0]["text"], linked["content"][0]["text"]] == [
        "ordered for Ada",
        "signed in: accept",
    ]
    assert done == {"order": 1, "link": 1}
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("revision", [NEW, OLD])
@pytest.mark.parametrize("method", ["call_tool", "list_tools"])
async def test_a_request_that_never_reached_the_server_says_so(revision: str, method: str) -> None:
    """The server went away after the handshake: a request refused its connection never
    reached it, so nothing may have acted and nothing is sent again; the error says the
    client cannot connect, not that the tool may have acted."""
    done = {"order": 0, "link": 0}
    async with uvicorn_server(StreamableHTTP(build(done))) as running:
        url = f"http://127.0.0.1:{running.port}/mcp"
        client_cm = connect_http(url, answerer=Scripted.from_script(SCRIPT), versions=[revision], timeout=20)
        client = await client_cm.__aenter__()
    try:
        with pytest.raises(TransportError) as raised:
            async with asyncio.timeout(60):
                await (client.call_tool("order") if method == "call_tool" else client.list_tools())
    finally:
        await client_cm.__aexit__(None, None, None)
    assert "cannot connect" in str(raised.value), raised.value
    assert "may have acted" not in str(raised.value) and "sent again" not in str(raised.value)
    assert done["order"] == 0


async def test_a_call_cut_before_any_event_is_cancelled_after_resume_within(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 2025-11-25 call cut before the client saw any event cannot be resumed (it has no
    id): the server's handler, waiting on a question nobody saw, is cancelled once
    ``resume_within`` has passed with no resume, and the server logs it."""
    caplog.set_level(logging.INFO, logger="mcp_elicit.http")
    cancelled = asyncio.Event()
    app = Server("stranded", state_keys=KeyRing([bytes(range(40, 72))]))

    @app.tool()
    async def order(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", Form(name=String()))
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "ordered"

    fault = Fault(FIRST, marker=b"\r\n\r\n")
    async with (
        uvicorn_server(StreamableHTTP(app, resume_within=0.5)) as running,
        breaking(running.port, [fault]) as proxy,
        connect_http(
            proxy.url(), answerer=Scripted.from_script(SCRIPT), versions=[OLD], timeout=20
        ) as client,
    ):
        with pytest.raises(TransportError, match="may have acted"):
            await client.call_tool("order")
        await asyncio.wait_for(cancelled.wait(), 30)
    assert any(
        "tools/call 'order' (request 2) cancelled: the client closed the connection and did not resume "
        "it within 0.5 s" in r.getMessage()
        for r in caplog.records
    ), caplog.text


@pytest.mark.parametrize("revision", [NEW, OLD])
async def test_a_request_that_found_no_free_connection_says_it_was_not_sent(revision: str) -> None:
    """A request that waited out the pool's timeout for a connection never left the client:
    its error says so and how to make room, not that the tool may have acted."""
    done = {"order": 0, "link": 0}
    app = build(done)
    release = asyncio.Event()

    @app.tool()
    async def hold() -> str:
        await release.wait()
        return "held"

    pool = httpx.AsyncClient(
        limits=httpx.Limits(max_connections=1), timeout=httpx.Timeout(10.0, read=None, pool=0.3)
    )
    async with (
        pool,
        uvicorn_server(StreamableHTTP(app)) as running,
        connect_http(
            f"http://127.0.0.1:{running.port}/mcp",
            answerer=Scripted.from_script(SCRIPT),
            versions=[revision],
            timeout=20,
            http_client=pool,
        ) as client,
    ):
        # takes the one connection (at 2025-11-25 the session's GET stream may have it first)
        holding = asyncio.ensure_future(client.call_tool("hold"))
        try:
            with pytest.raises(TransportError) as raised:
                async with asyncio.timeout(60):
                    await client.call_tool("order")
        finally:
            release.set()
            await asyncio.gather(holding, return_exceptions=True)
    text = str(raised.value)
    assert "not sent" in text and "no connection" in text, text
    assert "may have acted" not in text and "broke" not in text, text
    assert done["order"] == 0


async def test_a_proxy_that_refuses_the_tunnel_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``HTTPS_PROXY`` names a proxy that refuses the CONNECT: nothing reached the server,
    and the error says the proxy stood in the way, not that a connection broke."""

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    proxy = await asyncio.start_server(refuse, "127.0.0.1", 0)
    port = proxy.sockets[0].getsockname()[1]
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(TransportError) as raised:
            async with asyncio.timeout(60), connect_http("https://127.0.0.1:9/mcp", timeout=20):
                pass
    finally:
        proxy.close()
        await proxy.wait_closed()
    text = str(raised.value)
    assert "through the proxy" in text and "HTTPS_PROXY" in text, text
    assert "broke" not in text, text


async def test_a_2025_event_stream_cut_before_any_id_is_opened_again_three_times(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every GET of the session's event stream is cut after its headers, before any event
    id: it is opened again three times, then the listening ends, said once as a warning;
    the session still works for its requests."""
    faults = [Fault(b"GET /mcp", marker=b"\r\n\r\n") for _ in range(5)]
    done = {"order": 0, "link": 0}
    said = "not opened again"
    async with (
        uvicorn_server(StreamableHTTP(build(done))) as running,
        breaking(running.port, faults) as proxy,
        asyncio.timeout(60),
        connect_http(
            proxy.url(), answerer=Scripted.from_script(SCRIPT), versions=[OLD], timeout=20
        ) as client,
    ):
        for _ in range(300):  # three reopenings, a second or more apart
            if said in caplog.text:
                break
            await asyncio.sleep(0.05)
        assert (await client.call_tool("order"))["content"][0]["text"] == "ordered for Ada"
    assert [f.fired.is_set() for f in faults] == [True, True, True, True, False]
    warned = [r.getMessage() for r in caplog.records if said in r.getMessage()]
    assert len(warned) == 1 and "the event stream of" in warned[0], warned
    assert "outside a request will not arrive" in warned[0] and "reconnect" in warned[0], warned
