"""``Server(max_calls_per_minute=, call_burst=)``: how often one caller may call tools, over
real HTTP on 127.0.0.1 and a real stdio subprocess, at both revisions; and the bound on a
request's log messages. Every limit here allows two calls at once, then one a minute, so
the third call at once is refused however slow the machine: no test waits for a refill.
Later rounds have ten times that budget, completions thirty times."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from mcp_elicit import Context, Form, Server, String
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import Principal, StaticTokens
from mcp_elicit.transports.http_server import StreamableHTTP
from mcp_elicit.wire.jsonrpc import integral

from support.http import McpHttp, meta, parse_sse
from support.memory import MemoryClient
from support.procs import refused_at_start, stdio_process, uvicorn_server
from support.sessions import ask_name_server, open_session
from support.wire import WireChecker

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("rate_limited_server.py")
UNLIMITED = Path(__file__).with_name("old_revisions_server.py")


def limited(per_minute: float = 1, **options: Any) -> Server:
    app = ask_name_server("rate-limited", max_calls_per_minute=per_minute, call_burst=2, **options)

    @app.tool()
    async def hello() -> str:
        return "hello"

    @app.prompt()
    def greet(who: str) -> str:
        return f"Say hello to {who}"

    @app.prompt()
    async def ask_topic(ctx: Context) -> str:
        answer = await ctx.elicit("Topic?", Form(topic=String()))
        return f"Talk about {answer.content['topic'] if answer.content else answer.action}"

    @app.resource("notes://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    app.completion()(lambda ref, argument, context: [f"{argument['value']}a"])
    return app


#: What each budget's refusal names: ``data.limit``, then what its message says.
LIMITS = {
    "max_calls_per_minute": ("tool calls", 1, "max_calls_per_minute"),
    "max_rounds_per_minute": (
        "requests carrying a requestState (later rounds)",
        10,
        "10 times max_calls_per_minute",
    ),
    "max_reads_per_minute": ("prompts/get and resources/read requests", 10, "10 times max_calls_per_minute"),
    "max_completions_per_minute": ("completions", 30, "30 times max_calls_per_minute"),
}


def refused_for(
    error: dict[str, Any],
    who: str = "unauthenticated callers",
    limit: str = "max_calls_per_minute",
    per_minute: float = 1,
) -> int:
    """The seconds a rate limit refusal says to wait, checked against what it must say:
    its ``data`` names the budget it is refused by, and that budget's rate."""
    what, times, option = LIMITS[limit]
    assert error["code"] == -32600
    after = error["data"]["retryAfter"]
    most = round(times * per_minute, 9)
    assert isinstance(after, int) and 1 <= after <= math.ceil(60 / most)
    assert error["data"] == {"limit": limit, "most": most, "retryAfter": after}
    assert error["message"] == (
        f"Too many {what}: {who} may make {most:g} a minute, {2 * times} at once ({option}); "
        f"try again in {after} s"
    )
    return after


