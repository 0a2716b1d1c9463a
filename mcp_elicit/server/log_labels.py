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
  and a session by its first 8 characters, as the session's own lines name it: enough
  to tell sessions apart, not enough to take one over.
* A JSON-RPC error the server answers a request with (the client's mistake, told to it)
  is a debug line (:func:`log_answered_error`): its code and message, any URL in it
  without its query; a refused ``requestState`` is not, its own line says why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp_elicit.errors import InvalidRequestState, ProtocolError
from mcp_elicit.telemetry_attributes import redact_uri, redact_urls

__all__ = ["log_answered_error", "request_label", "request_where"]

_SHOWN = 128


def request_label(
    method: str, params: Mapping[str, Any], request_id: object, session: str | None = None
) -> str:
    """``method`` and what it is about, then the request and session, for a log line."""
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
    return where if session is None else f"{where}, session {session[:8]}"


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
        label = request_label(method, params if isinstance(params, Mapping) else {}, request_id, session)
        log.debug("%s: answered with error %d: %s", label, error.code, redact_urls(error.message[:500]))
