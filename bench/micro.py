"""Micro-benchmarks: the per-request pieces of mcp-elicit's work, timed alone.

* sealing plus opening a ``requestState`` of 200 bytes and of 4 KiB, next to a bare
  AES-256-GCM encrypt+decrypt of the same bytes (fresh 12-byte nonce, no associated data)
  with the same ``cryptography`` build: the difference is what the envelope costs
  (binding, expiry, base64, checks);
* computing a request's binding (the SHA-256 of its canonical arguments);
* decoding and checking a ``tools/call`` request (JSON-RPC decode plus the 2026-07-28
  ``_meta``/header checks) as the HTTP transport does;
* building the form ``Form(region=String())`` and validating an answer against it;
* one whole round (the call and the retry) through mcp-elicit's ASGI app, in process,
  with no HTTP server and no network, next to the same through the canned floor app:
  the difference is the work the application does per round, without uvicorn;
* one ``tools/call`` of a tool that asks nothing, the same way: the fixed cost of a call
  in mcp-elicit, before any question;
* the same round entered one layer further in, each time with the same request bodies:
  at ``Server.respond`` (the HTTP transport left out: JSON-RPC decode, checks, handler,
  encode) and at ``Server.handle`` (decode and ``check_modern`` done outside the timing:
  the dispatch, the replay engine, the handler, the sealing). The differences between
  the three say what each layer costs per round.

``--sdk`` times the official SDK's ``AESGCMRequestStateCodec`` seal+unseal of the same
payloads instead (run it with the SDK's interpreter), as a reference point.

Each figure is the median of ``--repeat`` timings of ``--number`` calls, in µs per call,
with the min and max. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

KEY = bytes(range(32))
SIZES = {"200 B": 200, "4 KiB": 4096}


def timed(fn: Callable[[], object], *, number: int, repeat: int) -> dict[str, float]:
    """µs per call of ``fn``: median, min and max over ``repeat`` loops of ``number`` calls."""
    fn()  # warm caches and lazy imports
    samples = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            fn()
        samples.append((clock() - start) / number / 1e3)
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def timed_in_turn(
    fns: dict[str, Callable[[], object]], *, number: int, repeat: int
) -> dict[str, dict[str, float]]:
    """µs per call of each of ``fns``, timed in turn (A B, B A, A B ...) so that a slow
    spell of the machine falls on every one alike: a ratio of two of them then holds on a
    noisy machine, where timing one after the other would not. Median, min and max over
    ``repeat`` loops of ``number`` calls each."""
    for fn in fns.values():
        fn()  # warm caches and lazy imports
    items = list(fns.items())
    samples: dict[str, list[float]] = {label: [] for label in fns}
    clock = time.perf_counter_ns
    for turn in range(repeat):
        for label, fn in items if turn % 2 == 0 else reversed(items):
            start = clock()
            for _ in range(number):
                fn()
            samples[label].append((clock() - start) / number / 1e3)
    return {
        label: {"median": statistics.median(s), "min": min(s), "max": max(s)} for label, s in samples.items()
    }


def bare_aesgcm(payload: bytes) -> Callable[[], object]:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    aead = AESGCM(KEY)

    def run() -> object:
        nonce = os.urandom(12)
        return aead.decrypt(nonce, aead.encrypt(nonce, payload, None), None)

    return run


def elicit_benchmarks(number: int, repeat: int) -> dict[str, Any]:
    from mcp_elicit.core.mrtr import binding_for
    from mcp_elicit.core.server import ServerCore, ServerIdentity
    from mcp_elicit.forms import Form, String
    from mcp_elicit.sealing import KeyRing, StateSealer
    from mcp_elicit.wire import jsonrpc

    sealer = StateSealer(KeyRing([KEY]), server_id="bench/")
    arguments = {"name": "web-1"}
    binding = binding_for("tools/call", {"name": "provision", "arguments": arguments}, None)
    now = time.time()
    out: dict[str, Any] = {}
    for label, size in SIZES.items():
        payload = os.urandom(size)

        def seal_open(payload: bytes = payload) -> object:
            return sealer.open(sealer.seal(payload, binding, now=now), binding, now=now)

        # Finer turns than the other figures (a quarter of the calls, four times the
        # timings): the target is a ratio of these two.
        out |= timed_in_turn(
            {
                f"requestState seal+open, {label}": seal_open,
                f"bare AES-GCM encrypt+decrypt, {label}": bare_aesgcm(payload),
            },
            number=max(1, number // 4),
            repeat=4 * repeat,
        )

    params = {"name": "provision", "arguments": arguments}
    out["request binding (arguments digest)"] = timed(
        lambda: binding_for("tools/call", params, None), number=number, repeat=repeat
    )

    token = sealer.seal(b'{"v":1,"r":1,"a":{},"p":{"elicit-1":"x"}}', binding, now=now)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "provision",
                "arguments": arguments,
                "inputResponses": {"elicit-1": {"action": "accept", "content": {"region": "eu-west-1"}}},
                "requestState": token,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                },
            },
        }
    ).encode()
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "provision",
    }
    core = ServerCore(ServerIdentity(name="bench", version="0"))

    def parse_check() -> object:
        message = jsonrpc.decode(body)
        assert isinstance(message, jsonrpc.Request)
        return core.check_modern(message, headers)

    out["tools/call decode + check (the retry, 2026-07-28)"] = timed(
        parse_check, number=number, repeat=repeat
    )
    form = Form(region=String())
    answer = {"region": "eu-west-1"}
    out["form answer validation"] = timed(lambda: form.validate(answer), number=number, repeat=repeat)
    out["form build: Form(region=String())"] = timed(
        lambda: Form(region=String()), number=number, repeat=repeat
    )
    return out


_ASGI_META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},'
    b'"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}'
)


async def _asgi_post(app: Any, body: bytes) -> bytes:
    """POST ``body`` to ``/mcp`` of ``app`` as uvicorn would; the response body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", b"2026-07-28"),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"provision"),
            (b"content-length", b"%d" % len(body)),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    events = [{"type": "http.request", "body": body, "more_body": False}]
    out: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if events:
            return events.pop()
        await asyncio.Event().wait()  # no disconnect while the request runs
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            out.append(message.get("body", b""))

    await app(scope, receive, send)
    return b"".join(out)