async def spend(send: Callable[[int], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Complete until refused (a budget of 60 at once, refilled while it is spent: at most
    90 requests); the refusal."""
    for n in range(90):
        answer = await send(n)
        if "error" in answer:
            assert n >= 60, answer
            return answer
        assert answer["result"]["completion"]["values"] == ["Ada"]
    raise AssertionError("never refused")


async def test_http_2026_the_third_call_at_once_is_429_with_retry_after(wire: WireChecker) -> None:
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        for _ in range(2):
            done = await mcp.call("hello", {})
            assert done.status == 200 and done.message["result"]["content"][0]["text"] == "hello"
        refused = await mcp.call("hello", {})
        assert refused.status == 429
        after = refused_for(refused.message["error"])
        assert refused.headers["retry-after"] == str(after)
        unknown = await mcp.call("nope", {})  # every call counts: a flood of bad ones costs too
        assert unknown.status == 429
        listed = await mcp.request("tools/list")  # other methods are not limited
        assert listed.status == 200 and "result" in listed.message


async def test_http_2026_each_principal_has_its_own_budget(wire: WireChecker) -> None:
    app = limited(auth=StaticTokens({"token-ann": "ann", "token-bob": "bob"}))
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        ann = {"authorization": "Bearer token-ann"}
        bob = {"authorization": "Bearer token-bob"}
        for _ in range(2):
            assert (await mcp.call("hello", {}, headers=ann)).status == 200
        refused = await mcp.call("hello", {}, headers=ann)
        assert refused.status == 429
        refused_for(refused.message["error"], "principal 'ann'")
        assert (await mcp.call("hello", {}, headers=bob)).status == 200


async def test_http_2026_answering_a_question_is_never_refused(wire: WireChecker) -> None:
    """The round that carries a person's answer belongs to a call already counted."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        caps = meta(capabilities={"elicitation": {"form": {}}})
        asked = (await mcp.call("ask_name", {}, meta_=caps)).message["result"]
        assert asked["resultType"] == "input_required"
        assert (await mcp.call("hello", {})).status == 200
        assert (await mcp.call("hello", {})).status == 429  # the budget is spent
        (key,) = asked["inputRequests"]
        answer = {"action": "accept", "content": {"name": "Ada"}}
        retry = {"inputResponses": {key: answer}, "requestState": asked["requestState"]}
        done = await mcp.call("ask_name", {}, meta_=caps, extra=retry)
        assert done.status == 200
        assert done.message["result"]["content"][0]["text"] == "hello Ada"


async def test_http_2026_sending_states_again_and_again_is_bounded(wire: WireChecker) -> None:
    """Later rounds have ten times the calls' budget (20 at once here): a script sending a
    state again and again (each time asked again, with a new state) is refused past it."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        caps = meta(capabilities={"elicitation": {"form": {}}})
        state = (await mcp.call("ask_name", {}, meta_=caps)).message["result"]["requestState"]
        for _ in range(20):
            again = await mcp.call("ask_name", {}, meta_=caps, extra={"requestState": state})
            assert again.message["result"]["resultType"] == "input_required"
            state = again.message["result"]["requestState"]
        refused = await mcp.call("ask_name", {}, meta_=caps, extra={"requestState": state})
        assert refused.status == 429
        after = refused_for(refused.message["error"], limit="max_rounds_per_minute")
        assert refused.headers["retry-after"] == str(after)
        assert (await mcp.call("hello", {})).status == 200  # the calls' budget is apart


async def test_http_2026_a_state_that_is_no_state_exempts_nothing(wire: WireChecker) -> None:
    """``requestState`` null (no state: the call runs as a first one) is counted; one that
    does not open is refused (-32602) before any handler runs. Such a state is no call, but
    it is counted as a round: a flood of made-up states meets the rounds' budget (20 here)."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        for _ in range(2):
            assert (await mcp.call("hello", {}, extra={"requestState": None}, malformed=True)).status == 200
        refused = await mcp.call("hello", {}, extra={"requestState": None}, malformed=True)
        assert refused.status == 429
        for _ in range(20):
            forged = await mcp.call("hello", {}, extra={"requestState": "forged"})
            assert forged.message["error"]["code"] == -32602, forged.message
        flood = await mcp.call("hello", {}, extra={"requestState": "forged"})
        assert flood.status == 429
        refused_for(flood.message["error"], limit="max_rounds_per_minute")


async def test_http_every_unauthenticated_caller_is_one_caller(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """Without authentication, a new 2025-11-25 session is no new budget (a client opening
    one for each call would escape the limit): sessions and 2026-07-28 requests share one.
    In a session every JSON-RPC error is a 200 response, as the revision's other errors are."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        assert (await McpHttp(http, running.url, wire).call("hello", {})).status == 200
        first = await open_session(http, running.url, wire_2025)
        second = await open_session(http, running.url, wire_2025)

        async def call(headers: dict[str, str], rid: int) -> httpx.Response:
            body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "hello"}}
            wire_2025.request(body)
            return await http.post(running.url, json=body, headers={**headers, "accept": "application/json"})

        assert (await call(first, 1)).json()["result"]["content"][0]["text"] == "hello"
        refused = await call(second, 2)
        assert refused.status_code == 200 and "retry-after" not in refused.headers
        wire_2025.response("tools/call", refused.json())
        refused_for(refused.json()["error"])


def call(rid: int, name: str, *, modern: bool = False, **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = meta(**{"io.modelcontextprotocol/logLevel": "info"})
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def complete(rid: int, value: str, *, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "who", "value": value},
    }
    if modern:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": rid, "method": "completion/complete", "params": params}


async def initialized(stdio: Any) -> None:
    """Open the 2025-11-25 session of a stdio process."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    await stdio.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    await stdio.until(0)
    await stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_stdio_at_both_revisions(tmp_path: Path, wire: WireChecker, wire_2025: WireChecker) -> None:
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        for rid in (1, 2):
            await stdio.send(call(rid, "hello", modern=True))
            assert (await stdio.until(rid))[0]["result"]["content"][0]["text"] == "hello"
        await stdio.send(call(3, "hello", modern=True))
        refused = (await stdio.until(3))[0]
        wire.response("tools/call", refused)
        refused_for(refused["error"])
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        await initialized(stdio)
        for rid in (1, 2):
            await stdio.send(call(rid, "hello"))
            assert "result" in (await stdio.until(rid))[0]
        await stdio.send(call(3, "hello"))
        refused = (await stdio.until(3))[0]
        wire_2025.response("tools/call", refused)
        refused_for(refused["error"])


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
async def test_stdio_completions_have_a_budget_of_their_own(
    tmp_path: Path, wire: WireChecker, wire_2025: WireChecker, modern: bool
) -> None:
    """Thirty times the calls' (60 at once here), refused as a call is; calls are apart."""
    checker = wire if modern else wire_2025
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        if not modern:
            await initialized(stdio)

        async def send(rid: int) -> dict[str, Any]:
            await stdio.send(complete(rid + 1, "Ad", modern=modern))
            answer: dict[str, Any] = (await stdio.until(rid + 1))[0]
            checker.response("completion/complete", answer)
            return answer

        refused_for((await spend(send))["error"], limit="max_completions_per_minute")
        await stdio.send(call(100, "hello", modern=modern))
        assert (await stdio.until(100))[0]["result"]["content"][0]["text"] == "hello"


async def test_http_completions_are_limited_at_both_revisions(
    wire: WireChecker, wire_2025: WireChecker
) -> None:
    """429 with Retry-After at 2026-07-28; in a 2025-11-25 session, 200 (one caller: both).
    0.06 calls a minute: 1.8 completions a minute (not 1.7999999999999998, the floats'
    product), so no refill comes in between."""
    app = limited(0.06)
    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        session = await open_session(http, running.url, wire_2025)
        params = complete(0, "Ad")["params"]

        async def send(_: int) -> dict[str, Any]:
            done = await mcp.request("completion/complete", params)
            assert done.status == (429 if "error" in done.message else 200)
            return done.message

        refused_for((await spend(send))["error"], limit="max_completions_per_minute", per_minute=0.06)
        body = complete(1, "Ad")
        wire_2025.request(body)
        in_session = await http.post(
            running.url, json=body, headers={**session, "accept": "application/json"}
        )
        assert in_session.status_code == 200 and "retry-after" not in in_session.headers
        wire_2025.response("completion/complete", in_session.json())
        refused_for(in_session.json()["error"], limit="max_completions_per_minute", per_minute=0.06)
        refused = await mcp.request("completion/complete", params)
        assert refused.status == 429
        after = refused_for(refused.message["error"], limit="max_completions_per_minute", per_minute=0.06)
        assert refused.headers["retry-after"] == str(after)
        assert (await mcp.call("hello", {})).status == 200


async def test_stdio_log_messages_past_the_bound_are_dropped_and_counted(
    tmp_path: Path, wire: WireChecker
) -> None:
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        await stdio.send(call(1, "chatty", modern=True, count=300))
        done, before = await stdio.until(1, within=30)
        assert done["result"]["content"][0]["text"] == "done"
        for message in before:
            wire.notification(message)
        said = [m["params"]["data"] for m in before]
        lines = [s for s in said if s.startswith("line ")]
        told = [s for s in said if "dropped" in s]
        assert 100 <= len(lines) < 300
        assert told[0] == "log messages past 100 a second are dropped for this request"
        dropped = sum(int(s.split()[0]) for s in told[1:])
        assert len(told) >= 2 and len(lines) + dropped == 300  # every one sent or counted
        assert said[-1] == "last" and said[-2] == told[-1]


async def test_http_2025_a_sessions_log_messages_are_bounded_too(wire_2025: WireChecker) -> None:
    """Over a 2025-11-25 session's request stream, at the level the session set: the same
    bound, the same notices (at the level of what was dropped)."""
    app = Server("chatty")

    @app.tool()
    async def chatty(ctx: Context) -> str:
        for n in range(300):
            await ctx.warning(f"line {n}")
        await asyncio.sleep(1.1)  # the budget is whole again: the last line goes, the count with it
        await ctx.warning("last")
        return "done"

    async with uvicorn_server(StreamableHTTP(app)) as running, httpx.AsyncClient(timeout=30) as http:
        session = await open_session(http, running.url, wire_2025)
        level = {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "warning"}}
        assert "result" in (await http.post(running.url, json=level, headers=session)).json()
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chatty"}}
        answered = await http.post(running.url, json=body, headers=session)
        messages = [orjson.loads(data) for data in parse_sse(answered.text) if data]  # not the priming event
    *notes, done = messages
    wire_2025.response("tools/call", done)
    assert done["result"]["content"][0]["text"] == "done"
    for note in notes:
        wire_2025.notification(note)
        assert note["params"]["level"] == "warning"
    said = [n["params"]["data"] for n in notes]
    lines = [s for s in said if s.startswith("line ")]
    told = [s for s in said if "dropped" in s]
    assert told[0] == "log messages past 100 a second are dropped for this request"
    assert len(lines) + sum(int(s.split()[0]) for s in told[1:]) == 300
    assert said[-2:] == [told[-1], "last"]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"max_calls_per_minute": 0}, "max_calls_per_minute 0: expected None (no limit) or a finite"),
        ({"max_calls_per_minute": float("inf")}, "max_calls_per_minute inf: expected"),
        ({"max_calls_per_minute": True}, "max_calls_per_minute True: expected"),
        ({"max_calls_per_minute": "60"}, "max_calls_per_minute '60': expected"),
        # so slow that the wait overflows what the wire carries, or the interval is infinite
        ({"max_calls_per_minute": 1e-18}, "max_calls_per_minute 1e-18: expected None (no limit) or a finite"),
        (
            {"max_calls_per_minute": 1e-320},
            "max_calls_per_minute 1e-320: expected None (no limit) or a finite",
        ),
        # so fast that thirty times it (completions) or its burst overflows a float
        (
            {"max_calls_per_minute": 1e307},
            "max_calls_per_minute 1e+307: expected None (no limit) or a finite",
        ),
        ({"max_calls_per_minute": 2e9}, "max_calls_per_minute 2000000000.0: expected None (no limit) or a"),
        ({"max_calls_per_minute": 60, "call_burst": 0}, "call_burst 0: expected a whole number"),
        (
            {"max_calls_per_minute": 60, "call_burst": 10**400},
            f"call_burst {10**400}: expected a whole number from 1 to 1,000,000,000",
        ),
        ({"call_burst": 5}, "call_burst 5: give max_calls_per_minute too"),
    ],
)
def test_a_limit_that_cannot_work_is_a_config_error(options: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(said)):
        Server("x", **options)


