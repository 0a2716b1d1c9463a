"""Resources and resource templates: a function serves the contents at a URI.

Rules: a URI with ``{name}`` placeholders is a template (RFC 6570 simple ``{var}``, which
matches one path segment and is %-decoded, as its expansion %-encoded it, and reserved
``{+var}``, which matches anything and is passed as written; any other brace is refused
when the resource is registered); the function's
parameters are the placeholders, and a template does not serve a URI whose variables do
not fit their types. A fixed URI is an absolute URI (a scheme; no space nor control
character), or registering it is a ``ValueError``. A handler returns ``str`` (text), ``Blob`` (binary), a contents
model, or a list of those. Reading a URI nothing serves is ``ResourceNotFound`` with
``data.uri`` (-32602; -32002 on 2025-11-25), never an empty result. Handlers may take a
``Context`` and elicit; contents read in a round that carried answers (2026-07-28), or
made with the caller's stored secret or connection (``ctx.secret()``, ``ctx.connect()``
finding it stored: one round, no answers), are ``ttlMs: 0`` and ``cacheScope: "private"``
whatever the server's cache settings, as they hold what one person answered; those of a
resource with a ``readable`` rule, or whose handler read ``ctx.principal``, are
``cacheScope: "private"`` with the server's ``ttlMs`` (not every caller may read them, or
they may say who reads them). Caching hints are
2026-07-28's: a handshake session's results carry none. Templates are matched in time linear in the URI's length
and serve URIs of at most ``MAX_URI`` characters (as long as one may subscribe to).

Who may read: a resource registered with ``readable=`` serves only the callers for whom
``readable(principal, **variables)`` is true (the principal or None, the template's
variables as its function takes them); to anyone else it is "not found", exactly like a
URI nothing serves, before the handler runs, and a fixed one is not listed. The same rule
decides who may subscribe to it and who hears that it changed, so it is a plain function without I/O or side effects
(it runs for each subscriber at each update). Without the rule, anyone the template
serves may subscribe: a handler refusing inside is not run to decide a subscription.
"""

from __future__ import annotations

import base64
import inspect
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from mcp_types import BlobResourceContents, TextResourceContents

from mcp_elicit.core.quoting import shown_name
from mcp_elicit.core.subscriptions import MAX_URI
from mcp_elicit.errors import ResourceNotFound
from mcp_elicit.server.asking import awaited_as_own
from mcp_elicit.server.auth import Principal
from mcp_elicit.server.context import Context
from mcp_elicit.server.invalid_arguments import ArgumentsError
from mcp_elicit.server.results import Blob, dump, finite, unawaited
from mcp_elicit.server.signature import Signature, handler, handler_doc, handler_name
from mcp_elicit.server.threads import run_handler

__all__ = ["Readable", "ResourceDef", "find_resource", "is_template", "not_found"]

#: ``readable(principal, **variables) -> bool``: whether a caller may read the resource.
Readable = Callable[..., bool]

#: A fixed resource's URI, as RFC 3986 has it: a scheme, a colon, then no space nor control.
_ABSOLUTE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20\x7f]*")
_VAR = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")
#: Every brace expression, or a brace standing alone: each must be a ``_VAR``.
_EXPRESSION = re.compile(r"\{[^{}]*\}|[{}]")


def is_template(uri: str) -> bool:
    return _VAR.search(uri) is not None


def find_resource(
    resources: Mapping[str, ResourceDef], templates: list[ResourceDef], uri: str
) -> tuple[ResourceDef, Mapping[str, str]]:
    """What serves ``uri`` (a resource, else the first template that matches and whose
    function takes the variables) and the template's variables; ``ResourceNotFound`` when
    nothing does, saying why the template it matched does not serve it."""
    found = resources.get(uri)
    if found is not None:
        return found, {}
    if len(uri) > MAX_URI and templates:  # matching is linear, but megabytes would hold the loop
        raise not_found(
            uri, f"it is {len(uri)} characters long; a template here serves URIs of at most {MAX_URI}"
        )
    reason: str | None = None
    for template in templates:
        variables = template.match(uri)
        if variables is None:
            continue
        try:
            template.signature.bind(variables)
        except ArgumentsError as exc:
            if reason is None:
                said = exc.redacted(f"resource {template.uri}") if template.redact_errors else str(exc)
                reason = f"the template {template.uri} does not take it: {said}"
            continue
        return template, variables
    raise not_found(uri, reason)


def not_found(uri: str, reason: str | None = None) -> ResourceNotFound:
    """``ResourceNotFound`` for a URI a request gave: its message repeats it as an unknown
    tool's name is, cut short and inert (``shown_name``); ``data.uri`` holds it whole."""
    return ResourceNotFound(uri, reason, shown=shown_name(uri))