_CALL_PARAMS = b'{"name":"provision","arguments":{"name":"web-1"},'


def _first_body(rid: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s%s}}' % (rid, _CALL_PARAMS, _ASGI_META)


def _retry_body(rid: int, result: dict[str, Any]) -> bytes:
    """The retry answering the ``input_required`` ``result`` of the first call."""
    import orjson

    (key,) = result["inputRequests"]
    answer = b'{"action":"accept","content":{"region":"eu-west-1"}}'
    retry = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s"inputResponses":{%s:%s},' % (
        rid,
        _CALL_PARAMS,
        orjson.dumps(key),
        answer,
    )
    return retry + b'"requestState":%s,%s}}' % (orjson.dumps(result["requestState"]), _ASGI_META)


def _check_final(final: dict[str, Any]) -> None:
    if final["content"][0]["text"] != "Provisioned web-1 in eu-west-1":
        raise AssertionError(f"unexpected result: {final}")


async def _asgi_round(app: Any, rid: int) -> None:
    import orjson

    result = orjson.loads(await _asgi_post(app, _first_body(rid)))["result"]
    _check_final(orjson.loads(await _asgi_post(app, _retry_body(rid + 1, result)))["result"])


#: The headers a 2026-07-28 client sends with the workload's tools/call, decoded.
_HEADERS = {
    "host": "127.0.0.1:8000",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "provision",
}


async def _no_send(message: dict[str, Any]) -> None:
    """An ASGI ``send`` that drops what it is given (nothing streams in this workload)."""


async def _respond_round(server: Any, rid: int) -> None:
    """One round entered at ``Server.respond``: decode, checks, handler, encode."""
    import orjson

    from mcp_elicit.transports.http_exchange import Exchange
    from mcp_elicit.wire import jsonrpc

    results = []
    for body in (_first_body(rid), None):
        if body is None:
            body = _retry_body(rid + 1, results[0])
        message = jsonrpc.decode(body)
        assert isinstance(message, jsonrpc.Request)
        payload, _ = await server.respond(message, channel=Exchange(_no_send, True), headers=_HEADERS)
        results.append(orjson.loads(payload)["result"])
    _check_final(results[1])


def _handle_calls(server: Any, rid: int) -> tuple[Any, Callable[[dict[str, Any]], Any]]:
    """The first call of a round, checked, and how to check its retry (decode and
    ``check_modern``, left out of the ``handle`` figure)."""
    from mcp_elicit.wire import jsonrpc

    def checked(body: bytes) -> Any:
        message = jsonrpc.decode(body)
        assert isinstance(message, jsonrpc.Request)
        return server.core.check_modern(message, _HEADERS)

    return checked(_first_body(rid)), lambda result: checked(_retry_body(rid + 1, result))


