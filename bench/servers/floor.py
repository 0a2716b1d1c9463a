"""The floor: a canned ASGI app that answers the benchmark's requests with fixed bytes.

It does no MCP work at all (no JSON parsing, no checks, no cryptography): it reads the
body, picks one of three prerecorded responses (the shapes mcp-elicit sends for the
first call, the retry and ``tools/list``) and splices in the request id, so the load
generator's checks pass. Whatever a real server costs above this is its own work; this
is what uvicorn, httptools, uvloop and the ASGI calling convention cost per request.
Served by uvicorn as ``floor:app``.

With ``BENCH_FLOOR_WORK_US=N`` it also does N µs of plain Python per request (building a
small dict, repeated; the repeat count is calibrated when the module loads, timed alone
like a micro-benchmark). The benchmark uses this to show how the CPU per round of this
stack grows with the work an application does per request, which is what the target
"CPU per round no more than twice the floor's" has to be read against.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]

_META = b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"0.1.0"}}'
_STATE = b"v2.00000000." + b"QUJD" * 31  # the length of a real token for this workload
INPUT_REQUIRED = (
    b'{"resultType":"input_required","inputRequests":{"elicit-1":{"method":"elicitation/create",'
    b'"params":{"mode":"form","message":"Which region?","requestedSchema":{"type":"object",'
    b'"properties":{"region":{"type":"string"}},"required":["region"]}}}},"requestState":"'
    + _STATE
    + b'",'
    + _META
    + b"}}"
)
COMPLETE = (
    b'{"content":[{"type":"text","text":"Provisioned web-1 in eu-west-1"}],"resultType":"complete",'
    + _META
    + b"}}"
)
TOOLS = (
    b'{"tools":[{"name":"provision","description":"Provision name, asking the user which region '
    b'to put it in.","inputSchema":{"properties":{"name":{"type":"string"}},"required":["name"],'
    b'"type":"object"}}],"resultType":"complete",' + _META + b',"ttlMs":0,"cacheScope":"private"}}'
)


def _unit_of_work() -> int:
    table = {}
    for i in range(16):
        table[i] = (i, "x")
    return len(table)


def _units_for(us: float) -> int:
    """How many units of work take ``us`` microseconds of CPU on this machine, alone."""
    if us <= 0:
        return 0
    for _ in range(2000):  # warm up
        _unit_of_work()
    best = float("inf")
    for _ in range(5):
        start = time.process_time_ns()
        for _ in range(20000):
            _unit_of_work()
        best = min(best, (time.process_time_ns() - start) / 20000 / 1e3)
    return max(1, round(us / best))


WORK_US = float(os.environ.get("BENCH_FLOOR_WORK_US", "0"))
_UNITS = _units_for(WORK_US)
if _UNITS:
    print(f"floor: {WORK_US:g} us of work per request = {_UNITS} units", file=sys.stderr)


def _request_id(body: bytes) -> bytes:
    start = body.find(b'"id":')
    if start < 0:
        return b"null"
    start += 5
    end = body.find(b",", start)
    return body[start:end]


async def app(
    scope: Scope,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """Answer every POST with canned bytes; answer lifespan events."""
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    for _ in range(_UNITS):
        _unit_of_work()
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body", False):
            break
    if b'"inputResponses"' in body:
        result = COMPLETE
    elif b'"tools/list"' in body:
        result = TOOLS
    else:
        result = INPUT_REQUIRED
    payload = b'{"jsonrpc":"2.0","id":' + _request_id(body) + b',"result":' + result
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
