"""The floor: a canned ASGI app that answers the benchmark's requests with fixed bytes.

It does no MCP work at all (no JSON parsing, no checks, no cryptography): it reads the
body, picks one of three prerecorded responses (the shapes mcp-elicit sends for the
first call, the retry and ``tools/list``) and splices in the request id, so the load
generator's checks pass. Whatever a real server costs above this is its own work; this
is what uvicorn, httptools, uvloop and the ASGI calling convention cost per request.
Served by uvicorn as ``floor:app``.
"""

from __future__ import annotations

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
