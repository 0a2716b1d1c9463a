"""The whole exception tree of mcp-elicit, in one place.

::

    MCPElicitError
    ├── ProtocolError                 a JSON-RPC error that goes on the wire (code, data, HTTP status)
    │   ├── ParseError                -32700  the bytes are not JSON
    │   ├── InvalidRequest            -32600  JSON, but not a JSON-RPC request/notification
    │   │   ├── InvalidResponse       -32600  shaped like a response (no method), but malformed
    │   │   └── PrincipalLimitReached -32600  the caller holds its share, or calls too often (HTTP 429)
    │   │       └── RateLimited       -32600  too many requests of a kind: ``retry_after``, ``limit``
    │   ├── MethodNotFound            -32601  unknown or removed method (HTTP 404 on 2026-07-28)
    │   ├── InvalidParams             -32602  params of the wrong shape or type
    │   │   ├── InvalidRequestMeta    -32602  required ``_meta`` field missing (HTTP 400)
    │   │   ├── ResourceNotFound      -32602  ``data.uri`` names the resource (-32002 before 2026-07-28)
    │   │   └── InvalidRequestState   -32602  sealed state failed to open; the reason is never sent
    │   ├── InternalError             -32603  we broke, not the peer
    │   │   └── StoreUnavailable      -32603  the state store failed; try again (HTTP 503)
    │   ├── HeaderMismatch            -32020  HTTP headers disagree with the body (HTTP 400)
    │   ├── MissingClientCapability   -32021  ``data.requiredCapabilities`` (HTTP 400)
    │   ├── UnsupportedProtocolVersion -32022 ``data.supported`` / ``data.requested`` (HTTP 400)
    │   └── URLElicitationRequired    -32042  ``data.elicitations`` (2025-11-25 only)
    ├── FormSchemaError               a form schema outside the flat subset, caught at definition time
    │   └── SensitiveFieldError       a form field asks for a secret: use URL mode
    ├── FormValidationError           an answer does not fit the schema that was asked
    ├── InvalidAnswer                 a client's answer does not fit its input request (a ValueError)
    ├── ReplayMismatchError           a handler asked a different question on replay
    ├── ToolError                     raised by a tool to report a failure as an ``isError`` result
    ├── ConfigError                   bad configuration (keys, addresses, files)
    ├── TransportError                the connection failed or closed
    │   ├── RequestTimeout            no answer within the request timeout (network time only)
    │   └── AuthorizationError        the server wants OAuth and the client could not get a token
    ├── ProtocolViolation             the peer broke the protocol outside a JSON-RPC error
    ├── RoundsExceeded                a multi round-trip request hit its round limit
    ├── TaskCancelled                 the task a tool call became was cancelled by the server
    ├── OAuthError                    a third-party authorization server said no, or did not answer
    └── CliError                      carries the process exit code
        ├── UsageError                2  a command line, TARGET or option that cannot work
        ├── CheckFailed               1  the server answered, but something it said is wrong
        ├── CannotConnect             3  could not connect, or could not start the server
        └── ServerBrokeProtocol       4  the server broke the protocol (or stdio's rules)

Rules: a protocol error says who broke the rules through its class, and carries the
JSON-RPC code and the HTTP status a transport should use. Declining or cancelling an
elicitation is a *result*, never an exception. A tool failure is a result with
``isError``, never a JSON-RPC error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "AuthorizationError",
    "CannotConnect",
    "CheckFailed",
    "CliError",
    "ConfigError",
    "FormSchemaError",
    "FormValidationError",
    "HeaderMismatch",
    "InternalError",
    "InvalidAnswer",
    "InvalidParams",
    "InvalidRequest",
    "InvalidRequestMeta",
    "InvalidRequestState",
    "InvalidResponse",
    "MCPElicitError",
    "MethodNotFound",
    "MissingClientCapability",
    "OAuthError",
    "ParseError",
    "PrincipalLimitReached",
    "ProtocolError",
    "ProtocolViolation",
    "RateLimited",
    "ReplayMismatchError",
    "RequestTimeout",
    "ResourceNotFound",
    "RoundsExceeded",
    "SensitiveFieldError",
    "ServerBrokeProtocol",
    "StoreUnavailable",
    "TaskCancelled",
    "ToolError",
    "TransportError",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "UsageError",
    "ValidationProblem",
]


class MCPElicitError(Exception):
    """Base class of every error mcp-elicit raises."""


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
        """The JSON-RPC ``error`` member."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
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


