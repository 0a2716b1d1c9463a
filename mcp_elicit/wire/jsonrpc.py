"""JSON-RPC 2.0 envelopes: decoding a message off the wire, encoding one onto it.

Rules:

* ``decode`` takes the bytes of exactly one message and returns a ``Request``,
  ``Notification``, ``Response`` or ``ErrorResponse``, or raises ``ParseError`` (not JSON)
  or ``InvalidRequest`` (JSON, not JSON-RPC). The raised error carries the request id in
  ``request_id`` whenever one could be read, so the reply can echo it. A message shaped
  like a response (``result`` or ``error``, no ``method``) that is malformed raises
  ``InvalidResponse``: its id is the id of a request it answers, not one to echo.
* Ids are strings or integers, never booleans or floats. An error response whose request
  id could not be read has no ``id`` (MCP's schema forbids a null one); one received with
  ``"id": null`` is still understood.
* Batches (JSON arrays) are not part of MCP since 2025-06-18 and are refused.
* The params of a request that may ask questions (``tools/call``, ``prompts/get``,
  ``resources/read``) nest at most ``MAX_PARAMS_DEPTH`` levels of objects and arrays,
  else ``InvalidParams`` (-32602) with its id, before any handler runs: a ``requestState``
  is bound to a digest of the arguments, and the encoder that digests them stops short
  of the 1024 levels a JSON message may hold. Only a message long enough to nest that
  deep (two bytes a level) is looked at.
* ``encode`` is the only place that turns a message into bytes; it never emits NaN.
* JSON has one kind of number: a float with no fraction is the integer it equals
  (``integral``), as JSON Schema reads ``2.0``, and is written as one (``60``, not ``60.0``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeGuard

import orjson

from mcp_elicit.errors import InvalidParams, InvalidRequest, InvalidResponse, ParseError, ProtocolError

__all__ = [
    "ErrorResponse",
    "MAX_PARAMS_DEPTH",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "decode_value",
    "encode",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "integral",
    "nests_past",
]

RequestId: TypeAlias = str | int

#: The most levels of objects and arrays in the params of a request that may ask
#: questions (the params object the first); the standard library's JSON encoder, which
#: digests arguments orjson's (255 levels) cannot, reaches about 1000.
MAX_PARAMS_DEPTH: Final = 512
_LONG: Final = 2 * MAX_PARAMS_DEPTH  # bytes: each level takes two at least ("[]")
_BOUND_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})

# The envelopes are built once per message on every request's path, and a frozen
# dataclass's __init__ costs about three times a plain one's; nothing changes them after
# decoding (and they hold dicts, so they were never hashable).


@dataclass(slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(slots=True)
class Notification:
    method: str
    params: dict[str, Any] | None


@dataclass(slots=True)
class Response:
    id: RequestId
    result: dict[str, Any]


@dataclass(slots=True)
class ErrorResponse:
    id: RequestId | None
    error: dict[str, Any]


Message: TypeAlias = Request | Notification | Response | ErrorResponse


def _valid_id(value: object) -> TypeGuard[RequestId]:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _bad_id(kind: str, rid: object, *, null: bool = False) -> str:
    """Why ``rid`` is no id: a number that decoded to a float was written with a fraction or
    an exponent, or is an integer past 64 bits (decoded to the nearest float, which could
    not be echoed as sent), so the message names both."""
    allowed = "a string, an integer or null" if null else "a string or an integer"
    if isinstance(rid, float):
        allowed += " (an integer of at most 64 bits, written without a fraction or exponent)"
    return f'Invalid {kind}: "id" must be {allowed}'


def _invalid(message: str, rid: object = None) -> InvalidRequest:
    return InvalidRequest(message, request_id=rid if _valid_id(rid) else None)


def _invalid_response(message: str, rid: object = None) -> InvalidResponse:
    return InvalidResponse(message, request_id=rid if _valid_id(rid) else None)


def decode(data: bytes | bytearray | memoryview | str) -> Message:
    """Decode one JSON-RPC message."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"Parse error: the message is not valid JSON ({_why(data, exc)})") from None
    message = decode_value(value)
    # a message no longer than _LONG cannot nest too deeply: only a longer one is looked at
    if len(data) > _LONG:
        _check_nesting(message)
    return message


