"""The client's protocol core: what each outgoing message and its HTTP headers look like,
which tools survive ``x-mcp-header`` validation, and how much of a request's time budget is
left. No I/O: values in, messages and decisions out.

Rules:

* Every request gets a fresh JSON-RPC id (a retry is a new request).
* Modern (2026-07-28): every request and notification carries ``params._meta`` with the
  protocol version, the client's capabilities and its ``clientInfo``; over HTTP the
  ``MCP-Protocol-Version`` header equals the ``_meta`` version, ``Mcp-Method`` mirrors the
  method, ``Mcp-Name`` the tool or prompt name or resource URI, ``Mcp-Param-{Name}`` each
  argument a tool's schema marks with ``x-mcp-header`` (a null or absent value omits it).
  Values that are not plain visible ASCII travel as the Base64 sentinel (``wire.headers``).
* Handshake (2025-11-25 and earlier): no ``_meta`` fields of ours, and only
  ``MCP-Protocol-Version`` (after ``initialize``) among the headers.
* Capabilities are exactly what the client can do: ``elicitation`` with the modes the
  answerer supports (absent when it supports none), ``sampling`` and ``roots`` only when a
  callback exists.
* Over HTTP a tool whose ``x-mcp-header`` annotations break the rules is dropped from
  ``tools/list`` with the reason; other transports may ignore the annotations.
* ``$ref`` in a tool schema is never resolved, least of all over the network: schemas are
  passed through as received, and header extraction follows ``properties`` only.
* Time spent thinking (an answerer at work) never counts against a request's timeout.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.core.tasks import TASKS_EXTENSION
from mcp_elicit.wire import headers as h
from mcp_elicit.wire.jsonrpc import RequestId
from mcp_elicit.wire.meta import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_elicit.wire.versions import is_modern

__all__ = [
    "Budget",
    "ClientInfo",
    "MessageBuilder",
    "ThinkClock",
    "ToolIndex",
    "client_capabilities",
    "param_headers",
    "request_headers",
]


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """What the client says about itself (``clientInfo``, an MCP ``Implementation``)."""

    name: str = "mcp-elicit"
    version: str = "0.1.0"
    title: str | None = None

    def to_json(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title:
            info["title"] = self.title
        return info


def client_capabilities(
    *, elicitation: Collection[str] = (), sampling: bool = False, roots: bool = False, tasks: bool = False
) -> dict[str, Any]:
    """The capabilities object for a client that can do exactly this (``tasks``: the
    tasks extension, which only 2026-07-28 requests carry)."""
    caps: dict[str, Any] = {}
    modes = [m for m in ("form", "url") if m in elicitation]
    if modes:
        caps["elicitation"] = {m: {} for m in modes}
    if sampling:
        caps["sampling"] = {}
    if roots:
        caps["roots"] = {}
    if tasks:
        caps["extensions"] = {TASKS_EXTENSION: {}}
    return caps


#: Requests that run the server's code, and so may report progress.
_PROGRESS_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})


class MessageBuilder:
    """Builds the client's JSON-RPC messages for one connection; owns the id counter."""

    def __init__(
        self,
        info: ClientInfo,
        capabilities: Mapping[str, Any],
        *,
        progress: bool = False,
        log_level: str | None = None,
    ) -> None:
        self.info = info
        self.capabilities = dict(capabilities)
        #: Ask for progress on requests that run user code (the request id is the token).
        self.progress = progress
        #: The least severe log message wanted (``notifications/message``); None: none.
        self.log_level = log_level
        self._ids = itertools.count(1)

    def next_id(self) -> RequestId:
        return next(self._ids)

    def meta(self, revision: str) -> dict[str, Any]:
        """The per-request ``_meta`` fields of a modern request."""
        meta = {
            PROTOCOL_VERSION_META_KEY: revision,
            CLIENT_CAPABILITIES_META_KEY: dict(self.capabilities),
            CLIENT_INFO_META_KEY: self.info.to_json(),
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_META_KEY] = self.log_level
        return meta

    def params(self, params: Mapping[str, Any] | None, revision: str) -> dict[str, Any] | None:
        """``params`` as sent at ``revision``: modern ones gain our ``_meta`` fields (a copy;
        the caller's mapping is never changed)."""
        if not is_modern(revision):
            return dict(params) if params is not None else None
        out = dict(params) if params is not None else {}
        given = out.get("_meta")
        meta = dict(given) if isinstance(given, Mapping) else {}
        meta.update(self.meta(revision))
        out["_meta"] = meta
        return out

    def request(
        self, method: str, params: Mapping[str, Any] | None, revision: str
    ) -> tuple[RequestId, dict[str, Any]]:
        """A new request with a fresh id."""
        rid = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        body = self.params(params, revision)
        if self.progress and method in _PROGRESS_METHODS:
            body = dict(body or {})
            body["_meta"] = {**body.get("_meta", {}), "progressToken": rid}
        if body is not None:
            message["params"] = body
        return rid, message

    def notification(self, method: str, params: Mapping[str, Any] | None, revision: str) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        body = self.params(params, revision)
        if body is not None:
            message["params"] = body
        return message

    @staticmethod
    def result(rid: RequestId, result: Mapping[str, Any]) -> dict[str, Any]:
        """Our answer to a server's request (handshake revisions only)."""
        return {"jsonrpc": "2.0", "id": rid, "result": dict(result)}

    @staticmethod
    def error(rid: RequestId, code: int, message: str, data: Any = None) -> dict[str, Any]:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return {"jsonrpc": "2.0", "id": rid, "error": error}


