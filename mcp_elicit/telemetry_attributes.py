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
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import orjson

from mcp_elicit.inert_text import inert
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

#: What follows a URL's "://" in a message, up to a space or a quote. Found from the "://"
#: whatever the scheme before it: a search from every place a scheme could start takes
#: time quadratic in text made of many such places ("a.a.a.a..."), and the text can be
#: the other side's. Only the few letters right before it are read (:func:`_web_before`):
#: after "http" or "https", the authority follows any further slashes (``https:///me:pw@h``).
_AFTER_SCHEME = re.compile(r"://([^\s'\"]*)")
#: An http(s) URL written without the usual "//" after its scheme (``https:/host/?key``,
#: ``HTTPS:host``, backslashes): browsers open it as the same page, key and all. Found
#: from the scheme's fixed letters, so linear in any text.
_ODD_WEB = re.compile(r"(?i)(?<![a-z0-9+.-])(https?:)(?!//)([/\\]*)([^\s'\"]*)")
#: A URL written without its scheme (``//host/path?key``, as a message quotes a relative
#: reference): "//" not after a letter, digit, "_", ":", "/" or "\\", then a host's or a
#: user name's first character, or the ":" of a password without one (``//:pw@h``).
#: Linear likewise: the run after it is taken whole.
_NO_SCHEME = re.compile(r"(?<![\w:/\\])//(?=[A-Za-z0-9\[%~!$&*+,;=:._-])([^\s'\"]*)")
#: Characters that end a URL in prose when they end its run (``<https://h/?k>``,
#: ``(see https://h/?k).``): a closing bracket the URL does not open, or punctuation.
_CLOSING = {")": "(", "]": "[", "}": "{", ">": "<"}
_PUNCTUATION = frozenset(".,;:!?")
#: How many such characters at most are kept after a redacted query or fragment: each is
#: one of the few above and says nothing, but a long run of them is the URL's own.
_TRAILING = 4
_QUERY = re.compile(r"[?#]")
#: An http(s) URI's start as a browser reads it: any spaces or control characters before
#: it (a browser drops them), any slashes or backslashes after the scheme, or none, and
#: the authority follows (``https:/h``, ``https:///h``, ``HTTPS:h``, `` https:/h``).
_WEB_START = re.compile(r"(?i)[\x00-\x20]*https?:[/\\]*")
#: Spaces and control characters a browser drops before a URI (``\t//h``).
_LEADING = "".join(map(chr, range(0x21)))
_SLASHES = re.compile(r"[/\\]*")
#: The characters of a scheme besides letters and digits (``svn+ssh``).
_SCHEME_MARKS = frozenset("+.-")
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
            message = _uri_redacted(message, self.uri)
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


def redact_urls(text: str) -> str:
    """``text`` with every URL's user name and password, query and fragment replaced by
    ``REDACTED`` (where keys and tokens travel); its scheme, host and path stay. An http
    or https URL with other than two slashes after its scheme is one too: a browser
    opens ``https:/host/?key`` and ``https:///me:pw@host/`` as ``https://host/?key`` and
    ``https://me:pw@host/``; so is one without its scheme (``//host/path?key``, a
    relative reference a message may quote). So is a URL another's path holds
    (``https://proxy/https://me:pw@host/``, ``//h/a://me:pw@x/``): its user name and
    password are redacted too (its query is the outer URL's, redacted whole).

    A URL runs to a space or a quote, less what ends it in prose, which stays as written
    after it: a closing bracket it does not open, or punctuation (``<https://h/?k>``,
    ``(see https://h/?k).``). Only a few such characters at its very end are so kept,
    none of them anything but such a character: a query ``?k=S)ECRET`` is the URL's to
    its end, and is redacted whole."""
    if "://" in text:
        text = _AFTER_SCHEME.sub(_redacted, text)
    if ":" in text:
        text = _ODD_WEB.sub(_odd_redacted, text)
    if "//" in text:
        text = _NO_SCHEME.sub(_no_scheme_redacted, text)
    return text


