"""What goes wrong talking to a peer, outside a JSON-RPC error it sent: the connection
(``TransportError`` and its kinds), a peer that broke the protocol, a multi round-trip
request past its limits, a task ended by the server, a third-party authorization server
that refused. Importable from ``mcp_elicit.errors``."""

from __future__ import annotations

from mcp_elicit.errors.base import MCPElicitError

__all__ = [
    "AuthorizationError",
    "OAuthError",
    "ProtocolViolation",
    "RequestTimeout",
    "RoundsExceeded",
    "TaskCancelled",
    "TransportError",
]


class TransportError(MCPElicitError):
    """The connection could not be made, or failed or closed underneath a request;
    ``http_status``: the HTTP status that came instead of a response (None: none came)."""

    http_status: int | None = None


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