def test_the_burst_is_a_tenth_of_the_minute_unless_given() -> None:
    assert Server("x").call_limit is None
    limit = Server("x", max_calls_per_minute=600).call_limit
    assert limit is not None and limit.burst == 60
    limit = Server("x", max_calls_per_minute=5).call_limit
    assert limit is not None and limit.burst == 1
    limit = Server("x", max_calls_per_minute=5, call_burst=7).call_limit
    assert limit is not None and limit.burst == 7


def test_the_limit_can_be_set_later_and_taken_off() -> None:
    app = Server("x", max_calls_per_minute=60)
    app.limit_tool_calls(120, 5)
    assert app.call_limit is not None and (app.call_limit.per_minute, app.call_limit.burst) == (120, 5)
    app.limit_tool_calls(None)
    assert app.call_limit is None
    with pytest.raises(ConfigError, match="call_burst 5: give max_calls_per_minute too"):
        app.limit_tool_calls(None, 5)


async def _second_call_refused(tmp_path: Path, wire: WireChecker, per_minute: str) -> dict[str, Any]:
    """``mcp-elicit serve --max-calls-per-minute per_minute`` over stdio: one call answered,
    the next one's refusal (checked against the schema)."""
    async with stdio_process(
        UNLIMITED, log_dir=tmp_path, args=("--max-calls-per-minute", per_minute)
    ) as stdio:
        await stdio.send(call(1, "can_ask", modern=True))
        assert "result" in (await stdio.until(1))[0]
        await stdio.send(call(2, "can_ask", modern=True))
        refused: dict[str, Any] = (await stdio.until(2))[0]
    wire.response("tools/call", refused)
    return refused