def _unescape(value: str) -> str | None:
    """A simple variable's value as RFC 6570 expanded it (every character outside the
    unreserved set %-encoded, as UTF-8), or None when no value expands to it."""
    if _BAD_ESCAPE.search(value):
        return None
    try:
        return urllib.parse.unquote(value, errors="strict")
    except UnicodeDecodeError:
        return None


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _compile(template: str) -> re.Pattern[str]:
    """The template as a regular expression: for its variables' names and order only (a
    backtracking match is polynomial in the URI's length with several variables in a
    row, so URIs are matched by ``_Shape``)."""
    pattern, last = "", 0
    for m in _VAR.finditer(template):
        pattern += re.escape(template[last : m.start()])
        pattern += f"(?P<{m.group(2)}>.+)" if m.group(1) else f"(?P<{m.group(2)}>[^/?#]+)"
        last = m.end()
    return re.compile(pattern + re.escape(template[last:]) + r"\Z")


@dataclass(frozen=True, slots=True)
class _Shape:
    """A template as its leading text and, per variable, its name, the characters its
    value may not hold, and the text after it. ``split`` matches a URI in time linear in
    its length (times the number of variables): each variable, in order, takes the
    longest value after which the rest of the template can still match, as the greedy
    expression would, without backtracking."""

    head: str
    variables: tuple[tuple[str, str, str], ...]

    @staticmethod
    def ambiguous(template: str) -> bool:
        """Whether a greedy expression could backtrack on the template: some variable but
        the last may end in more than one place, because it is ``{+reserved}`` or the text
        after it does not start with a character its value cannot hold (``/``, ``?``,
        ``#``). Templates of one variable per segment are matched by the expression, some
        40 times faster."""
        shape = _Shape.of(template)
        return any(
            banned != "/?#" or tail[:1] not in ("/", "?", "#") for _, banned, tail in shape.variables[:-1]
        )

    @classmethod
    def of(cls, template: str) -> _Shape:
        found = list(_VAR.finditer(template))
        variables = []
        for i, m in enumerate(found):
            end = found[i + 1].start() if i + 1 < len(found) else len(template)
            variables.append((m.group(2), "\n" if m.group(1) else "/?#", template[m.end() : end]))
        return cls(template[: found[0].start()], tuple(variables))

    def split(self, uri: str) -> dict[str, str] | None:
        n = len(uri)
        if not uri.startswith(self.head) or not uri.endswith(self.variables[-1][2]):
            return None
        # choices[i][pos]: where variable i's value ends when it starts at pos (-1: nowhere)
        choices: list[list[int]] = []
        fits = [pos == n for pos in range(n + 1)]  # where the rest of the template can start
        for _, banned, tail in reversed(self.variables):
            last, latest = -1, [0] * (n + 1)  # latest[e]: the last end at or before e
            for e in range(n + 1):
                if uri.startswith(tail, e) and e + len(tail) <= n and fits[e + len(tail)]:
                    last = e
                latest[e] = last
            choice, stop = [-1] * (n + 1), n  # stop: the first banned character at or after pos
            for pos in range(n, -1, -1):
                if pos < n and uri[pos] in banned:
                    stop = pos
                end = latest[stop]
                choice[pos] = end if end > pos else -1
            choices.append(choice)
            fits = [end >= 0 for end in choice]
        choices.reverse()
        values, pos = {}, len(self.head)
        for (name, _, tail), choice in zip(self.variables, choices, strict=True):
            end = choice[pos]
            if end < 0:
                return None
            values[name], pos = uri[pos:end], end + len(tail)
        return values


