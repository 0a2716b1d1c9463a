"""Stopping an HTTP server with 2025-11-25 sessions connected: their streams end, a request
still waiting for a person answers with an error, new requests get 503; and deleting a
session answers its waiting request the same way. Real uvicorn on 127.0.0.1, and a real
``mcp-elicit serve --http`` process stopped with SIGTERM. Messages are checked against the
2025-11-25 schema."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, KeyRing, Server
from mcp_elicit.stores import MemoryStore
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.sse import EventDecoder

from support.http import meta, mirrored_headers
from support.procs import ROOT, cli, free_port, http_process, uvicorn_server, wait_listening
from support.sessions import ACCEPT, ask_name_server, initialize_body, open_session
from support.waiting import HANG_GUARD, HOURS, hang_guard
from support.wire import WireChecker

pytestmark = pytest.mark.anyio


def build() -> Server:
    return ask_name_server("shutdown")


async def drain(response: httpx.Response, into: list[dict[str, Any]], asked: asyncio.Event) -> None:
    decoder = EventDecoder()
    async for chunk in response.aiter_bytes():
        for event in decoder.feed(chunk):
            into.append(orjson.loads(event.data))
            if into[-1].get("method") == "elicitation/create":
                asked.set()


async def waiting_call(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], wire: WireChecker, stack: Any
) -> tuple[list[dict[str, Any]], asyncio.Task[None]]:
    """Call ``ask_name`` and leave its question unanswered; the messages so far and the
    task reading the rest."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name"}}
    wire.request(call)
    response = await stack.enter_async_context(http.stream("POST", url, json=call, headers=headers))
    assert response.status_code == 200
    messages: list[dict[str, Any]] = []
    asked = asyncio.Event()
    reader = asyncio.ensure_future(drain(response, messages, asked))
    await asyncio.wait_for(asked.wait(), 5)
    wire.outgoing(messages[0])
    return messages, reader


async def test_begin_shutdown_ends_streams_answers_waiting_requests_and_refuses_new_ones(
    wire_2025: WireChecker,
) -> None:
    app = StreamableHTTP(build(), keepalive=HOURS)
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=2 * HANG_GUARD) as http:
        async with contextlib.AsyncExitStack() as stack:
            headers = await open_session(http, running.url, wire_2025)
            listen = await stack.enter_async_context(
                http.stream("GET", running.url, headers={**headers, "accept": "text/event-stream"})
            )
            assert listen.status_code == 200
            listening = asyncio.ensure_future(listen.aread())
            messages, reader = await waiting_call(http, running.url, headers, wire_2025, stack)

            app.begin_shutdown()
            async with hang_guard("the session's streams ending when the server begins to shut down"):
                await asyncio.gather(listening, reader)  # the keep-alive is hours away

            question, withdrawn, answer = messages  # the question is withdrawn, then the answer
            assert question["method"] == "elicitation/create"
            assert withdrawn["method"] == "notifications/cancelled"
            assert withdrawn["params"]["requestId"] == question["id"]
            wire_2025.notification(withdrawn)
            wire_2025.response("tools/call", answer)
            assert answer["id"] == 1 and answer["error"]["code"] == -32603
            assert "server is shutting down" in answer["error"]["message"]

            refused = await http.post(
                running.url, json={"jsonrpc": "2.0", "id": 5, "method": "ping"}, headers=headers
            )
            assert refused.status_code == 503
            wire_2025.response("ping", refused.json())
            assert "shutting down" in refused.json()["error"]["message"]


async def test_deleting_a_session_answers_its_waiting_request(
    wire_2025: WireChecker, caplog: pytest.LogCaptureFixture
) -> None:
    """The client's own DELETE ends the request waiting for a person: its question is
    withdrawn and it answers -32600 saying the client ended the session (not -32603, which
    says the server broke), with nothing logged at ERROR for this ordinary event."""
    caplog.set_level(logging.INFO, "mcp_elicit")
    app = StreamableHTTP(build())
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=10) as http:
        async with contextlib.AsyncExitStack() as stack:
            headers = await open_session(http, running.url, wire_2025)
            messages, reader = await waiting_call(http, running.url, headers, wire_2025, stack)
            assert (await http.delete(running.url, headers=headers)).status_code == 200
            await asyncio.wait_for(reader, 5)
            question, withdrawn, answer = messages
            assert withdrawn["method"] == "notifications/cancelled"
            assert withdrawn["params"]["requestId"] == question["id"]
            wire_2025.notification(withdrawn)
            wire_2025.response("tools/call", answer)
            assert answer["id"] == 1 and answer["error"]["code"] == -32600
            assert answer["error"]["message"] == (
                "Invalid request: the client ended this session (HTTP DELETE) before the request "
                "finished; it was stopped, and any question it was waiting on withdrawn"
            )
    assert not app.draining  # a deleted session is not a shutdown
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "ended with its session (deleted by the client)" in caplog.text


