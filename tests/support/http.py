"""A test client for Streamable HTTP (2026-07-28) that checks every message it receives.

``McpHttp.request`` builds a request with its ``_meta`` and the mirrored headers
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``), any of which a test can override
or drop, and returns a ``Reply``. ``McpHttp.post`` sends raw bytes. Either way, every
JSON-RPC message in the answer (the JSON body, or each SSE event) is checked against the
official schema by a ``WireChecker``, and an SSE stream must be notifications followed by
exactly one response. Non-JSON answers (405, 404 on another path) are returned unchecked.
"""

from __future__ import annotations

import base64
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from support.wire import REQUESTS, RESULTS, WireChecker

VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"
ACCEPT_BOTH = "application/json, text/event-stream"
DROP = object()  # a header value meaning "leave this header out"


def sentinel(value: str) -> str:
    """The Base64 sentinel form of a header value."""
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def meta(capabilities: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        META_VERSION: VERSION,
        META_CAPS: dict(capabilities) if capabilities is not None else {"elicitation": {}},
        META_INFO: {"name": "transport-tests", "version": "1.0"},
    }
    out.update(extra)
    return out


def mirrored_headers(method: str, params: Mapping[str, Any] | None, version: str = VERSION) -> dict[str, str]:
    """The request headers a conforming client sends for this body."""
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT_BOTH,
        "MCP-Protocol-Version": version,
        "Mcp-Method": method,
    }
    source = None
    if params is not None and method in ("tools/call", "prompts/get"):
        source = params.get("name")
    elif params is not None and method == "resources/read":
        source = params.get("uri")
    if isinstance(source, str):
        plain = source.isascii() and source.isprintable() and source == source.strip()
        headers["Mcp-Name"] = source if plain and not source.startswith("=?base64?") else sentinel(source)
    return headers


def parse_sse(text: str) -> list[str]:
    """The data of each event of a complete SSE body (comments and other fields skipped)."""
    events: list[str] = []
    data: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line:
            if data:
                events.append("\n".join(data))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    assert not data, f"the stream ended inside an event: {text[-200:]!r}"
    return events


@dataclass
class Reply:
    status: int
    headers: httpx.Headers
    body: bytes
    #: Every JSON-RPC message received, in order (one for JSON, each event for SSE).
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    @property
    def sse(self) -> bool:
        return self.content_type == "text/event-stream"

    @property
    def message(self) -> dict[str, Any]:
        """The JSON-RPC response (the last message)."""
        assert self.messages, f"no JSON-RPC message in a {self.status} reply: {self.body[:300]!r}"
        return self.messages[-1]

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return self.messages[:-1]

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.message, self.message
        result: dict[str, Any] = self.message["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.message, self.message
        error: dict[str, Any] = self.message["error"]
        return error


#: Schema definitions of specific errors: whole responses, or just the ``error`` member.
ERROR_RESPONSES = {
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}
ERROR_OBJECTS = {
    -32700: "ParseError",
    -32600: "InvalidRequestError",
    -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError",
    -32603: "InternalError",
}


#: Revisions before 2026-07-28: a client of one of them opens with ``initialize``.
HANDSHAKE_VERSIONS = frozenset({"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"})
#: What a client of a handshake revision sends before it has a session: ``initialize``,
#: and ``ping``, which 2025-11-25 allows before it (2026-07-28 has no ``ping``).
SESSIONLESS_METHODS = frozenset({"initialize", "ping"})


def answered_revision(body: object, headers: Mapping[str, str]) -> str:
    """The revision whose rules a dual-era server answers ``body`` (a decoded POST body)
    by, sent with ``headers``, outside any session (2026-07-28, *Versioning: Backward
    Compatibility*; Streamable HTTP, *Protocol Version Header*):

    * a request whose ``_meta`` names a protocol version is that era's: 2026-07-28;
    * without one, an ``MCP-Protocol-Version`` header names the revision (a version the
      server does not know is refused with the 2026-07-28 error that lists its own);
    * with neither, ``initialize`` and ``ping`` are a 2025-11-25 client's, and anything
      else is a 2026-07-28 request missing its ``_meta``, refused as such.

    Anything that is not a request (a notification, a response, not JSON-RPC at all) gets
    an error that both revisions define the same way: 2026-07-28, whose schema names each
    error."""
    if not isinstance(body, dict) or not isinstance(body.get("method"), str) or "id" not in body:
        return VERSION
    params = body.get("params")
    meta_ = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta_, dict) and META_VERSION in meta_:
        return VERSION
    named = [value for name, value in headers.items() if name.lower() == "mcp-protocol-version"]
    if named:
        version = named[0].strip(" \t")
        return version if version in HANDSHAKE_VERSIONS else VERSION
    return "2025-11-25" if body["method"] in SESSIONLESS_METHODS else VERSION


def check_error(wire: WireChecker, message: Mapping[str, Any]) -> None:
    """An error response, against the generic and the code's own definition. The
    definitions of the standard JSON-RPC codes are 2026-07-28's (2025-11-25 has only the
    generic one); those of the codes 2026-07-28 added are required in any revision, so a
    2025-11-25 answer carrying one of them fails as undefined there."""
    wire.response("", message)
    code = message["error"]["code"]
    if code in ERROR_RESPONSES:
        wire._validate(message, ERROR_RESPONSES[code])
    elif code in ERROR_OBJECTS and ERROR_OBJECTS[code] in wire.defs:
        wire._validate(message["error"], ERROR_OBJECTS[code])