async def test_serve_sets_the_limit_of_a_server_without_one(tmp_path: Path, wire: WireChecker) -> None:
    """``--max-calls-per-minute 1``: one call at once (a tenth of one, at least one)."""
    refused = await _second_call_refused(tmp_path, wire, "1")
    assert refused["error"]["message"].startswith(
        "Too many tool calls: unauthenticated callers may make 1 a minute (max_calls_per_minute)"
    )


@pytest.mark.parametrize("value", ["0", "nan", "-5", "1e307", "ten"])
def test_serve_refuses_a_limit_that_cannot_work(value: str) -> None:
    done = refused_at_start(["serve", str(UNLIMITED), "--max-calls-per-minute", value], value)
    # one line, in the command line's words: no usage, no Python None
    said = f"mcp-elicit: --max-calls-per-minute {value!r}: expected a number of calls a minute from 1e-09 to 1,000,000,000\n"
    assert done.stderr == said, done.stderr


async def test_the_slowest_limit_refuses_with_a_wait_the_wire_carries(
    tmp_path: Path, wire: WireChecker
) -> None:
    """At the fewest calls a minute there may be, the wait (about 1,900 years) is still a
    -32600 saying it, not an error that cannot be encoded."""
    refused = await _second_call_refused(tmp_path, wire, "1e-9")
    assert refused["error"]["code"] == -32600
    assert abs(refused["error"]["data"]["retryAfter"] - 60_000_000_000) <= 1


