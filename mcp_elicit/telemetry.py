"""OpenTelemetry for both sides: one span per request and per notification, and the
duration metric, as the semantic conventions for MCP describe them (``mcp.*``,
``gen_ai.*``, ``jsonrpc.*``).

Rules:

* Nothing happens unless ``opentelemetry-api`` is installed (``mcp-elicit[otel]``) and the
  application has installed an SDK's tracer or meter provider; until then a request costs
  one clock reading more. ``Server(telemetry=False)`` / ``Client(telemetry=False)`` turn
  it off altogether; a ``Telemetry(side, tracer_provider=..., meter_provider=...)`` sends
  to providers of the application's own.
* A span is named ``{method} {tool or prompt}`` (the method alone for other requests),
  a method MCP does not define, or a name the server does not offer, cut and inert
  (``telemetry_attributes.method_shown``, ``name_shown``),
  with ``gen_ai.tool.name`` and ``gen_ai.operation.name`` (``execute_tool``), or
  ``gen_ai.prompt.name``. Its other attributes (the transport's among them), and the
  trace context it continues and puts in ``params._meta``: the rules of
  :mod:`mcp_elicit.telemetry_spans`, which starts and ends each span.
* The outcome is read from the answer, so every path that answers is covered: a JSON-RPC
  error sets ``error.type`` and ``rpc.response.status_code`` to its code and the span's
  status to ERROR with the error's message (any URL in it loses its user name and
  password, query and fragment, where keys travel); a tool result with ``isError`` sets
  ``error.type`` ``tool_error``; a request cancelled or left unanswered, ``cancelled``. A
  2026-07-28 round that asks something sets ``mcp_elicit.result_type``
  (``input_required``) and ``mcp_elicit.input_requests`` (how many questions); a retry
  gets one ``mcp_elicit.input_response`` event per answer it carries (its key, and the
  action of an elicitation answer; never the content). On the client, each retry's span
  links the round before it (:func:`rounds`): one elicitation is one trace.
* A 2025-11-25 server's own request (``elicitation/create``...) is a span of kind CLIENT
  inside the handler's, its context sent in the request's ``_meta``; the client's answer
  is a span of kind SERVER under it. Both carry ``mcp_elicit.action`` for an elicitation.
* A notification is a span too, named after its method: kind CLIENT where it is sent
  (the handler's progress and log messages inside the request's span, a list change, a
  resource update, a finished URL step, a client's cancellation...), its context added to
  its ``_meta``; kind SERVER where it is received, continuing that context, around what
  the receiving side does with it. Both are measured like requests.
* A 2025-11-25 session's duration, from ``initialize`` to its end, goes to
  ``mcp.server.session.duration`` / ``mcp.client.session.duration`` (revision, network).
* ``mcp.server.operation.duration`` / ``mcp.client.operation.duration`` (seconds, in the
  conventions' buckets from 10 ms to 5 min, as the session durations) are recorded by
  the side answering / sending, with the same low-cardinality attributes (method, tool
  or prompt, protocol version, network transport and protocol, error type, and a JSON-RPC
  error's code in ``rpc.response.status_code``);
  a method or protocol version MCP does not define is ``_OTHER`` there (not on spans),
  and so is a tool or prompt name the server does not offer.
* Telemetry never fails a request: when the application's telemetry raises (a span
  processor as a span starts or ends, a propagator reading or adding a trace context, a
  metric's recording), the request goes on without that span, context or point, and the
  failure is logged (a warning the first time, then debug).

This module starts and ends the spans and records the durations; what a span's and a
metric's attributes hold, and how an answer is read for them (``Traced``), is in
:mod:`mcp_elicit.telemetry_attributes`, and ``Traced`` and ``redact_urls`` are importable
from here as well.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Literal, TypeVar, cast

from mcp_elicit.telemetry_attributes import (
    METRIC_NETWORK,
    Traced,
    add_response_events,
    chained,
    method_shown,
    metric_attributes,
    name_shown,
    named_version,
    redact_urls,
    request_id_shown,
)
from mcp_elicit.telemetry_spans import NO_META, spanned, with_meta
from mcp_elicit.wire.jsonrpc import Request

__all__ = ["Side", "Telemetry", "Traced", "load", "notifying", "redact_urls", "rounds"]

log = logging.getLogger("mcp_elicit.telemetry")

Side = Literal["server", "client"]
A = TypeVar("A")
C = TypeVar("C")
_RECHECK = 1.0  # seconds between looks for a provider the application installed later
#: The bucket boundaries (seconds) of every duration histogram, as the conventions give
#: them: the SDK's default ones are meant for milliseconds.
_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


def rounds(telemetry: Telemetry | None) -> contextlib.AbstractContextManager[None]:
    """Client side: one logical request through every round it takes (a 2026-07-28 call
    that asks, retried with the answers). Each retry's span links the round before it, and
    continues the first round's trace when no span of the caller's holds them all: one
    elicitation is one trace, in order."""
    if telemetry is None or not telemetry.active:
        return contextlib.nullcontext()
    return chained()


def load(enabled: bool | Telemetry | None, side: Side) -> Telemetry | None:
    """A side's telemetry, or None when off: asked off, or ``opentelemetry-api`` missing
    (an error when asked on)."""
    if enabled is False:
        return None
    if isinstance(enabled, Telemetry):
        return enabled
    if importlib.util.find_spec("opentelemetry") is None:
        if enabled:
            from mcp_elicit.errors import ConfigError

            raise ConfigError("telemetry needs opentelemetry-api: pip install 'mcp-elicit[otel]'")
        return None
    return Telemetry(side)


def notifying(
    telemetry: Telemetry | None,
    method: str,
    params: Mapping[str, Any] | None,
    *,
    incoming: bool,
    version: str | None = None,
    session: str | None = None,
    network: Mapping[str, str | int] | None = None,
) -> contextlib.AbstractContextManager[Mapping[str, Any] | None]:
    """One notification sent (``incoming`` False) or received, in its span when
    ``telemetry`` is on (:meth:`Telemetry.notification`); yields the params to send."""
    if telemetry is None or not telemetry.active:
        return contextlib.nullcontext(params)
    return telemetry.notification(
        method, params, incoming=incoming, version=version, session=session, network=network
    )


class Telemetry:
    """Spans and the duration metric of one side, once the application installed a
    provider; or to the providers given, whatever the global ones are.

    OpenTelemetry is not imported here: an application that installs a provider has
    imported it already, and one that does not pays nothing for it being installed (the
    command line's start-up included)."""

    def __init__(
        self, side: Side = "server", *, tracer_provider: Any = None, meter_provider: Any = None
    ) -> None:
        self.side = side
        self._providers = (tracer_provider, meter_provider)
        self._api: Any = None
        self._durations: dict[bool, Any] = {}  # by direction: True for requests answered
        self._sessions: Any = None  # mcp.{side}.session.duration
        self._tracing = self._measuring = False
        self._checked = float("-inf")
        self._complained = False  # a telemetry failure was logged as a warning
        #: Server side: whether a tool (``tools/call``) or prompt (``prompts/get``) name is
        #: one the server offers; any other is ``_OTHER`` in the metric, so that a client
        #: cannot add a metric series per made-up name. None: every name counts.
        self.offered: Callable[[str, str], bool] | None = None
        if tracer_provider is not None or meter_provider is not None:
            self._load_api()

    def _load_api(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        from opentelemetry import context, metrics, propagate, trace

        try:
            release = version("mcp-elicit")
        except PackageNotFoundError:  # run from a source tree that was never installed
            release = "0"
        tracer_provider, meter_provider = self._providers
        self._trace, self._metrics, self._propagate = trace, metrics, propagate
        self._context = context
        self._tracer = trace.get_tracer("mcp_elicit", release, tracer_provider=tracer_provider)
        self._meter = metrics.get_meter("mcp_elicit", release, meter_provider=meter_provider)
        self._api = trace
        self._tracing = tracer_provider is not None
        if meter_provider is not None:
            self._histogram()
        if self._tracing and self._measuring:
            self._checked = float("inf")

    def _histogram(self) -> None:
        self._measuring = True
        for incoming, side, observed in ((True, "server", "receiver"), (False, "client", "sender")):
            self._durations[incoming] = self._meter.create_histogram(
                f"mcp.{side}.operation.duration",
                unit="s",
                description=f"MCP request duration as observed on the {observed}",
                explicit_bucket_boundaries_advisory=_BUCKETS,
            )
        self._sessions = self._meter.create_histogram(
            f"mcp.{self.side}.session.duration",
            unit="s",
            description=f"The duration of the MCP session as observed on the MCP {self.side}",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )

    def session_ended(self, version: str, network: Mapping[str, str | int] | None, seconds: float) -> None:
        """A 2025-11-25 session is over: its duration goes to ``mcp.{side}.session.duration``."""
        if not self.active or self._sessions is None:
            return
        attributes: dict[str, str | int] = {"mcp.protocol.version": version}
        attributes.update((k, v) for k, v in (network or {}).items() if k in METRIC_NETWORK)
        try:
            self._sessions.record(seconds, attributes)
        except Exception:
            self._failed("recording a session's duration")

    @property
    def active(self) -> bool:
        """Whether a request is traced or measured now (an installed provider is looked for
        once a second until there is one): a request costs no more than this otherwise."""
        if time.monotonic() - self._checked >= _RECHECK:
            self._look()
        return self._tracing or self._measuring

    def _look(self) -> None:
        self._checked = time.monotonic()
        if self._api is None:
            if "opentelemetry.trace" not in sys.modules:
                return  # not even imported by the application: no provider can be installed
            self._load_api()
        if not self._tracing:
            self._tracing = not isinstance(self._trace.get_tracer_provider(), self._trace.ProxyTracerProvider)
        if not self._measuring and type(self._metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider":
            self._histogram()
        if self._tracing and self._measuring:
            self._checked = float("inf")  # both installed: nothing more to look for

    async def traced(
        self,
        message: Request,
        answer: Awaitable[A],
        *,
        version: str | None = None,
        session: str | None = None,
        network: Mapping[str, str | int] | None = None,
    ) -> A:
        """Server side: await ``answer`` (the encoded response, or it and an HTTP status) to
        ``message`` inside its span."""
        params = message.params if isinstance(message.params, dict) else {}
        with self.request(
            message.method, message.id, params, version=version, session=session, network=network
        ) as traced:
            out = await answer
            if traced is not None:
                payload = out[0] if isinstance(out, tuple) else out
                traced.answered(payload if isinstance(payload, bytes) else None)
            return out

    def with_context(self, message: Mapping[str, Any]) -> Mapping[str, Any]:
        """Client side: ``message`` with the current trace context in ``params._meta`` (a copy)."""
        params = message.get("params")
        before = params if isinstance(params, Mapping) else None
        after = self._with_meta(before)
        return message if after is before else {**message, "params": after}

    @contextlib.contextmanager
    def request(
        self,
        method: str,
        rid: object,
        params: Mapping[str, Any],
        *,
        version: str | None,
        session: str | None,
        incoming: bool | None = None,
        network: Mapping[str, str | int] | None = None,
    ) -> Iterator[Traced | None]:
        """Wrap one request (answering it, or sending it and waiting for its answer); yields
        where to report the answer (None: not traced). ``incoming``: whether this side
        answers it (default: the server side does); a 2025-11-25 server's own questions go
        the other way, and so do a client's answers to them. ``network``: the transport's
        attributes (``network.*``, the peer's ``server.*`` or ``client.*``)."""
        if incoming is None:
            incoming = self.side == "server"
        if not self.active:
            yield None
            return
        target = params.get("name") if method in ("tools/call", "prompts/get") else None
        version = named_version(version, params.get("_meta"))
        metric = metric_attributes(method, version, network)
        if isinstance(target, str):
            known = self.offered is None or not incoming or self.offered(method, target)
            if incoming:  # a name the peer chose: bounded and inert, offered or not
                target = name_shown(target)
            metric["gen_ai.tool.name" if method == "tools/call" else "gen_ai.prompt.name"] = (
                target if known else "_OTHER"
            )
        if method == "tools/call":
            metric["gen_ai.operation.name"] = "execute_tool"
        with self._operation(
            method, target, metric, params, incoming, session, network, request_id_shown(rid), version
        ) as record:
            if record.span is not None:
                add_response_events(record.span, params.get("inputResponses"))
            yield record

    @contextlib.contextmanager
    def notification(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        incoming: bool,
        version: str | None = None,
        session: str | None = None,
        network: Mapping[str, str | int] | None = None,
    ) -> Iterator[Mapping[str, Any] | None]:
        """Wrap one notification: sending it (yields ``params`` with the trace context in
        ``_meta``, a copy, to send instead) or handling it once received (yields ``params``;
        the span continues the sender's context). An exception inside sets ``error.type``."""
        version = named_version(version, params.get("_meta") if params is not None else None)
        metric = metric_attributes(method, version, network)
        with self._operation(
            method, None, metric, params or {}, incoming, session, network, None, version
        ) as record:
            traced = record.span is not None and not incoming and method not in NO_META
            yield self._with_meta(params) if traced else params

    @contextlib.contextmanager
    def _operation(
        self,
        method: str,
        target: object,
        metric: dict[str, Any],
        params: Mapping[str, Any],
        incoming: bool,
        session: str | None,
        network: Mapping[str, str | int] | None,
        rid: str | None,
        version: str | None,
    ) -> Iterator[Traced]:
        """One request or notification: its span (when tracing), its duration measured.
        ``version``: the protocol version as the peer named it (the metric's may be
        ``_OTHER``); ``target``: the tool or prompt (as shown), which the span's name adds."""
        uri = params.get("uri") if "resources/" in method else None
        record = Traced(metric, uri if isinstance(uri, str) else None)
        start = time.perf_counter()
        try:
            if not self._tracing:
                with record.failing():
                    yield record
                return
            api = (self._trace, self._context, self._propagate, self._tracer)
            shown = method_shown(method)  # the peer's: bounded and inert, one rule for both sides
            with spanned(
                api,
                record,
                shown,
                f"{shown} {target}" if isinstance(target, str) else shown,
                params,
                incoming=incoming,
                session=session,
                network=network,
                rid=rid,
                version=None if version is None else name_shown(version),  # the peer's: cut, inert
                failed=self._failed,
            ):
                yield record
        finally:
            duration = self._durations.get(incoming)
            if duration is not None:
                try:
                    duration.record(time.perf_counter() - start, record.metric)
                except Exception:
                    self._failed("recording a duration")

    def _failed(self, what: str) -> None:
        """The application's telemetry raised while ``what``: the request goes on. Said
        once as a warning (with the traceback), then at debug level."""
        if self._complained:
            log.debug("telemetry failed %s", what, exc_info=True)
            return
        self._complained = True
        log.warning("telemetry failed %s; requests go on without it", what, exc_info=True)

    def channel(
        self,
        channel: C,
        request: object,
        *,
        version: str | None = None,
        session: str | None = None,
        network: Mapping[str, str | int] | None = None,
    ) -> C:
        """``channel`` (a request's: its ``notify`` sends the handler's notifications) with
        each notification in its span; every other attribute is the channel's own.
        ``request``: the request's params, where the version is read when not given."""
        meta = request.get("_meta") if isinstance(request, Mapping) else None
        return cast(C, _NotingChannel(channel, self, named_version(version, meta), session, network))

    def _with_meta(self, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """``params`` with the current trace context in ``_meta`` (a copy; as is without one)."""
        return with_meta(self._propagate, params, self._failed)


class _NotingChannel:
    """A request's channel whose notifications are traced (:meth:`Telemetry.channel`)."""

    __slots__ = ("_channel", "_network", "_session", "_telemetry", "_version")

    def __init__(
        self,
        channel: Any,
        telemetry: Telemetry,
        version: str | None,
        session: str | None,
        network: Mapping[str, str | int] | None,
    ) -> None:
        self._channel = channel
        self._telemetry = telemetry
        self._version = version
        self._session = session
        self._network = network

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        with notifying(
            self._telemetry,
            method,
            params,
            incoming=False,
            version=self._version,
            session=self._session,
            network=self._network,
        ) as sent:
            await self._channel.notify(method, sent if isinstance(sent, dict) else dict(sent or {}))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._channel, name)