def redact_uri(uri: str) -> str:
    """One URI (a resource's, for ``mcp.resource.uri``) with its user name and password,
    query and fragment replaced by ``REDACTED``, whatever its scheme and characters; its
    scheme, authority and path stay. Its authority follows a "//" at its start or its
    first "://" before any query or fragment, never one its query or fragment holds
    (``x:y?token=k&u=https://h``). What comes before that "://" need not be a scheme RFC
    3986 allows (`` https://``, ``1x://``, ``x_y://``): the authority after it is redacted
    all the same; an http or https one is read as a browser reads it, whatever slashes
    follow its scheme (``https:/me:pw@h``, ``https:///me:pw@h``: :func:`redact_urls`'s
    rule), also after spaces or control characters a browser drops (`` https:/me:pw@h``)
    and after letters (``xhttps:///me:pw@h``, as :func:`redact_urls` reads one). A URL
    its path holds has its user name and password redacted too
    (``//h/a://me:pw@x/``), as :func:`redact_urls` does. Given alone, it ends where the
    string does: unlike a URL in prose, nothing it ends with is kept after ``REDACTED``
    (a ``)`` there is its query's)."""
    web = _WEB_START.match(uri)
    if web is not None:
        return web[0] + _kept(uri[web.end() :], web=True)
    lead = len(uri) - len(uri.lstrip(_LEADING))
    if uri.startswith("//", lead):  # a network-path reference: its authority, without a scheme
        return uri[: lead + 2] + _kept(uri[lead + 2 :])
    scheme, sep, rest = uri.partition("://")
    if sep and _QUERY.search(scheme) is None:
        return scheme + sep + _kept(rest, web=_web_before(scheme, len(scheme)))
    return _kept(uri, authority=False)


def _uri_redacted(message: str, uri: str) -> str:
    """``message`` with each repetition of ``uri`` as :func:`redact_uri` gives it: the URI as
    is, or inert (``inert_text.inert``, its space separators kept or not), as an error's
    message quotes a URI a request gave (``Resource not found: ...``). A repetition cut
    short (``urn:x?token=S… (300 characters)``) is redacted from where ``redact_uri``
    would first change it. Without this, a URI with no "://" (which :func:`redact_urls`
    finds) repeated other than whole kept its query on the span's status."""
    for form in dict.fromkeys((inert(uri), inert(uri, spaces=True), uri)):  # the longest first
        message = _repeats_redacted(message, form)
    return message


def _repeats_redacted(message: str, form: str) -> str:
    redacted = redact_uri(form)
    kept = 0  # how much of ``form`` redact_uri leaves as it is, from its start
    for a, b in zip(form, redacted, strict=False):
        if a != b:
            break
        kept += 1
    if kept >= len(form):
        return message
    needle = form[: kept + 1]  # a repetition holds at least one character redacted
    parts, at = [], 0
    while (start := message.find(needle, at)) >= 0:
        if message.startswith(form, start):
            parts += [message[at:start], redacted]
            at = start + len(form)
            continue
        low, high = len(needle), min(len(form), len(message) - start)  # how much of it is repeated
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if message.startswith(form[:middle], start) else (low, middle - 1)
        parts += [message[at:start], form[:kept] + "REDACTED"]
        at = start + low
    return "".join(parts) + message[at:] if parts else message


def _redacted(found: re.Match[str]) -> str:
    return "://" + _kept_in_prose(found[1], web=_web_before(found.string, found.start()))


def _web_before(text: str, colon: int) -> bool:
    """Whether the scheme that ends at ``colon`` ends in "http" or "https", whatever its
    case or the letters before them: a browser reads such a URL's authority after any
    slashes (``https:///me:pw@h``), and it takes no more to be safe."""
    return text[max(0, colon - 5) : colon].lower().endswith(("http", "https"))


def _inner_start(head: str, at: int) -> tuple[int, bool] | None:
    """Where the authority of the next URL ``head`` holds from ``at`` starts, and whether
    it is an http(s) one's (its slashes not yet skipped): after a "://" (``h/a://me@x``),
    or an http(s) scheme written with other than two slashes not after another scheme's
    character (``h/go/https:/me@x``, as :data:`_ODD_WEB` finds one in prose). Found from
    each ":" and the few characters before it: a search for every pattern at every
    place reads the text several times over."""
    while (colon := head.find(":", at)) >= 0:
        at = colon + 1
        web = _web_before(head, colon)
        if head.startswith("//", at):
            return at + 2, web
        if web:
            before = colon - (5 if head[colon - 1] in "sS" else 4) - 1
            mark = head[before] if before >= 0 else ""
            if not (mark.isascii() and (mark.isalnum() or mark in _SCHEME_MARKS)):
                return at, True
    return None