@dataclass(slots=True)
class ResourceDef:
    uri: str
    fn: Callable[..., Any]
    signature: Signature
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    pattern: re.Pattern[str] | None = None
    wire: dict[str, Any] = field(default_factory=dict)
    #: The simple ``{var}`` placeholders, whose values come %-encoded.
    encoded: frozenset[str] = frozenset()
    shape: _Shape | None = None
    readable: Readable | None = None
    #: The server's ``redact_tool_errors``: a template's validator's own message withheld.
    redact_errors: bool = False
    #: The scopes a caller's token must hold to read it over HTTP (``app.resource(scopes=)``).
    scopes: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        readable: Readable | None = None,
        extras: Mapping[str, Any] | None = None,
    ) -> ResourceDef:
        """The resource or template serving ``uri``; ``extras``: what its listing entry adds
        (``listing_extras``: size, annotations, icons, ``_meta``), checked already."""
        if readable is not None and (not callable(readable) or inspect.iscoroutinefunction(readable)):
            raise ValueError(
                f"resource {uri!r}: readable= takes a plain function (principal, **variables) -> bool; "
                "it runs for every subscriber at every update, so it may not await"
            )
        for m in _EXPRESSION.finditer(uri):
            if not _VAR.fullmatch(m.group()):
                raise ValueError(
                    f"resource {uri!r}: {m.group()!r} is not a placeholder this server matches; a URI "
                    "template holds only {name} (one path segment) and {+name} (anything)"
                )
        if not is_template(uri) and not _ABSOLUTE_URI.fullmatch(uri):
            raise ValueError(
                f"resource {uri!r} is not an absolute URI: it needs a scheme (test://..., file:///..., "
                "urn:...) and no space or control character (%-encode them)"
            )
        fn = handler(fn, "resource")
        sig = Signature.of(fn, context_type=Context)
        pattern = _compile(uri) if is_template(uri) else None
        if pattern is not None:
            missing = set(pattern.groupindex) - set(sig.names)
            extra = set(sig.names) - set(pattern.groupindex)
            if missing or extra:
                raise ValueError(
                    f"resource template {uri!r}: the function's parameters must be exactly the placeholders "
                    f"(missing: {sorted(missing)}, extra: {sorted(extra)})"
                )
        elif sig.names:
            raise ValueError(f"resource {uri!r} has no placeholders, so its function takes no arguments")
        doc = description if description is not None else handler_doc(fn)
        res = cls(uri, fn, sig, name or _resource_name(fn), title, doc, mime_type, pattern)
        res.shape = _Shape.of(uri) if pattern is not None and _Shape.ambiguous(uri) else None
        res.encoded = frozenset(m.group(2) for m in _VAR.finditer(uri) if not m.group(1))
        res.readable = readable
        wire: dict[str, Any] = {("uriTemplate" if pattern else "uri"): uri, "name": res.name}
        if title:
            wire["title"] = title
        if doc:
            wire["description"] = doc
        if mime_type:
            wire["mimeType"] = mime_type
        res.wire = {**wire, **(extras or {})}
        return res

    def match(self, uri: str) -> dict[str, str] | None:
        if self.pattern is None:
            return {} if uri == self.uri else None
        if self.shape is None:  # one variable per segment: the expression cannot backtrack
            found = self.pattern.match(uri)
            variables = found.groupdict() if found is not None else None
        else:
            variables = self.shape.split(uri)
        if variables is None:
            return None
        for name in self.encoded:
            value = _unescape(variables[name])
            if value is None:
                return None
            variables[name] = value
        return variables

    def may_read(self, principal: Principal | None, variables: Mapping[str, str]) -> bool:
        """Whether ``principal`` may read (and subscribe to) this resource at the URI whose
        ``variables`` are given (see the module's rules)."""
        if self.readable is None:
            return True
        return bool(self.readable(principal, **self.signature.bind(variables)))

    async def read(self, ctx: Context, uri: str, variables: Mapping[str, str]) -> dict[str, Any]:
        kwargs = self.signature.bind(variables)
        if self.signature.context_param is not None:
            kwargs[self.signature.context_param] = ctx
        try:
            if self.signature.is_async:
                value = await awaited_as_own(self.fn, kwargs, modern=ctx.call.modern)
            else:  # a plain function may block: not on the event loop
                value = await run_handler(
                    f"resource {self.uri!r}", self.fn, kwargs, self.signature.context_param
                )
        except ResourceNotFound as exc:  # the handler refusing: its URI repeated inert, as ours
            said = not_found(exc.uri, exc.reason)
            raise (said.for_handshake() if exc.handshake else said) from None
        try:  # once, from the top, before a model is dumped (JSON mode writes NaN as null)
            finite(value)
        except TypeError as exc:
            raise TypeError(f"resource {self.uri!r} returned a value that cannot be sent: {exc}") from None
        items = value if isinstance(value, list) else [value]
        result: dict[str, Any] = {"contents": [self._contents(uri, item) for item in items]}
        if not ctx.call.modern:  # caching hints are 2026-07-28's
            return result
        params, used = ctx.call.params, ctx.used
        if "requestState" in params or "inputResponses" in params or "secret" in used or "connection" in used:
            # made from this person's answers, or their stored secret or connection (the
            # same contents as the round that asked for it): for no shared cache, and not
            # to be reused
            result["ttlMs"], result["cacheScope"] = 0, "private"
        elif self.readable is not None or used:
            # not every caller may read it, or it says who reads it: no shared cache
            result["cacheScope"] = "private"
        return result

    def _contents(self, uri: str, item: object) -> dict[str, Any]:
        if isinstance(item, (TextResourceContents, BlobResourceContents)):
            return dump(item)
        if isinstance(item, str):
            return {"uri": uri, "mimeType": self.mime_type or "text/plain", "text": item}
        if isinstance(item, Blob):
            return {
                "uri": uri,
                "mimeType": item.mime_type,
                "blob": base64.b64encode(item.data).decode("ascii"),
            }
        if isinstance(item, bytes):
            mime = self.mime_type or "application/octet-stream"
            return {"uri": uri, "mimeType": mime, "blob": base64.b64encode(item).decode("ascii")}
        if isinstance(item, Mapping):
            return {
                "uri": uri,
                "mimeType": self.mime_type or "application/json",
                "text": orjson.dumps(item).decode(),
            }
        if (fault := unawaited(item)) is not None:  # looked for last: no cost for what can be sent
            raise TypeError(f"resource {self.uri!r} returned a value that cannot be sent: {fault}")
        raise TypeError(f"resource {self.uri!r} returned {type(item).__name__}; return str, Blob or contents")


def _resource_name(fn: Callable[..., Any]) -> str:
    """A resource's name without ``name=``: the function's (a lambda's ``<lambda>`` too:
    a resource's name is free text)."""
    return "<lambda>" if getattr(fn, "__name__", None) == "<lambda>" else handler_name(fn, "resource")