def _check_nesting(message: Message) -> None:
    """-32602 when ``message`` is a request that may ask questions whose params nest more
    than ``MAX_PARAMS_DEPTH`` levels. orjson's encoder looks first: it follows 255 levels,
    and params it takes cannot be too deep."""
    if not isinstance(message, Request) or message.method not in _BOUND_METHODS:
        return
    try:
        orjson.dumps(message.params)
    except orjson.JSONEncodeError:
        if nests_past(message.params, MAX_PARAMS_DEPTH):
            raise InvalidParams(
                f"Invalid params: the params of {message.method} are nested too deeply (at most "
                f"{MAX_PARAMS_DEPTH} levels of objects and arrays); a request that asks questions "
                "binds its requestState to its arguments: send them nested less deeply",
                request_id=message.id,
            ) from None


def nests_past(value: object, limit: int) -> bool:
    """Whether ``value`` (decoded JSON) nests objects and arrays more than ``limit`` deep."""
    level: list[object] = [value]
    for _ in range(limit):
        level = [
            child
            for node in level
            if isinstance(node, dict | list)
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, dict | list)
        ]
        if not level:
            return False
    return True


def integral(value: Any) -> Any:
    """``value`` as an integer when it is a float with no fraction (``2.0``: 2); else itself."""
    return int(value) if type(value) is float and value.is_integer() else value


def _why(data: bytes | bytearray | memoryview | str, exc: orjson.JSONDecodeError) -> str:
    """What is wrong with ``data``: orjson words bad UTF-8 as a surrogate problem."""
    if not isinstance(data, str):
        try:
            bytes(data).decode("utf-8")
        except UnicodeDecodeError as bad:
            return f"not UTF-8: byte 0x{bad.object[bad.start]:02x} at offset {bad.start}"
    return exc.msg


def decode_value(value: object) -> Message:
    """Classify an already-parsed JSON value as a JSON-RPC message."""
    if not isinstance(value, dict):
        if isinstance(value, list):
            raise _invalid(
                "Invalid request: JSON-RPC batches are not supported; send one message per request"
            )
        raise _invalid("Invalid request: a JSON-RPC message must be a JSON object")
    rid = value.get("id")
    if value.get("jsonrpc") != "2.0":
        if "method" not in value and ("result" in value or "error" in value):
            raise _invalid_response('Invalid response: "jsonrpc" must be "2.0"', rid)
        raise _invalid('Invalid request: "jsonrpc" must be "2.0"', rid)
    params = value.get("params")
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str) or not method:
            raise _invalid('Invalid request: "method" must be a non-empty string', rid)
        if params is not None and not isinstance(params, dict):
            raise _invalid('Invalid request: "params" must be an object when present', rid)
        if "id" not in value:
            return Notification(method, params)
        # The exact classes first: orjson makes no subclasses, and most ids pass with no call.
        if rid.__class__ is not int and rid.__class__ is not str and not _valid_id(rid):
            raise _invalid(_bad_id("request", rid))
        return Request(rid, method, params)
    if "result" in value:
        result = value["result"]
        if not _valid_id(rid):
            raise _invalid_response(_bad_id("response", rid))
        if not isinstance(result, dict):
            raise _invalid_response('Invalid response: "result" must be an object', rid)
        if "error" in value:
            raise _invalid_response('Invalid response: both "result" and "error"; a response has one', rid)
        return Response(rid, result)
    if "error" in value:
        error = value["error"]
        if rid is not None and not _valid_id(rid):
            raise _invalid_response(_bad_id("response", rid, null=True))
        if (
            not isinstance(error, dict)
            or not isinstance(error.get("code"), int)
            or not isinstance(error.get("message"), str)
        ):
            raise _invalid_response(
                'Invalid response: "error" must be an object with integer "code" and string "message"', rid
            )
        return ErrorResponse(rid, error)
    raise _invalid('Invalid request: a message needs "method", "result" or "error"', rid)


def encode(message: Mapping[str, Any]) -> bytes:
    """Encode a JSON value (a whole message) as compact UTF-8 JSON."""
    return orjson.dumps(message)


def encode_result(rid: RequestId, result: Mapping[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": result})


def encode_error(rid: RequestId | None, error: ProtocolError) -> bytes:
    """An error response. Without a readable request id it has no ``id`` member: MCP's
    ``JSONRPCErrorResponse`` has ``id?: RequestId``, which a null id would fail."""
    if rid is None:
        return orjson.dumps({"jsonrpc": "2.0", "error": error.to_error()})
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "error": error.to_error()})


def encode_request(rid: RequestId, method: str, params: Mapping[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return orjson.dumps(msg)


def encode_notification(method: str, params: Mapping[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return orjson.dumps(msg)