@pytest.mark.parametrize("per_minute", [0.0123456789, 1.23456789, 2.5e-7])
async def test_the_message_says_the_rate_data_most_holds(wire: WireChecker, per_minute: float) -> None:
    """At every rate, not only those of six digits or fewer: "0.0123457" in the message
    where ``data.most`` says 0.0123456789 would be two limits (as "1.2e+06" for 1200000).
    Slow rates: no refill comes while the budget is spent."""
    app = limited(per_minute)
    client = MemoryClient(app, checker=wire, principal=Principal("ann"))
    for method, params in (
        ("tools/call", {"name": "hello"}),
        ("completion/complete", complete(0, "Ad")["params"]),
    ):
        for _ in range(200):
            answer = await client.request(method, params)
            if "error" in answer:
                break
        error = answer["error"]
        most = error["data"]["most"]
        assert most == integral(float(f"{per_minute * (30 if method != 'tools/call' else 1):.12g}"))
        assert f"principal 'ann' may make {most} a minute, " in error["message"], error["message"]


# ---- prompts/get and resources/read: a budget of their own, ten times the calls' ------------


def read(rid: int, uri: str = "notes://a", *, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"uri": uri}
    if modern:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": rid, "method": "resources/read", "params": params}


def get_prompt(rid: int, name: str = "greet", *, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"who": "Ada"}}
    if modern:
        params["_meta"] = meta()
    return {"jsonrpc": "2.0", "id": rid, "method": "prompts/get", "params": params}


