"""The JSON-RPC errors that go on the wire: ``ProtocolError`` and a class for each code
mcp-elicit sends or tells apart, each with the HTTP status a transport answers with when
the error is the whole response. A received error is rebuilt as the most specific class
(``ProtocolError.from_error``). Importable from ``mcp_elicit.errors``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mcp_elicit.errors.base import MCPElicitError

__all__ = [
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "InvalidRequestMeta",
    "InvalidRequestState",
    "InvalidResponse",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "PrincipalLimitReached",
    "ProtocolError",
    "RateLimited",
    "ResourceNotFound",
    "StoreUnavailable",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
]


class ProtocolError(MCPElicitError):
    """A JSON-RPC error response: ``code``, ``message``, optional ``data``.

    ``http_status`` is the status a Streamable HTTP transport answers with when this
    error is the whole response (200 when the spec asks for none in particular).
    ``added``: the client's words after the server's ("(HTTP 404 in a new session too: ...)")."""

    code: ClassVar[int] = -32603
    default_http_status: ClassVar[int] = 200
    added: str = ""  # shown whole where the server's words before it are cut short

    def __init__(
        self,
        message: str,
        data: Any = None,
        *,
        http_status: int | None = None,
        request_id: str | int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.http_status = self.default_http_status if http_status is None else http_status
        #: The id of the request this error answers, when the decoder could read one.
        self.request_id = request_id

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member. Its ``message`` is a string, as JSON-RPC's is,
        whatever a handler raising its own error gave (``InvalidParams(None)``: "None")."""
        message = self.message if isinstance(self.message, str) else str(self.message)
        error: dict[str, Any] = {"code": self.code, "message": message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @staticmethod
    def from_error(error: Mapping[str, Any]) -> ProtocolError:
        """Rebuild the most specific error class from a received JSON-RPC ``error`` member."""
        code = error.get("code")
        message = str(error.get("message", ""))
        data = error.get("data")
        if code == ResourceNotFound.HANDSHAKE_CODE:  # 2025-11-25 and earlier: not found
            uri = data.get("uri") if isinstance(data, Mapping) else None
            found = ResourceNotFound(uri if isinstance(uri, str) else "")
            found.message, found.data, found.args = message, data, (message,)  # the server's words
            return found.for_handshake()
        cls = _BY_CODE.get(code) if isinstance(code, int) else None
        after = data.get("retryAfter") if isinstance(data, Mapping) else None
        if type(after) is bool or not isinstance(after, int | float):
            after = None
        if cls is InvalidRequest and after is not None and after >= 0:  # a wait, not a past
            cls = RateLimited
        if cls is None:
            err = ProtocolError(message, data)
            err.code = code if isinstance(code, int) else -32603  # type: ignore[misc]
            return err
        return cls(message, data)


class ParseError(ProtocolError):
    """The bytes received are not valid JSON."""

    code = -32700
    default_http_status = 400


class InvalidRequest(ProtocolError):
    """Valid JSON that is not a valid JSON-RPC request or notification."""

    code = -32600
    default_http_status = 400


class InvalidResponse(InvalidRequest):
    """A malformed response (``result``/``error``, no ``method``); ``request_id``: its id, or None."""


class PrincipalLimitReached(InvalidRequest):
    """The caller holds its whole share of something the server bounds per principal
    (sessions, subscriptions, URL-mode pages; unauthenticated callers are one): its own
    doing, which it can undo, not the server's fault. HTTP 429; ``data`` names the option
    or budget (``limit``) and its value (``most``; a rate limit: ``retryAfter``, whole
    seconds). A server at its capacity for everyone is not this: -32603, HTTP 503."""

    default_http_status = 429


class RateLimited(PrincipalLimitReached):
    """Too many requests of a kind (``Server(max_calls_per_minute=)``); a client raises it
    for a -32600 whose ``data`` has a number ``retryAfter`` (0 or more), whatever the HTTP status.
    ``retry_after``: seconds to wait; ``limit``: the budget's name (``data.limit``)."""

    def __init__(self, message: str, data: Any = None, **options: Any) -> None:
        super().__init__(message, data, **options)
        after, limit = (data.get("retryAfter"), data.get("limit")) if isinstance(data, Mapping) else (0, None)
        self.retry_after: float = after if type(after) is int or type(after) is float else 0
        self.limit: str | None = limit if isinstance(limit, str) else None


class MethodNotFound(ProtocolError):
    """The method does not exist, or does not exist in the revision spoken."""

    code = -32601
    default_http_status = 404


class InvalidParams(ProtocolError):
    """The params of a request have the wrong shape or types."""

    code = -32602


class InvalidRequestMeta(InvalidParams):
    """A required per-request ``_meta`` field is missing or malformed (2026-07-28)."""

    default_http_status = 400


#: How much of a URI an error message quotes (``data`` carries it whole) unless ``shown`` is given.
_QUOTED = 200


class ResourceNotFound(InvalidParams):
    """``resources/read`` named a URI nothing serves: -32602 from 2026-07-28 on; -32002 before
    (``for_handshake()``, 2025-11-25 and earlier): ``code`` is the one sent (or received)."""

    HANDSHAKE_CODE: ClassVar[int] = -32002

    def __init__(
        self, uri: str, reason: str | None = None, *, handshake: bool = False, shown: str = ""
    ) -> None:
        shown = shown or (uri if len(uri) <= _QUOTED else f"{uri[:_QUOTED]}… ({len(uri)} characters)")
        message = f"Resource not found: {shown}" + (f" ({reason})" if reason else "")
        super().__init__(message, {"uri": uri})
        self.uri, self.reason, self.shown, self.handshake = uri, reason, shown, handshake
        if handshake:
            self.code = self.HANDSHAKE_CODE  # type: ignore[misc]

    def for_handshake(self) -> ResourceNotFound:
        """The same error as a handshake session answers it: -32002, message and data kept."""
        found = ResourceNotFound(self.uri, self.reason, handshake=True, shown=self.shown)
        found.message, found.data, found.args = self.message, self.data, self.args
        return found


class InvalidRequestState(InvalidParams):
    """A ``requestState`` that failed verification.

    Every failure looks the same on the wire; ``reason`` says what went wrong and is for
    the server's own log only.
    """

    WIRE_MESSAGE: ClassVar[str] = "Invalid or expired requestState"

    def __init__(self, reason: str) -> None:
        super().__init__(self.WIRE_MESSAGE)
        self.reason = reason


class InternalError(ProtocolError):
    """Something failed on our side."""

    code = -32603


class StoreUnavailable(InternalError):
    """The server's state store (URL-mode flows, secrets, tokens, single-use markers)
    failed: down, silent, refusing writes. Our side, and passing: HTTP 503, try again. The
    message never names the store (its address is the operator's business); the log does."""

    default_http_status = 503
    WIRE_MESSAGE: ClassVar[str] = "The server cannot reach its storage right now; try again in a moment"

    def __init__(self) -> None:
        super().__init__(self.WIRE_MESSAGE)


class HeaderMismatch(ProtocolError):
    """HTTP headers missing, malformed, or disagreeing with the body (2026-07-28)."""

    code = -32020
    default_http_status = 400


class MissingClientCapability(ProtocolError):
    """Handling the request needs a client capability the request did not declare."""

    code = -32021
    default_http_status = 400

    @classmethod
    def requiring(cls, required: Mapping[str, Any]) -> MissingClientCapability:
        names = ", ".join(paths := _capability_paths(required))  # several: questions gathered together
        return cls(
            f"This request needs the client {'capabilities' if paths[1:] else 'capability'} {names}, which the client did not declare",
            {"requiredCapabilities": dict(required)},
        )

    @property
    def required(self) -> dict[str, Any]:
        data = self.data if isinstance(self.data, dict) else {}
        req = data.get("requiredCapabilities")
        return dict(req) if isinstance(req, dict) else {}


class UnsupportedProtocolVersion(ProtocolError):
    """The requested protocol version is not one this side speaks."""

    code = -32022
    default_http_status = 400


class URLElicitationRequired(ProtocolError):
    """The request cannot go on until the user completes URL-mode elicitations: -32042 at
    2025-11-25; at 2026-07-28 its steps are asked as input requests, the accepted retry held
    until ``server.complete_elicitation`` for a step with an ``elicitationId``."""

    code = -32042


_BY_CODE: dict[int, type[ProtocolError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        HeaderMismatch,
        MissingClientCapability,
        UnsupportedProtocolVersion,
        URLElicitationRequired,
    )
}


def _capability_paths(required: Mapping[str, Any], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for key, value in required.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            paths.extend(_capability_paths(value, path + "."))
        else:
            paths.append(path)
    return paths