async def test_a_request_that_outlives_the_grace_gets_a_json_rpc_503(wire: WireChecker) -> None:
    """A 2026-07-28 request still running when the server's grace runs out (here uvicorn's
    2 s) answers 503 with a JSON-RPC error the client can act on: send it again (to
    another instance: the request carries everything a retry needs)."""
    server = build()

    @server.tool()
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(60)
        return "done"

    app = StreamableHTTP(server)
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "slow", "_meta": meta({})},
    }
    headers = mirrored_headers("tools/call", body["params"])
    wire.request(body)
    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=20) as http:
        pending = asyncio.ensure_future(http.post(running.url, json=body, headers=headers))
        await asyncio.sleep(0.3)  # the tool is running
        app.begin_shutdown()
        running.server.should_exit = True  # uvicorn's own graceful shutdown: 2 s here
        response = await asyncio.wait_for(pending, 15)
    assert response.status_code == 503
    wire.response("tools/call", response.json())
    assert response.json()["id"] == 7
    assert "shutting down; send the request again" in response.json()["error"]["message"]


async def test_a_retry_waiting_for_a_page_ends_its_round_at_once(wire: WireChecker) -> None:
    """2026-07-28, URL mode: the retry waits up to flow_wait (hours here) for the page; when
    the server starts stopping it answers at once with a state-only round, which the
    client sends again (to another instance, sharing the store)."""
    store = MemoryStore()
    server = Server("shutdown-url", state_keys=KeyRing([bytes(range(40, 72))]), store=store, flow_wait=HOURS)

    @server.tool()
    async def use_key(ctx: Context) -> str:
        answer = await ctx.secret("example_api_key", message="Enter your Example API key")
        return "key accepted" if answer.secret is not None else f"no key ({answer.action})"

    app = StreamableHTTP(server)
    headers = {
        "accept": ACCEPT,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "use_key",
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
    }

    def body(rid: int, **extra: Any) -> dict[str, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "use_key", "_meta": meta, **extra},
        }
        wire.request(message)
        return message

    async with uvicorn_server(app) as running, httpx.AsyncClient(timeout=2 * HANG_GUARD) as http:
        first = (await http.post(running.url, json=body(1), headers=headers)).json()["result"]
        (key,) = first["inputRequests"]
        accepted = body(2, inputResponses={key: {"action": "accept"}}, requestState=first["requestState"])
        retry = asyncio.ensure_future(http.post(running.url, json=accepted, headers=headers))
        await asyncio.sleep(0.5)  # the retry is waiting for the page
        assert not retry.done()
        app.begin_shutdown()
        async with hang_guard("the retry waiting for the page answering when the server begins to shut down"):
            response = await retry  # not after flow_wait, hours away
    assert response.status_code == 200
    wire.response("tools/call", response.json())
    result = response.json()["result"]
    assert result["resultType"] == "input_required" and "inputRequests" not in result
    assert result["requestState"]
    await store.close()