async def test_http_2026_prompts_and_reads_share_a_budget_of_their_own(wire: WireChecker) -> None:
    """Twenty at once here (ten times the calls' two), prompts and reads together, then 429
    with Retry-After; an unknown prompt or URI counts too. Tool calls are apart."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        for n in range(10):
            got = await mcp.request("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
            assert got.status == 200 and "result" in got.message, got.message
            done = await mcp.request("resources/read", {"uri": f"notes://{n}"})
            assert done.message["result"]["contents"][0]["text"] == f"note {n}"
        for method, params in (
            ("resources/read", {"uri": "notes://a"}),
            ("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}}),
            ("resources/read", {"uri": "nowhere://a"}),
            ("prompts/get", {"name": "nope"}),
        ):
            refused = await mcp.request(method, params)
            assert refused.status == 429, refused.message
            after = refused_for(refused.message["error"], limit="max_reads_per_minute")
            assert refused.headers["retry-after"] == str(after)
        assert (await mcp.call("hello", {})).status == 200  # the calls' budget is apart
        assert (await mcp.request("prompts/list")).status == 200  # listing is not limited


async def test_http_2026_answering_a_prompts_question_is_never_refused(wire: WireChecker) -> None:
    """The round carrying the person's answer is on the rounds' budget, not the reads'."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        caps = meta(capabilities={"elicitation": {"form": {}}})
        asked = (await mcp.request("prompts/get", {"name": "ask_topic"}, meta_=caps)).message["result"]
        assert asked["resultType"] == "input_required"
        for _ in range(19):  # the reads' budget spent
            assert (await mcp.request("resources/read", {"uri": "notes://a"})).status == 200
        assert (await mcp.request("resources/read", {"uri": "notes://a"})).status == 429
        (key,) = asked["inputRequests"]
        answer = {"action": "accept", "content": {"topic": "tides"}}
        params = {"name": "ask_topic", "inputResponses": {key: answer}, "requestState": asked["requestState"]}
        done = await mcp.request("prompts/get", params, meta_=caps)
        assert done.status == 200, done.message
        assert done.message["result"]["messages"][0]["content"]["text"] == "Talk about tides"


async def test_http_2026_sending_a_prompts_state_again_is_bounded(wire: WireChecker) -> None:
    """A prompt's state sent again and again (asked again each time) meets the rounds'
    budget (20 here), refused as a tool's rounds are."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        caps = meta(capabilities={"elicitation": {"form": {}}})
        asked = await mcp.request("prompts/get", {"name": "ask_topic"}, meta_=caps)
        state = asked.message["result"]["requestState"]
        for _ in range(20):
            again = await mcp.request("prompts/get", {"name": "ask_topic", "requestState": state}, meta_=caps)
            state = again.message["result"]["requestState"]
        refused = await mcp.request("prompts/get", {"name": "ask_topic", "requestState": state}, meta_=caps)
        assert refused.status == 429
        refused_for(refused.message["error"], limit="max_rounds_per_minute")
        assert (await mcp.request("resources/read", {"uri": "notes://a"})).status == 200


async def test_http_2025_a_sessions_reads_are_limited_too(wire: WireChecker, wire_2025: WireChecker) -> None:
    """In a 2025-11-25 session: a 200 with the error, no Retry-After; one budget with the
    2026-07-28 requests of the same (unauthenticated) caller."""
    async with uvicorn_server(StreamableHTTP(limited())) as running, httpx.AsyncClient(timeout=10) as http:
        mcp = McpHttp(http, running.url, wire)
        for _ in range(19):
            assert (await mcp.request("resources/read", {"uri": "notes://a"})).status == 200
        session = await open_session(http, running.url, wire_2025)
        headers = {**session, "accept": "application/json"}
        body = get_prompt(1)
        wire_2025.request(body)
        answered = await http.post(running.url, json=body, headers=headers)
        wire_2025.response("prompts/get", answered.json())
        assert answered.json()["result"]["messages"][0]["content"]["text"] == "Say hello to Ada"
        body = read(2)
        wire_2025.request(body)
        refused = await http.post(running.url, json=body, headers=headers)
        assert refused.status_code == 200 and "retry-after" not in refused.headers
        wire_2025.response("resources/read", refused.json())
        refused_for(refused.json()["error"], limit="max_reads_per_minute")


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
async def test_stdio_prompts_and_reads_are_limited(
    tmp_path: Path, wire: WireChecker, wire_2025: WireChecker, modern: bool
) -> None:
    checker = wire if modern else wire_2025
    async with stdio_process(SERVER, log_dir=tmp_path) as stdio:
        if not modern:
            await initialized(stdio)
        for rid in range(1, 21):
            await stdio.send(read(rid, modern=modern) if rid % 2 else get_prompt(rid, modern=modern))
            answer = (await stdio.until(rid))[0]
            checker.response("resources/read" if rid % 2 else "prompts/get", answer)
            assert "result" in answer, answer
        await stdio.send(get_prompt(21, modern=modern))
        refused = (await stdio.until(21))[0]
        checker.response("prompts/get", refused)
        refused_for(refused["error"], limit="max_reads_per_minute")
        await stdio.send(call(22, "hello", modern=modern))
        assert (await stdio.until(22))[0]["result"]["content"][0]["text"] == "hello"
