"""What one request's or notification's span and metric say: the attributes read from
the message, and the outcome read from its answer (:class:`Traced`).

Rules:

* Nothing here imports OpenTelemetry or starts a span: :mod:`mcp_elicit.telemetry` does,
  and hands a span (or None) to :class:`Traced`, which only sets attributes, events and
  the status on it. So every rule about what an attribute holds is written once, for
  both sides, and applies whether tracing, measuring, or both are on.
* The metric's attributes are low-cardinality (:func:`metric_attributes`): a method or
  protocol version MCP does not define is ``_OTHER``, and of the transport's attributes
  only ``network.transport`` and ``network.protocol.*`` (:data:`METRIC_NETWORK`), never
  an address or port.
* A span's status message never carries a URL's user name and password, query or
  fragment (:func:`redact_urls`), nor does ``mcp.resource.uri`` (:func:`redact_uri`,
  whatever the URI's scheme, and the same URI in the status message alike, repeated
  whole, inert or cut short as an error's message quotes it); an
  ``mcp_elicit.input_response`` event carries an
  answer's key and action, never its content. An action is recorded only as one of the
  three MCP defines (:func:`action_shown`), anything else as ``_OTHER``: the client
  writes it, and one may put there what the person typed.
* A span's name and ``mcp.method.name`` hold a method MCP defines as is, and any other
  (the peer's: any length, any character) cut past 128 characters and inert
  (:func:`method_shown`): a line break or an escape in it must not reach a trace viewer
  or a log exporter as such. A tool or prompt name the server does not offer in a
  span's name, likewise (:func:`name_shown`).
* ``jsonrpc.request.id`` is the id's string form, as the semantic conventions have it
  (``10``, ``request-7``), cut past 128 characters (:func:`request_id_shown`): the other
  side picks the id, and a string id may be a megabyte long.
* ``mcp.session.id`` is a digest of the session's id (:func:`session_shown`), the same on
  both sides, never the id: on a server without authentication the id is all it takes to
  act in the session (answer its questions, end it), and more people read traces than
  the server's traffic. The HTTP client names its server's URL
  through :func:`redact_urls` too (re-exported by :mod:`mcp_elicit.telemetry`).
* Which rounds a client's request belongs to (:data:`ROUNDS`) is held here, as span
  contexts only, for :mod:`mcp_elicit.telemetry` to link and parent its spans by.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import orjson

from mcp_elicit.inert_text import inert
from mcp_elicit.url_redaction import redact_uri, redact_urls, uri_redacted
from mcp_elicit.wire.meta import PROTOCOL_VERSION_META_KEY
from mcp_elicit.wire.methods import METHODS
from mcp_elicit.wire.versions import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

__all__ = [
    "METRIC_NETWORK",
    "ID_SHOWN",
    "NAME_SHOWN",
    "ROUNDS",
    "Traced",
    "action_shown",
    "add_response_events",
    "chained",
    "method_shown",
    "name_shown",
    "metric_attributes",
    "named_version",
    "request_id_shown",
    "redact_uri",
    "redact_urls",
    "session_shown",
]

#: How much of a tool or prompt name the server does not offer a span's name shows (a
#: name MCP allows is at most 128 characters): a client may send one of any length.
NAME_SHOWN = 128
#: How much of a request's id ``jsonrpc.request.id`` (and a log line) shows: the peer's
#: string id may be of any length.
ID_SHOWN = 128
#: The protocol versions MCP defines: any other is ``_OTHER`` in the metric.
_VERSIONS = frozenset(HANDSHAKE_PROTOCOL_VERSIONS + MODERN_PROTOCOL_VERSIONS)
#: The actions an elicitation's answer may take: any other is ``_OTHER`` on a span.
_ACTIONS = frozenset({"accept", "decline", "cancel"})
#: The transport's attributes a metric takes (never the peer's address or port).
METRIC_NETWORK = frozenset({"network.transport", "network.protocol.name", "network.protocol.version"})


def metric_attributes(
    method: str, version: str | None, network: Mapping[str, str | int] | None
) -> dict[str, Any]:
    """The low-cardinality attributes of a request's or notification's duration. A method
    or protocol version MCP does not define is ``_OTHER`` here, as HTTP's conventions do
    for methods: a peer sending made-up names would otherwise add a series per name."""
    metric: dict[str, Any] = {"mcp.method.name": method if method in METHODS else "_OTHER"}
    if version is not None:
        metric["mcp.protocol.version"] = version if version in _VERSIONS else "_OTHER"
    if network:
        metric.update((k, v) for k, v in network.items() if k in METRIC_NETWORK)
    return metric


def named_version(version: str | None, meta: object) -> str | None:
    """``version`` if given, else the protocol version a ``_meta`` names (if a string)."""
    if version is None and isinstance(meta, Mapping):
        found = meta.get(PROTOCOL_VERSION_META_KEY)
        version = found if isinstance(found, str) else None
    return version


class Traced:
    """What the answer to one request said, for its span and its metric."""

    __slots__ = ("error", "metric", "span", "uri")

    def __init__(self, metric: dict[str, Any], uri: str | None = None) -> None:
        self.metric = metric
        self.uri = uri  # the resource's, which an error's message may repeat
        self.span: Any = None
        self.error: tuple[str, str] | None = None

    def answered(self, payload: bytes | None) -> None:
        """Read the encoded answer (None: the request was cancelled, no answer is due)."""
        if payload is None:
            self.failed("cancelled", "cancelled")
            return
        try:
            answer = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return
        self.read(answer)

    def read(self, answer: object) -> None:
        """Read a decoded answer: a JSON-RPC response object."""
        error = answer.get("error") if isinstance(answer, dict) else None
        if isinstance(error, dict):
            code = str(error.get("code"))
            self.failed(code, str(error.get("message", "")))
            self.metric["rpc.response.status_code"] = code
            if self.span is not None:
                self.span.set_attribute("rpc.response.status_code", code)
            return
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict):
            return
        if result.get("isError") is True:
            self.failed("tool_error", "")
        action = result.get("action")  # the answer to an elicitation/create
        if action is not None and self.span is not None:
            self.span.set_attribute("mcp_elicit.action", action_shown(action))
        if result.get("resultType") == "input_required" and self.span is not None:
            self.span.set_attribute("mcp_elicit.result_type", "input_required")
            requests = result.get("inputRequests")
            self.span.set_attribute(
                "mcp_elicit.input_requests", len(requests) if isinstance(requests, dict) else 0
            )

    @contextlib.contextmanager
    def failing(self) -> Iterator[None]:
        """An exception instead of an answer: the request failed, or was cancelled."""
        try:
            yield
        except BaseException as exc:
            if self.error is None:
                cancelled = type(exc).__name__ == "CancelledError"
                self.failed("cancelled" if cancelled else type(exc).__qualname__, str(exc))
            raise

    def failed(self, kind: str, message: str) -> None:
        """The request failed without an answer to read (``kind`` is its ``error.type``;
        ``message``, the span's status, with any URL's credentials, query and fragment
        left out, and the resource's URI as on the span, also where the message repeats it
        inert or cut short)."""
        if self.uri:
            message = uri_redacted(message, self.uri)
        self.error = (kind, redact_urls(message))
        self.metric["error.type"] = kind
        if self.span is not None:
            self.span.set_attribute("error.type", kind)

    def finish(self, status: Any, code: Any) -> None:
        if self.error is not None and self.span is not None:
            self.span.set_status(status(code.ERROR, self.error[1] or None))


class _Rounds:
    """The spans of one logical request's rounds so far, on the client: the first, whose
    trace its retries continue when no span of the caller's holds them, and the last,
    which the next one links."""

    __slots__ = ("first", "last")

    def __init__(self) -> None:
        self.first: Any = None
        self.last: Any = None


#: The rounds of the logical request being sent, on the client (None: not in one).
ROUNDS: ContextVar[_Rounds | None] = ContextVar("mcp_elicit_rounds", default=None)


@contextlib.contextmanager
def chained() -> Iterator[None]:
    """The requests sent inside are the rounds of one logical request (:data:`ROUNDS`)."""
    token = ROUNDS.set(_Rounds())
    try:
        yield
    finally:
        ROUNDS.reset(token)


def request_id_shown(rid: object) -> str:
    """A request's id as ``jsonrpc.request.id`` holds it: its string form (``7``,
    ``request-7``), as is up to 128 characters, cut with "…" past that. Both sides cut an
    id alike, so a client's span and the server's still carry the same value."""
    shown = str(rid)
    return shown if len(shown) <= ID_SHOWN else shown[:ID_SHOWN] + "…"


def method_shown(method: str) -> str:
    """A request's or notification's method as its span's name and ``mcp.method.name``
    hold it: as is when MCP defines it, else by :func:`name_shown`. Both sides show a
    method alike."""
    return method if method in METHODS else name_shown(method)


def name_shown(name: str) -> str:
    """A name the peer chose (a method, a tool's) as a span holds it: as is when plain
    text up to 128 characters, else cut with "…" past that and inert
    (:func:`mcp_elicit.inert_text.inert`: every character not printable escaped)."""
    if len(name) <= NAME_SHOWN and name.isprintable():
        return name
    return inert(name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN] + "…")


def action_shown(action: object) -> str:
    """An answer's ``action`` as a span records it: ``accept``, ``decline``, ``cancel``, or
    ``_OTHER`` for anything else the client sent there (never its text)."""
    return action if isinstance(action, str) and action in _ACTIONS else "_OTHER"


def session_shown(session: str) -> str:
    """A session's id as ``mcp.session.id`` records it: the first 32 hex digits of its
    SHA-256. It tells sessions apart and is the same on the client's spans and the
    server's, but cannot be sent back as the ``Mcp-Session-Id`` it stands for."""
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def add_response_events(span: Any, responses: object) -> None:
    """One event per answer a retry carries: its key, and an elicitation's action."""
    if not isinstance(responses, Mapping):
        return
    for key, answer in list(responses.items())[:64]:
        event: dict[str, str] = {"mcp_elicit.input_key": str(key)[:200]}
        action = answer.get("action") if isinstance(answer, Mapping) else None
        if action is not None:
            event["mcp_elicit.action"] = action_shown(action)
        span.add_event("mcp_elicit.input_response", event)
