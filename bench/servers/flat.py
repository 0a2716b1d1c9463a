"""A reference point, not a product: the benchmark's workload hand-flattened into one function.

It does, for this one tool only, the work a 2026-07-28 server cannot skip: the Host and
content-type checks, ``Accept``, the JSON-RPC envelope, the ``_meta`` (protocol version,
client capabilities and info) against the ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` headers, the arguments against the tool's schema, the elicitation
capability, a ``requestState`` sealed with AES-256-GCM bound to the method, the tool and
a SHA-256 of the arguments, with an expiry, opened and checked on the retry, the answer
checked against the form, and the JSON response. No framework: no handler coroutine, no
context, no dispatch, no revision other than 2026-07-28, one tool. A request it does not
expect gets a JSON-RPC error.

What it measures: what those checks and that cryptography cost on this stack when nothing
else runs, so how close a Python server can come to the canned floor. Served by uvicorn
as ``flat:app``.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
import pybase64
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]

_AEAD = AESGCM(bytes(range(32)))  # a fixed, obviously-not-secret key, as elicit_server's
_HEAD = "v1.bench."
_NONCE_PREFIX = os.urandom(8)
_counter = iter(range(1 << 32))
_nonce = struct.Struct(">8sI").pack
_expiry = struct.Struct(">d")
_TTL = 600.0
_VERSION = "2026-07-28"
_HOSTS = frozenset({b"127.0.0.1", b"localhost"})
_KEY = "elicit-1"
_SCHEMA = {"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}
_ASK = {
    _KEY: {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Which region?", "requestedSchema": _SCHEMA},
    }
}
_META = {"io.modelcontextprotocol/serverInfo": {"name": "bench-flat", "version": "0.1.0"}}
_TOOLS = {
    "tools": [
        {
            "name": "provision",
            "description": "Provision name, asking the user which region to put it in.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        }
    ],
    "resultType": "complete",
    "_meta": _META,
}


class Refused(Exception):
    def __init__(self, code: int, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.status = code, status


def _bad(message: str) -> Refused:
    return Refused(-32602, message)


def _answer(params: dict[str, Any], caps: dict[str, Any]) -> dict[str, Any]:
    """The result of ``tools/call provision``: ask for the region, or finish with it."""
    if params.get("name") != "provision":
        raise _bad("unknown tool")
    args = params.get("arguments")
    if type(args) is not dict or type(args.get("name")) is not str or len(args) != 1:
        raise _bad("provision takes one argument, name (a string)")
    bound = (
        b"tools/call\x00provision\x00"
        + hashlib.sha256(orjson.dumps(args, option=orjson.OPT_SORT_KEYS)).digest()
    )
    state = params.get("requestState")
    if state is None:
        if type(caps.get("elicitation")) is not dict:
            raise _bad("this tool needs the elicitation capability")
        nonce = _nonce(_NONCE_PREFIX, next(_counter))
        sealed = _AEAD.encrypt(nonce, _expiry.pack(time.time() + _TTL) + _KEY.encode(), bound)
        token = _HEAD + pybase64.b64encode_as_string(nonce + sealed)
        return {"resultType": "input_required", "inputRequests": _ASK, "requestState": token, "_meta": _META}
    if type(state) is not str or not state.startswith(_HEAD):
        raise _bad("invalid requestState")
    try:
        raw = pybase64.b64decode(state[len(_HEAD) :], validate=True)
        plain = _AEAD.decrypt(raw[:12], raw[12:], bound)
    except (ValueError, InvalidTag):
        raise _bad("invalid requestState") from None
    if _expiry.unpack_from(plain)[0] <= time.time():
        raise _bad("expired requestState")
    responses = params.get("inputResponses")
    answer = responses.get(plain[8:].decode()) if type(responses) is dict else None
    if type(answer) is not dict or answer.get("action") != "accept":
        raise _bad("the answer to the question asked is missing or not accepted")
    content = answer.get("content")
    if type(content) is not dict or type(content.get("region")) is not str or len(content) != 1:
        raise _bad("the answer does not match the form")
    text = f"Provisioned {args['name']} in {content['region']}"
    return {"content": [{"type": "text", "text": text}], "resultType": "complete", "_meta": _META}


def _respond(headers: dict[bytes, bytes], body: bytes) -> tuple[int, bytes]:
    rid: object = None
    try:
        host = headers.get(b"host", b"")
        if (host.rpartition(b":")[0] if b":" in host else host) not in _HOSTS:
            raise Refused(-32600, "Host not allowed", 403)
        if not headers.get(b"content-type", b"").startswith(b"application/json"):
            raise Refused(-32600, "Content-Type must be application/json", 415)
        if b"application/json" not in headers.get(b"accept", b""):
            raise Refused(-32600, "Accept must include application/json", 406)
        try:
            request = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise Refused(-32700, "Parse error") from None
        if type(request) is not dict or request.get("jsonrpc") != "2.0":
            raise Refused(-32600, "not a JSON-RPC 2.0 request")
        rid, method, params = request.get("id"), request.get("method"), request.get("params")
        if type(rid) not in (int, str) or type(method) is not str or type(params) is not dict:
            raise Refused(-32600, "a request needs an id, a method and params")
        meta = params.get("_meta")
        if type(meta) is not dict or meta.get("io.modelcontextprotocol/protocolVersion") != _VERSION:
            raise Refused(-32602, "_meta must carry protocolVersion 2026-07-28")
        if (
            headers.get(b"mcp-protocol-version") != b"2026-07-28"
            or headers.get(b"mcp-method") != method.encode()
        ):
            raise Refused(-32600, "MCP-Protocol-Version and Mcp-Method must match the body")
        caps, info = (
            meta.get("io.modelcontextprotocol/clientCapabilities"),
            meta.get("io.modelcontextprotocol/clientInfo"),
        )
        if type(caps) is not dict or type(info) is not dict or type(info.get("name")) is not str:
            raise Refused(-32602, "_meta must carry clientCapabilities and clientInfo")
        if method == "tools/list":
            result = _TOOLS
        elif method == "tools/call":
            if headers.get(b"mcp-name") != str(params.get("name")).encode():
                raise Refused(-32600, "Mcp-Name must match the tool's name")
            result = _answer(params, caps)
        else:
            raise Refused(-32601, "Method not found")
        return 200, orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": result})
    except Refused as exc:
        error = {"code": exc.code, "message": str(exc)}
        return exc.status, orjson.dumps({"jsonrpc": "2.0", "id": rid, "error": error})


async def app(
    scope: Scope,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """Answer every POST to /mcp as described above; answer lifespan events."""
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    headers = dict(scope["headers"])
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body", False):
            break
    if scope["method"] != "POST" or scope["path"] != "/mcp":
        status, payload = 404, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"POST /mcp"}}'
    else:
        status, payload = _respond(headers, body)
    response = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": status, "headers": response})
    await send({"type": "http.response.body", "body": payload})