def _odd_redacted(found: re.Match[str]) -> str:
    return found[1] + found[2] + _kept_in_prose(found[3], web=True)


def _no_scheme_redacted(found: re.Match[str]) -> str:
    return "//" + _kept_in_prose(found[1])


def _kept_in_prose(run: str, *, web: bool = False) -> str:
    """A URL's run up to a space or quote (after its "://") as :func:`_kept` leaves it,
    less what ends it in prose: at most :data:`_TRAILING` characters at its very end,
    each a closing bracket the URL does not open or punctuation (``.``, ``,``, ``;``,
    ``:``, ``!``, ``?``), kept as written after the redacted URL. Any other character,
    and a bracket the URL opens, is the URL's: a query ``?k=S)ECRET`` is redacted whole,
    as is one that ends in more such characters than are kept."""
    end = len(run)
    while len(run) - end < _TRAILING and end > 0:
        last = run[end - 1]
        opening = _CLOSING.get(last)
        if opening is not None:
            if run.count(opening, 0, end) >= run.count(last, 0, end):
                break  # the URL opens it: its own
        elif last not in _PUNCTUATION:
            break
        end -= 1
    return _kept(run[:end], web=web) + run[end:]


def _kept(rest: str, *, authority: bool = True, web: bool = False) -> str:
    """What follows a URL's "://" (or a whole URI that has no authority, when not
    ``authority``) with its user information, query and fragment redacted, and the user
    information of every URL its path holds. ``web``: an http(s) URL's, whose authority
    follows any slashes or backslashes ``rest`` starts with."""
    query = _QUERY.search(rest)
    head = rest if query is None else rest[: query.start()]
    head = _user_info_redacted(head, 0 if authority else None, web=web)
    return head if query is None else head + rest[query.start()] + "REDACTED"


def _user_info_redacted(head: str, start: int | None, *, web: bool) -> str:
    """``head`` (a URL's authority from ``start``, if not None, and path: no query or
    fragment) with the user information of that authority and of each URL the path
    holds (:func:`_inner_start`) redacted: up to the authority's last "@", as a browser
    reads it.

    Linear in any text, and quick: the search only goes forward; an authority is read
    once (a URL starting inside one already read shares its end and its "@"); and it
    skips what cannot start an authority holding the next "@" (:func:`_skipped_to`)."""
    parts: list[str] = []
    done, end, searched, at = 0, -1, 0, -1
    while True:
        if start is not None:
            if web:
                slashes = _SLASHES.match(head, start)
                start = start if slashes is None else slashes.end()
            searched = start
            if start > end:  # past the last authority read: a new one
                end = head.find("/", start)  # ``head`` holds no "?" or "#"
                end = len(head) if end < 0 else end
                sign = head.rfind("@", start, end)
                if sign >= 0:
                    parts += (head[done:start], "REDACTED:REDACTED")
                    done = sign
                if end == len(head):
                    break  # no URL starts past its own authority
                searched = _skipped_to(head, start, end)
        if at < searched:  # only a URL whose authority holds the next "@" has user information
            at = head.find("@", searched)
            if at < 0:
                break
            before = head.rfind("/", searched, at)
            if before >= 0:
                searched = _skipped_to(head, searched, before)
        inner = _inner_start(head, searched)
        if inner is None:
            break
        start, web = inner
    return "".join(parts) + head[done:] if parts else head


def _skipped_to(head: str, searched: int, slash: int) -> int:
    """Where to look for the next URL's start, ``slash`` being a "/" at or past
    ``searched``: only one whose authority starts past that "/" can hold what follows
    it, and it starts at the ":" right before the slashes and backslashes that "/" is
    one of (``a://``, ``https:\\/``), or past them."""
    run = slash
    while run > searched and head[run - 1] in "/\\":
        run -= 1
    return max(searched, run - 1)


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