def check_messages(wire: WireChecker, method: str | None, messages: list[dict[str, Any]]) -> None:
    """Check a reply's messages: notifications first, one response last, all schema-valid.

    ``method`` is the request's method when the body was readable as a request of a known
    method; a response to anything else must be an error.
    """
    assert messages, "a reply with no JSON-RPC message"
    *notes, last = messages
    for note in notes:
        assert "method" in note and "id" not in note, f"not a notification: {note}"
        wire.notification(note)
    assert "method" not in last, f"the server sent a request: {last}"
    if "error" in last:
        check_error(wire, last)
    else:
        assert method in RESULTS, f"a result for a request of unknown method {method!r}: {last}"
        wire.response(method, last)


def build_request(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    rid: str | int,
    meta_: Mapping[str, Any] | object | None = None,
    headers: Mapping[str, object] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """A request (params plus ``_meta``) and its mirrored headers. ``meta_=DROP`` leaves
    ``_meta`` out; ``headers`` override the mirrored ones, a value of ``DROP`` removes one."""
    body = dict(params or {})
    if meta_ is not DROP:
        body["_meta"] = dict(meta_) if isinstance(meta_, Mapping) else meta()
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}
    sent = mirrored_headers(method, body)
    for name, value in (headers or {}).items():
        for existing in [k for k in sent if k.lower() == name.lower()]:
            del sent[existing]
        if value is not DROP:
            assert isinstance(value, str)
            sent[name] = value
    return message, sent


class McpHttp:
    """Talks to one MCP endpoint over real HTTP (or an ASGI transport)."""

    def __init__(self, client: httpx.AsyncClient, url: str, wire: WireChecker) -> None:
        self.client = client
        self.url = url
        self.wire = wire
        self.ids = itertools.count(1)

    async def post(
        self,
        body: bytes,
        headers: Mapping[str, str],
        *,
        method: str | None = None,
        url: str | None = None,
    ) -> Reply:
        """POST raw bytes; check the JSON-RPC answer (``method`` as in ``check_messages``)."""
        response = await self.client.post(url or self.url, content=body, headers=dict(headers))
        return self.checked(response, method)

    def checked(self, response: httpx.Response, method: str | None) -> Reply:
        reply = Reply(response.status_code, response.headers, response.content)
        assert reply.status != 500, reply.body
        if reply.sse:
            assert reply.status == 200
            reply.messages = [orjson.loads(data) for data in parse_sse(response.text)]
            assert response.headers.get("x-accel-buffering") == "no"
        elif reply.content_type == "application/json":
            reply.messages = [orjson.loads(reply.body)]
        if reply.messages:
            check_messages(self.wire, method, reply.messages)
        return reply

    def build(
        self, method: str, params: Mapping[str, Any] | None = None, **kw: Any
    ) -> tuple[dict[str, Any], dict[str, str]]:
        kw["rid"] = next(self.ids) if kw.get("rid") is None else kw["rid"]
        return build_request(method, params, **kw)

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        rid: str | int | None = None,
        meta_: Mapping[str, Any] | object | None = None,
        headers: Mapping[str, object] | None = None,
        malformed: bool = False,
        refused: bool = False,
    ) -> Reply:
        """Send a request; unless ``malformed`` (sent wrong on purpose), the request itself
        must be schema-valid too. The answer must echo the request's id, unless it is
        ``refused`` before the body is read (then it must have no id)."""
        message, sent = self.build(method, params, rid=rid, meta_=meta_, headers=headers)
        if not malformed and REQUESTS.get(method) in self.wire.defs:
            self.wire.request(message)
        reply = await self.post(orjson.dumps(message), sent, method=method)
        if reply.messages:
            expected = None if refused else message["id"]
            assert reply.message.get("id") == expected, (expected, reply.message)
        return reply

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None, **kw: Any) -> Reply:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        params.update(kw.pop("extra", {}))
        return await self.request("tools/call", params, **kw)

    async def stream(
        self, method: str, params: Mapping[str, Any] | None = None, **kw: Any
    ) -> tuple[Reply, list[float]]:
        """Like ``request``, reading the body as it arrives; also return when each SSE event
        arrived (``time.monotonic()``)."""
        message, sent = self.build(method, params, **kw)
        times: list[float] = []
        chunks: list[bytes] = []
        async with self.client.stream("POST", self.url, content=orjson.dumps(message), headers=sent) as r:
            async for chunk in r.aiter_bytes():
                chunks.append(chunk)
                times.extend(time.monotonic() for _ in range(chunk.count(b"\n\n")))
            response = httpx.Response(r.status_code, headers=r.headers, content=b"".join(chunks))
        return self.checked(response, method), times


def raw_request(port: int, body: bytes, headers: Mapping[str, str], *, length: int | None = None) -> bytes:
    """The bytes of a POST to ``/mcp`` (``length`` overrides the declared Content-Length)."""
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Content-Length: {len(body) if length is None else length}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