class FormSchemaError(MCPElicitError):
    """A form schema outside the flat subset elicitation allows.

    Raised when a tool is defined (or a form is built), naming the field and the rule.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"field {shown_repr(field)}: {message}" if field else message)
        self.field = field


def shown_repr(value: object) -> str:  # for a message: repr, cut to 60 characters and its length
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}… ({len(text)} characters)"


class SensitiveFieldError(FormSchemaError):
    """A form field asks for something secret; secrets must go through URL mode."""


@dataclass(frozen=True, slots=True)
class ValidationProblem:
    """One thing wrong with an answer: the field (None for the whole form) and what."""

    field: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class FormValidationError(MCPElicitError):
    """Content that does not fit the requested schema; ``problems`` lists each fault."""

    def __init__(self, problems: Sequence[ValidationProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems) or "invalid answer")


class InvalidAnswer(MCPElicitError, ValueError):
    """A client's answer (elicitation, sampling or roots result) that does not fit the
    request it answers; the message says what is wrong, for the user (and, on the client,
    for the server: it quotes no value). A ``ValueError`` too. ``fields``: the form's
    fields at fault (None for the form as a whole), which a log may name where the
    message, quoting what was typed, is personal data."""

    def __init__(self, message: str, *, fields: Sequence[str | None] = ()) -> None:
        super().__init__(message)
        self.fields = tuple(fields)


class ReplayMismatchError(MCPElicitError):
    """On replay, a handler asked something other than what the recorded round asked: a
    bug in the handler (its questions must not depend on anything but its arguments and
    earlier answers); the request fails instead of mixing up answers."""


class ToolError(MCPElicitError):
    """Raise inside a tool to fail it with this message as an ``isError`` result."""


class ConfigError(MCPElicitError):
    """Invalid configuration: a key file, an address, an option."""


class TransportError(MCPElicitError):
    """The connection could not be made, or failed or closed underneath a request;
    ``http_status``: the HTTP status that came instead of a response (None: none came)."""

    http_status: int | None = None


class CliError(MCPElicitError):
    """An error that ends the command line program with ``exit_code``."""

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class RequestTimeout(TransportError):
    """No answer arrived within the request timeout. Only network time counts: time spent
    waiting for a person (an answerer) never does."""


class ProtocolViolation(MCPElicitError):
    """The peer's message breaks the protocol in a way that is not a JSON-RPC error: an
    unknown ``resultType``, an ``input_required`` result with nothing to do, an input
    request the client never declared, a tool whose ``x-mcp-header`` annotations are invalid."""


class RoundsExceeded(MCPElicitError):
    """A multi round-trip request did not complete within its limits (rounds in all, or
    consecutive rounds that carried only ``requestState``); the message says which."""


class TaskCancelled(MCPElicitError):
    """The task a tool call became ended ``cancelled`` without this client asking (the
    tasks extension); ``task_id`` names it."""

    def __init__(self, message: str, task_id: str) -> None:
        super().__init__(message)
        self.task_id = task_id


class UsageError(CliError):
    """A command line that cannot work: a bad TARGET, option or argument (exit 2)."""

    exit_code = 2


class CheckFailed(CliError):
    """The server answered, but something it said is wrong: a tool definition, an error
    where a result belongs, a tool result marked ``isError`` (exit 1)."""

    exit_code = 1


class CannotConnect(CliError):
    """No conversation with the server: nothing listening, TLS, authorization, a wrong
    path, a command that does not start or exits (exit 3)."""

    exit_code = 3


class ServerBrokeProtocol(CliError):
    """The server broke the protocol: a malformed or impossible answer, something other
    than JSON-RPC on stdio's stdout, no revision in common (exit 4)."""

    exit_code = 4


class AuthorizationError(TransportError):
    """An MCP server over HTTP wants authorization (OAuth 2.1) and the client could not get
    it: discovery failed, a document did not check out (another resource, another issuer, no
    PKCE), the person or the authorization server refused, or the server still refused the
    token. The message says which and where; it never carries a token, code or secret."""


class OAuthError(MCPElicitError):
    """A third-party authorization server refused a token request, or could not be reached.

    ``error`` is the OAuth error code it answered (``invalid_grant``, ``access_denied``...),
    or ``unreachable`` / ``invalid_response`` / ``not_connected`` for what went wrong on the
    way. ``refused`` is True when the server answered no (the grant is dead: stored tokens
    are dropped and the user is asked again), False when it may work later. The message
    never carries a token, a code or a verifier."""

    def __init__(self, error: str, message: str | None = None, *, refused: bool = True) -> None:
        super().__init__(message or f"the authorization server answered {error!r}")
        self.error = error
        self.refused = refused
