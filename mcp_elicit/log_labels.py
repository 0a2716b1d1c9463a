"""How a server's log line names the request it is about, so that an operator can find
the call a client reports: ``tools/call 'book' (request 7)``, and in a 2025-11-25 session
``tools/call 'book' (request 7, session 3f9c0a1e)``.

Rules:

* Built only when a line is logged, never on a request's path.
* The method, then the tool or prompt name, or a resource's URI without its user name
  and password, query and fragment (``REDACTED``: signed and pre-authorised URLs carry
  their key there), as its span names it; what the client sent is cut at 128 characters
  and quoted with ``repr`` (a method too, unless it is plain text), so a line stays one
  inert line.
* The request id as sent (``repr``: ``7`` and ``'7'`` are different requests; cut too),
  and a session by :func:`session_label`, as the session's own lines name it: the first
  8 hex digits of the digest its spans carry as ``mcp.session.id``
  (``telemetry_attributes.session_shown``), so a log line and a trace are matched by
  prefix. Never the id itself, nor its start: that may be the route's prefix alone,
  the same for every session of an instance.
* A JSON-RPC error the server answers a request with (the client's mistake, told to it)
  is a debug line (:func:`log_answered_error`): its code and message, any URL in it
  without its query, cut and with any control or format character escaped (a message may
  quote what the client sent as is: "Method not found: ..."); a refused
  ``requestState`` is not, its own line says why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mcp_elicit.errors import InvalidRequestState, ProtocolError
from mcp_elicit.telemetry_attributes import redact_uri, redact_urls, session_shown

__all__ = ["inert", "log_answered_error", "request_label", "request_where", "session_label"]

_SHOWN = 128


def request_label(method: str, params: object, request_id: object, session: str | None = None) -> str:
    """``method`` and what it is about (in ``params``, when an object), then the request
    and session, for a log line."""
    if not isinstance(params, Mapping):
        params = {}
    target = params.get("uri") if method == "resources/read" else params.get("name")
    label = method if method.isprintable() and len(method) <= _SHOWN else repr(method[:_SHOWN])
    if isinstance(target, str):
        shown = redact_uri(target) if method == "resources/read" else target
        label = f"{label} {shown[:_SHOWN]!r}"
    return f"{label} ({request_where(request_id, session)})"


def request_where(request_id: object, session: str | None = None) -> str:
    """The request (and its session) alone: ``request 7, session 3f9c0a1e``."""
    shown = repr(request_id)  # the client's: cut, as a name is
    where = f"request {shown if len(shown) <= _SHOWN else shown[:_SHOWN] + '…'}"
    return where if session is None else f"{where}, session {session_label(session)}"


def session_label(session: str) -> str:
    """A session as a log line names it: ``3f9c0a1e``, the start of its spans'
    ``mcp.session.id``."""
    return session_shown(session)[:8]


def inert(text: str) -> str:
    """``text`` with each character that is not printable (a line break, an escape, a
    bidirectional override, NUL) written as its escape: one inert line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


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
        log.debug(
            "%s: answered with error %d: %s", label, error.code, inert(redact_urls(error.message[:500]))
        )
