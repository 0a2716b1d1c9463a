"""How a log line names the request it is about, so that an operator can find the call
the other side reports: ``tools/call 'book' (request 7)``, and in a 2025-11-25 session
``tools/call 'book' (request 7, session 3f9c0a1e)``. Both sides name a request so: a
server what a client sent, a client what a server sent (its questions, its answers' ids,
its error messages); neither trusts the other's text in its log.

Rules:

* Built only when a line is logged, never on a request's path.
* The method, then the tool or prompt name, or a resource's URI without its user name
  and password, query and fragment (``REDACTED``: signed and pre-authorised URLs carry
  their key there), as its span names it; what the client sent is cut at 128 characters
  and quoted with ``repr`` (a method too, unless it is plain text), so a line stays one
  inert line; any other text of the peer's a line repeats (an error message, a server's
  message to the person) is cut by its caller and made inert with :func:`inert`.
* The request id as sent (``repr``: ``7`` and ``'7'`` are different requests; cut too),
  and a session by :func:`session_label`, as the session's own lines name it: the first
  8 hex digits of the digest its spans carry as ``mcp.session.id``
  (``telemetry_attributes.session_shown``), so a log line and a trace are matched by
  prefix. Never the id itself, nor its start: that may be the route's prefix alone,
  the same for every session of an instance.
* A JSON-RPC error the server answers a request with (the client's mistake, told to it)
  is a debug line (:func:`log_answered_error`): its code and message, any URL in it
  without its query (and a ``resources/read`` URI it repeats, whatever its form), cut and with any control or format character escaped (a message may
  quote what the client sent as is: "Method not found: ..."); a refused
  ``requestState`` is not, its own line says why.
* A message the server cannot read (not JSON: -32700; or no JSON-RPC message it takes,
  or one past its size limit: -32600) and a response to no question of the server's
  (dropped) are debug lines too (:func:`log_unreadable`, :func:`log_stray_response`):
  the transport, the session, and the message's size (and the limit it is past) and
  error code, or the request it names; never the message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from mcp_elicit.errors import InvalidRequestState, ProtocolError
from mcp_elicit.inert_text import inert
from mcp_elicit.telemetry_attributes import ID_SHOWN, redact_uri, redact_urls, session_shown
from mcp_elicit.url_redaction import uri_redacted
from mcp_elicit.wire import jsonrpc

__all__ = [
    "REPORTED",
    "inert",
    "log_answered_error",
    "log_stray_response",
    "log_unreadable",
    "message_label",
    "peer_text",
    "reported_on",
    "request_label",
    "request_where",
    "session_label",
]

_SHOWN = ID_SHOWN  # a name or method as an id: 128 characters
#: How much of a peer's message (an error's) a line repeats.
_SAID = 500
#: How much of a report to the person (made of the server's texts, each cut) a line repeats.
REPORTED = 2_000


def request_label(method: str, params: object, request_id: object, session: str | None = None) -> str:
    """``method`` and what it is about (in ``params``, when an object), then the request
    and session, for a log line."""
    if not isinstance(params, Mapping):
        params = {}
    target = params.get("uri") if method == "resources/read" else params.get("name")
    label = method_label(method)
    if isinstance(target, str):
        shown = redact_uri(target) if method == "resources/read" else target
        label = f"{label} {shown[:_SHOWN]!r}"
    return f"{label} ({request_where(request_id, session)})"


def method_label(method: str) -> str:
    """A method as a line names it: as is when plain text, else quoted (``repr``), cut."""
    return method if method.isprintable() and len(method) <= _SHOWN else repr(method[:_SHOWN])


def message_label(message: jsonrpc.Message) -> str:
    """The peer's message as a line names it: a request by :func:`request_label`, a
    notification by its method, a response by its request (:func:`request_where`)."""
    if isinstance(message, jsonrpc.Request):
        return request_label(message.method, message.params, message.id)
    if isinstance(message, jsonrpc.Notification):
        return method_label(message.method)
    return f"the answer to {request_where(message.id)}"


def request_where(request_id: object, session: str | None = None) -> str:
    """The request (and its session) alone: ``request 7, session 3f9c0a1e``."""
    shown = repr(request_id)  # the client's: cut, as a name is
    where = f"request {shown if len(shown) <= _SHOWN else shown[:_SHOWN] + '…'}"
    return where if session is None else f"{where}, session {session_label(session)}"


def session_label(session: str) -> str:
    """A session as a log line names it: ``3f9c0a1e``, the start of its spans'
    ``mcp.session.id``."""
    return session_shown(session)[:8]


def peer_text(text: str, most: int = _SAID) -> str:
    """What the peer wrote (an error's message, its message to the person), or a text
    that quotes it, as a line repeats it: cut at ``most`` characters, any URL without its
    user name and password, query and fragment (a page's one-time key), and inert.
    Redacted before the cut: a URL cut inside its password would keep part of it."""
    text = redact_urls(text)
    return inert(text if len(text) <= most else text[:most] + "…")


def reported_on(log: logging.Logger) -> Callable[[str], None]:
    """Reports to the person (they quote the server: its message, its page's URL) as
    warnings on ``log``, each through :func:`peer_text`: bounded, inert, no key."""
    return lambda text: log.warning("%s", peer_text(text, REPORTED))


def log_answered_error(
    log: logging.Logger,
    method: str,
    params: object,
    request_id: object,
    error: ProtocolError,
    session: str | None = None,
) -> None:
    """Say at debug that the request was answered with ``error`` (a client's error: the
    client was told; a line for whoever looks into it)."""
    if log.isEnabledFor(logging.DEBUG) and not isinstance(error, InvalidRequestState):
        label = request_label(method, params, request_id, session)
        message = error.message
        uri = params.get("uri") if method == "resources/read" and isinstance(params, Mapping) else None
        if isinstance(uri, str):  # repeated as "Resource not found: URI": no URL to find if no "://"
            message = uri_redacted(message, uri)
        log.debug("%s: answered with error %d: %s", label, error.code, peer_text(message))


def _in(transport: str, session: str | None) -> str:
    return transport if session is None else f"{transport}, session {session_label(session)}"


def log_unreadable(
    log: logging.Logger,
    transport: str,
    error: ProtocolError,
    size: int,
    session: str | None = None,
    *,
    limit: int | None = None,
) -> None:
    """Say at debug that a message of ``size`` bytes came over ``transport`` (in
    ``session``) that the server cannot read, and was answered with ``error``: its code
    (-32700: not JSON; -32600: JSON, but no message the server takes, or one past the
    ``limit`` in bytes it reads, when given), never the message nor the error's text,
    which may quote it."""
    if log.isEnabledFor(logging.DEBUG):
        where = _in(transport, session)
        over = "" if limit is None else f" (over its {limit} byte limit)"
        log.debug(
            "%s: a message of %d bytes the server cannot read%s; answered with error %d",
            where,
            size,
            over,
            error.code,
        )


def log_stray_response(
    log: logging.Logger,
    transport: str,
    message: jsonrpc.Response | jsonrpc.ErrorResponse,
    session: str | None = None,
) -> None:
    """Say at debug that the client's response ``message`` (over ``transport``, in
    ``session``) answers no question of the server's, and was dropped: the request it
    names (:func:`request_where`), never its result or error."""
    if log.isEnabledFor(logging.DEBUG):
        kind = "an error response" if isinstance(message, jsonrpc.ErrorResponse) else "a response"
        log.debug(
            "%s: %s to %s, which no question of the server's waits for; dropped",
            _in(transport, session),
            kind,
            request_where(message.id),
        )