def test_serve_stops_promptly_on_sigterm_with_a_session_stream_open(tmp_path: Path) -> None:
    """``mcp-elicit serve --http`` with a client holding its session stream open: SIGTERM
    stops it at once (uvicorn alone would wait for the client to hang up)."""
    with http_process(ROOT / "examples" / "demo_server.py", log_dir=tmp_path) as server:
        with httpx.Client(timeout=2 * HANG_GUARD) as http:
            init = initialize_body(capabilities={})
            sid = http.post(server.url, json=init, headers={"accept": ACCEPT}).headers["mcp-session-id"]
            headers = {
                "accept": "text/event-stream",
                "mcp-session-id": sid,
                "mcp-protocol-version": "2025-11-25",
            }
            with http.stream("GET", server.url, headers=headers) as listen:
                assert listen.status_code == 200
                server.proc.send_signal(signal.SIGTERM)
                body = listen.read()  # the stream ends rather than hanging
                assert EventDecoder().feed(body) == [], "its priming event only, no message"
                assert server.proc.wait(timeout=HANG_GUARD) == 0, server.stderr()
        # ended by the server, not cut when uvicorn's grace (cli.serve_http.SHUTDOWN_GRACE) ran out
        assert "timeout graceful shutdown exceeded" not in server.stderr()


#: A server whose lifespan start-up or shutdown waits for the test (the file ``go``), so
#: that a Ctrl-C lands inside it; it marks where it is in files beside it.
HELD_LIFESPAN = """
import asyncio
import os
import sys
from pathlib import Path

from mcp_elicit import Server

HERE = Path(__file__).parent


async def go() -> None:
    for _ in range(3000):
        if (HERE / "go").exists():
            return
        await asyncio.sleep(0.01)


async def held(moment: str) -> None:
    (HERE / moment).write_text("")
    if os.environ.get("HOLD") == moment:
        try:
            await go()
        except asyncio.CancelledError:  # given up: it closes what it opened, slowly (until "go")
            (HERE / "given up").write_text("")
            await go()
            raise


class Held(Server):
    async def start(self, *, transport: object = None) -> None:
        await held("starting")
        await super().start(transport=transport)

    async def stop(self, *, transport: object = None) -> None:
        await held("stopping")
        await super().stop(transport=transport)
        (HERE / "stopped").write_text("")


app = Held("held")
"""


@pytest.mark.parametrize("moment", ["starting", "stopping"])
def test_ctrl_c_twice_during_the_lifespan_stops_quietly_with_130(tmp_path: Path, moment: str) -> None:
    """A second Ctrl-C is uvicorn's force exit, which skips the lifespan shutdown: then
    ``asyncio.run`` cancelled the lifespan still waiting for it, uvicorn logged "Exception in
    'lifespan' protocol" with a KeyboardInterrupt and a CancelledError, and the server was
    never stopped (its store left open). ``timeout -s INT`` sends its signal twice (to the
    process, then to its group), so it did this now and then. While starting, the first
    Ctrl-C gives the start up; the second comes while the start closes what it opened,
    which was left to ``asyncio.run``'s end, where that Ctrl-C cut it short: "Task was
    destroyed but it is pending!" and "Exception in 'lifespan' protocol" as Python ended."""
    app = tmp_path / "held_app.py"
    app.write_text(HELD_LIFESPAN, encoding="utf-8")
    port = free_port()
    with (tmp_path / "stderr").open("wb") as err:
        proc = subprocess.Popen(
            [*cli(), "serve", str(app), "--http", f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            env={**os.environ, "HOLD": moment},
            start_new_session=True,  # its own signals, as a terminal sends them
        )
    try:
        if moment == "stopping":  # the first Ctrl-C once it serves: its shutdown begins
            assert wait_listening(proc, port), (tmp_path / "stderr").read_text()
            proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 20
        while not (tmp_path / moment).exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert (tmp_path / moment).exists(), (tmp_path / "stderr").read_text()
        if moment == "starting":
            proc.send_signal(signal.SIGINT)
            while (
                not (tmp_path / "given up").exists() and time.monotonic() < deadline and proc.poll() is None
            ):
                time.sleep(0.02)
            assert (tmp_path / "given up").exists(), (tmp_path / "stderr").read_text()
        else:
            time.sleep(0.3)  # the first is taken before the second comes (else they are one)
        proc.send_signal(signal.SIGINT)
        (tmp_path / "go").write_text("")
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err_text = (tmp_path / "stderr").read_text()
    assert proc.returncode == 130, err_text
    assert "Traceback" not in err_text and "ERROR" not in err_text, err_text
    if moment == "stopping":
        assert (tmp_path / "stopped").exists(), "the server was not stopped"
    else:  # a start given up undoes itself: there is nothing to stop
        assert "SIGINT received while starting; stopping before serving" in err_text, err_text
