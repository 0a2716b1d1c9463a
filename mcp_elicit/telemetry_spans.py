"""One request's or notification's span: what it says, the context it starts in and the
spans it links, current while the work runs, ended with its outcome; and the trace
context a message carries in ``params._meta``.

Rules:

* The trace context travels in ``params._meta`` (``traceparent``, ``tracestate``,
  ``baggage``): the client's span (kind CLIENT, a child of whatever span its caller is
  in) puts it there, and the server's span (kind SERVER) continues it, with the handler
  running inside, the sender's baggage current there too; the span current where the
  request was received (an instrumented HTTP server's) is linked.
* A client's retry (a round of a logical request, ``telemetry_attributes.ROUNDS``) links
  the round before it and, with no span of the caller's around them, continues the first
  round's trace.
* A span's attributes: ``mcp.method.name``, ``mcp.protocol.version`` (both as named, cut
  and inert when MCP does not define them,
  never the metric's ``_OTHER``), ``jsonrpc.request.id``, ``mcp.session.id`` (2025-11-25:
  on the server; on the client too over HTTP, where the session has an id on the wire; a
  digest of the id, ``session_shown``),
  the metric's (tool or prompt), ``mcp.resource.uri`` (its user information, query and
  fragment ``REDACTED``: keys travel there), and the transport's: ``network.transport``
  (``tcp`` for HTTP, ``pipe`` for stdio), ``network.protocol.name`` and ``.version``, and
  the peer's address (``client.address``/``client.port`` on the server,
  ``server.address``/``server.port`` on the client).
* A notification whose params have no ``_meta`` in its revision's schema
  (:data:`NO_META`) is traced, but its context is not sent along.
* Nothing here imports OpenTelemetry: :mod:`mcp_elicit.telemetry` hands over its API
  modules and tracer. When the application's telemetry raises (a span processor, a
  propagator), ``failed`` is told and the work goes on without that span or context.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from mcp_elicit.telemetry_attributes import ROUNDS, Traced, redact_uri, session_shown

__all__ = ["NO_META", "spanned", "with_meta"]

_CONTEXT_KEYS = ("traceparent", "tracestate", "baggage")
#: Notifications whose params have no ``_meta`` in their revision's schema: traced, but
#: their context is not sent along.
NO_META = frozenset({"notifications/elicitation/complete"})


@contextlib.contextmanager
def spanned(
    api: tuple[Any, Any, Any, Any],
    record: Traced,
    method: str,
    name: str,
    params: Mapping[str, Any],
    *,
    incoming: bool,
    session: str | None,
    network: Mapping[str, str | int] | None,
    rid: str | None,
    version: str | None,
    failed: Callable[[str], None],
) -> Iterator[None]:
    """The work inside runs in the span of one request or notification (``record`` gets
    it, and its outcome). ``api``: OpenTelemetry's ``trace``, ``context`` and ``propagate``
    modules and the tracer. ``version``: the protocol version as the peer named it."""
    trace, context, propagate, tracer = api
    attributes = {**(network or {}), **record.metric, "mcp.method.name": method}  # not _OTHER here
    if version is not None:
        attributes["mcp.protocol.version"] = version  # nor here
    if rid is not None:
        attributes["jsonrpc.request.id"] = rid
    if session is not None:
        attributes["mcp.session.id"] = session_shown(session)  # never the id: it opens the session
    if record.uri is not None:
        attributes["mcp.resource.uri"] = redact_uri(record.uri)  # no key in a query
    parent = None
    meta = params.get("_meta")
    if incoming and isinstance(meta, Mapping):  # the sender's context
        carrier = {k: v for k in _CONTEXT_KEYS if isinstance(v := meta.get(k), str)}
        try:
            parent = propagate.extract(carrier) if carrier else None
        except Exception:  # the application's propagator raised: a trace of its own
            failed("reading the trace context sent")
    links = None
    if parent is not None:  # the span current where it was received is linked
        ambient = trace.get_current_span().get_span_context()
        links = [trace.Link(ambient)] if ambient.is_valid else None
    chain = ROUNDS.get() if not incoming and rid is not None else None
    if chain is not None and chain.last is not None:  # a retry: linked to the round before
        links = [trace.Link(chain.last)]
        if not trace.get_current_span().get_span_context().is_valid:
            parent = trace.set_span_in_context(trace.NonRecordingSpan(chain.first))
    kind = trace.SpanKind.SERVER if incoming else trace.SpanKind.CLIENT
    try:
        span = tracer.start_span(name, context=parent, kind=kind, attributes=attributes, links=links)
    except Exception:  # a span processor of the application's raised: no span
        failed("starting a span")
        span = None
    if span is None:  # (outside the handler above: no error of the request's chains to it)
        with record.failing():
            yield
        return
    if chain is not None:
        chain.last = span.get_span_context()
        chain.first = chain.first or chain.last
    # current inside: the span, and the sender's baggage (the parent's) with it
    token = context.attach(trace.set_span_in_context(span, parent))
    try:
        record.span = span
        with record.failing():
            yield
    finally:
        context.detach(token)
        record.finish(trace.Status, trace.StatusCode)
        try:
            span.end()
        except Exception:  # likewise, when the span ends
            failed("ending a span")


def with_meta(
    propagate: Any, params: Mapping[str, Any] | None, failed: Callable[[str], None]
) -> Mapping[str, Any] | None:
    """``params`` with the current trace context in ``_meta`` (a copy; as is without one)."""
    carrier: dict[str, str] = {}
    try:
        propagate.inject(carrier)
    except Exception:  # the application's propagator raised: sent without a context
        failed("adding the trace context")
        return params
    if not carrier:
        return params
    body = dict(params) if params is not None else {}
    meta = body.get("_meta")
    body["_meta"] = {**(meta if isinstance(meta, Mapping) else {}), **carrier}
    return body