def request_headers(
    message: Mapping[str, Any],
    revision: str | None,
    *,
    header_specs: Mapping[tuple[str, ...], str] | None = None,
) -> dict[str, str]:
    """The HTTP headers a POST of ``message`` carries at ``revision`` (None: no revision yet,
    as for ``initialize``). ``header_specs`` are the tool's ``x-mcp-header`` paths."""
    headers: dict[str, str] = {}
    if revision is None:
        return headers
    headers["MCP-Protocol-Version"] = revision
    if not is_modern(revision):
        return headers
    method = message.get("method")
    if not isinstance(method, str):
        return headers
    headers["Mcp-Method"] = method
    params = message.get("params")
    params = params if isinstance(params, Mapping) else None
    name = h.name_source(method, params)
    if name is not None:
        headers["Mcp-Name"] = h.encode_value(name)
    if header_specs and method == "tools/call" and params is not None:
        arguments = params.get("arguments")
        headers.update(param_headers(header_specs, arguments if isinstance(arguments, Mapping) else {}))
    return headers


def param_headers(specs: Mapping[tuple[str, ...], str], arguments: Mapping[str, Any]) -> dict[str, str]:
    """``Mcp-Param-{Name}`` for each annotated argument that has a value."""
    out: dict[str, str] = {}
    for path, name in specs.items():
        value: Any = arguments
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool) and not h.integer_in_range(value):
            continue
        text = h.param_value(value)
        if text is not None:
            out[f"Mcp-Param-{name}"] = h.encode_value(text)
    return out


@dataclass(slots=True)
class ToolIndex:
    """The tools the server offers, as filtered for this transport, and each tool's
    ``x-mcp-header`` paths. ``rejected`` maps a dropped tool's name to the reason."""

    check_headers: bool = True
    specs: dict[str, dict[tuple[str, ...], str]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)

    def admit(self, tools: Iterable[object]) -> list[dict[str, Any]]:
        """The tools of one page that may be used; the rest are recorded in ``rejected``."""
        kept: list[dict[str, Any]] = []
        for tool in tools:
            if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
                continue
            name: str = tool["name"]
            schema = tool.get("inputSchema")
            specs: dict[tuple[str, ...], str] = {}
            if self.check_headers and isinstance(schema, Mapping):
                try:
                    specs = h.header_params(schema)
                except h.InvalidHeaderSpec as exc:
                    self.rejected[name] = str(exc)
                    self.specs.pop(name, None)
                    continue
            self.rejected.pop(name, None)
            self.specs[name] = specs
            kept.append(dict(tool))
        return kept

    def reset(self) -> None:
        self.specs.clear()
        self.rejected.clear()


@dataclass(slots=True)
class ThinkClock:
    """Total time spent waiting on people (answerers), shared by a connection's requests.

    ``start``/``stop`` nest: several answerers at once count as one stretch of thinking.
    """

    _busy: int = 0
    _since: float = 0.0
    _total: float = 0.0

    def start(self, now: float) -> None:
        if self._busy == 0:
            self._since = now
        self._busy += 1

    def stop(self, now: float) -> None:
        if self._busy == 0:
            return
        self._busy -= 1
        if self._busy == 0:
            self._total += now - self._since

    def total(self, now: float) -> float:
        return self._total + (now - self._since if self._busy else 0.0)


@dataclass(slots=True)
class Budget:
    """One request's network time: ``timeout`` seconds, minus nothing spent thinking."""

    timeout: float
    started: float
    clock: ThinkClock
    _thought_at_start: float = 0.0

    @classmethod
    def begin(cls, timeout: float, now: float, clock: ThinkClock) -> Budget:
        budget = cls(timeout, now, clock)
        budget._thought_at_start = clock.total(now)
        return budget

    def remaining(self, now: float) -> float:
        thought = self.clock.total(now) - self._thought_at_start
        return self.timeout - (now - self.started - thought)
