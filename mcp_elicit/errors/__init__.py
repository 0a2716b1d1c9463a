"""The whole exception tree of mcp-elicit, every name importable from here; each concept is
a module of its own: ``base`` (the root, a server's own code and configuration),
``protocol`` (the JSON-RPC errors), ``answers`` (forms and answers), ``peers`` (talking
to a peer), ``cli`` (the program's exit codes).

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
    │   └── URLElicitationRequired    -32042  ``data.elicitations`` (2025-11-25; 2026-07-28 asks its steps)
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

from mcp_elicit.errors.answers import (
    FormSchemaError,
    FormValidationError,
    InvalidAnswer,
    SensitiveFieldError,
    ValidationProblem,
)
from mcp_elicit.errors.answers import (
    shown_repr as shown_repr,  # not in __all__: the package's own helper, imported from here
)
from mcp_elicit.errors.base import ConfigError, MCPElicitError, ReplayMismatchError, ToolError
from mcp_elicit.errors.cli import CannotConnect, CheckFailed, CliError, ServerBrokeProtocol, UsageError
from mcp_elicit.errors.peers import (
    AuthorizationError,
    OAuthError,
    ProtocolViolation,
    RequestTimeout,
    RoundsExceeded,
    TaskCancelled,
    TransportError,
)
from mcp_elicit.errors.protocol import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    InvalidRequestMeta,
    InvalidRequestState,
    InvalidResponse,
    MethodNotFound,
    MissingClientCapability,
    ParseError,
    PrincipalLimitReached,
    ProtocolError,
    RateLimited,
    ResourceNotFound,
    StoreUnavailable,
    UnsupportedProtocolVersion,
    URLElicitationRequired,
)

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

for _name in __all__:  # named as before the split: tracebacks, reprs and pickles unchanged
    globals()[_name].__module__ = __name__
del _name