def asgi_benchmarks(number: int, repeat: int) -> dict[str, Any]:
    """CPU µs per round through each ASGI app, in process (median, min, max)."""
    sys.path.insert(0, str(Path(__file__).parent / "servers"))
    import elicit_server
    import flat
    import floor

    try:
        import uvloop

        new_loop: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - the project venv has uvloop
        new_loop = asyncio.new_event_loop

    async def timed_rounds(one_round: Callable[[int], Awaitable[None]]) -> list[float]:
        for rid in range(0, 2 * number, 2):  # warm up
            await one_round(rid)
        samples = []
        for _ in range(repeat):
            start = time.process_time_ns()
            for rid in range(0, 2 * number, 2):
                await one_round(rid)
            samples.append((time.process_time_ns() - start) / number / 1e3)
        return samples

    async def rounds(app: Any) -> list[float]:
        return await timed_rounds(lambda rid: _asgi_round(app, rid))

    call = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"provision",'
    call += b'"arguments":{"name":"web-1"},%s}}' % _ASGI_META

    async def calls(app: Any) -> list[float]:
        for _ in range(number):  # warm up
            await _asgi_post(app, call)
        samples = []
        for _ in range(repeat):
            start = time.process_time_ns()
            for _ in range(number):
                await _asgi_post(app, call)
            samples.append((time.process_time_ns() - start) / number / 1e3)
        return samples

    async def respond_rounds() -> list[float]:
        return await timed_rounds(lambda rid: _respond_round(elicit_server.server, rid))

    async def handle_rounds() -> list[float]:
        from mcp_elicit.transports.http_exchange import Exchange

        server = elicit_server.server
        samples = []
        for run in range(repeat + 1):  # the first run warms up
            spent = 0
            for rid in range(0, 2 * number, 2):
                first, retry_of = _handle_calls(server, rid)
                start = time.process_time_ns()
                result = await server.handle(first, channel=Exchange(_no_send, True), headers=_HEADERS)
                spent += time.process_time_ns() - start
                retry = retry_of(result)
                start = time.process_time_ns()
                final = await server.handle(retry, channel=Exchange(_no_send, True), headers=_HEADERS)
                spent += time.process_time_ns() - start
                _check_final(final)
            if run:
                samples.append(spent / number / 1e3)
        return samples

    out: dict[str, Any] = {}
    loop = new_loop()
    try:
        for label, app in (("mcp-elicit", elicit_server.app), ("flat", flat.app), ("floor", floor.app)):
            samples = loop.run_until_complete(rounds(app))
            out[f"{ASGI_ROUND}, {label}"] = {
                "median": statistics.median(samples),
                "min": min(samples),
                "max": max(samples),
            }
        for label, measure in ((ASGI_RESPOND, respond_rounds), (ASGI_HANDLE, handle_rounds)):
            samples = loop.run_until_complete(measure())
            out[label] = {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}
        plain = _plain_app()
        answer = json.loads(loop.run_until_complete(_asgi_post(plain, call)))
        if answer["result"]["content"][0]["text"] != "Provisioned web-1":
            raise AssertionError(f"unexpected result: {answer}")
        for label, app in (("mcp-elicit", plain), ("floor", floor.app)):
            samples = loop.run_until_complete(calls(app))
            out[f"{ASGI_CALL}, {label}"] = {
                "median": statistics.median(samples),
                "min": min(samples),
                "max": max(samples),
            }
    finally:
        loop.close()
    return out


def _plain_app() -> Any:
    """mcp-elicit serving a ``provision`` that asks nothing: the fixed cost of a tool call."""
    from mcp_elicit import KeyRing, Server
    from mcp_elicit.transports.http_server import StreamableHTTP

    server = Server("bench-plain", state_keys=KeyRing([KEY]))

    @server.tool()
    async def provision(name: str) -> str:
        """Provision ``name`` without asking anything."""
        return f"Provisioned {name}"

    return StreamableHTTP(server)


#: The label of the in-process round figures; ", mcp-elicit" or ", floor" follows.
ASGI_ROUND = "one round through the ASGI app in process (call + retry)"  # = report_calibration.ASGI_ROUND
#: The same round entered at ``Server.respond``: no HTTP transport.
ASGI_RESPOND = "one round entered at Server.respond (no HTTP transport)"
#: The same round entered at ``Server.handle``: decode and checks done outside the timing.
ASGI_HANDLE = "one round entered at Server.handle (decode and checks left out)"
#: The label of the in-process figures of one tools/call that asks nothing.
ASGI_CALL = (
    "one tools/call that asks nothing, through the ASGI app in process"  # = report_calibration.ASGI_CALL
)


def sdk_benchmarks(number: int, repeat: int) -> dict[str, Any]:
    from mcp.server.request_state import AESGCMRequestStateCodec

    codec = AESGCMRequestStateCodec([KEY])
    out: dict[str, Any] = {}
    for label, size in SIZES.items():
        payload = os.urandom(size)
        out |= timed_in_turn(
            {
                f"SDK codec seal+unseal, {label}": lambda payload=payload: codec.unseal(codec.seal(payload)),
                f"bare AES-GCM encrypt+decrypt, {label}": bare_aesgcm(payload),
            },
            number=max(1, number // 4),
            repeat=4 * repeat,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=7, help="timings per figure")
    parser.add_argument("--sdk", action="store_true", help="time the official SDK's codec instead")
    parser.add_argument("--cpu", type=int, help="pin to this core")
    args = parser.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    if args.sdk:
        figures = sdk_benchmarks(args.number, args.repeat)
    else:
        figures = elicit_benchmarks(args.number, args.repeat)
        figures.update(asgi_benchmarks(max(1, args.number // 10), args.repeat))
    json.dump(figures, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
