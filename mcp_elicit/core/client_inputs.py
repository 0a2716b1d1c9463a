"""What a server asks the client for (elicitation, sampling, roots), read for an answerer,
and the answers checked before they leave. No I/O.

Rules:

* An elicitation is ``form`` mode unless ``mode`` says ``url``. A form's
  ``requestedSchema`` is read with the same ``FormSchema`` the server side uses; a schema
  outside the flat subset is not rendered: the request carries ``schema_problem`` instead,
  for the client to report (and to answer ``cancel``). Fields the secret guard flags are
  listed in ``warnings`` so a user interface can say so: each names its field and speaks
  to the person answering. So are the defaults a field refuses itself (pydantic sends
  ``Field("", min_length=1)`` as such a default): the field is shown without it. The
  JSON Schema keywords beyond the subset that SDKs send are taken in (``forms.foreign``),
  and what the fields do not show is a warning too.
* An accepted form answer's Python values are first written as the JSON its fields take
  (``_as_json``): a ``date`` or ``datetime`` for a ``date`` or ``date-time`` field as its
  ISO text (an offset in seconds, which RFC 3339 cannot write, as the same instant in
  UTC; then checked as such text is: a ``datetime`` without an offset for a
  ``date-time``, or any ``datetime`` for a ``date``, is refused saying what fits), a set
  for a multi-select as a list in the options' order; anything else is left to the checks.
* An accepted form answer gets the schema's defaults for absent fields, then must validate
  (types, ranges, lengths, formats, enum membership, required fields), and its text must
  be sendable (no lone surrogate, which JSON in UTF-8 cannot carry); what is sent is the
  cleaned content. A URL-mode answer never carries content.
* A sampling request's params are checked against the official model before the
  callback sees them (a malformed one is the server's ``ProtocolViolation``); so is a
  tool-enabled one (``tools`` or ``toolChoice``), which a client receives only when it
  declares ``sampling.tools``, and this one declares ``sampling`` alone. Sampling and
  roots answers are checked against the official result models.
* A request knows who asks (``server``), under which key, and for which original request
  (``origin``), so an answerer can say all three to the user.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from pydantic import ValidationError

from mcp_elicit.command_redaction import redact_secrets
from mcp_elicit.core.quoting import quoted, shown_text
from mcp_elicit.errors import (
    FormSchemaError,
    FormValidationError,
    InvalidAnswer,
    ProtocolViolation,
    ValidationProblem,
    shown_repr,
)
from mcp_elicit.forms import FormSchema, MultiChoice, SecretFinding, String
from mcp_elicit.url_redaction import redact_uri
from mcp_elicit.wire.jsonrpc import nests_past

__all__ = [
    "MAX_URL",
    "ElicitationRequest",
    "Origin",
    "ServerInfo",
    "check_elicit_answer",
    "check_roots_answer",
    "check_sampling_answer",
    "check_sampling_request",
    "parse_elicitation",
    "unsendable_character",
]

#: The longest URL a URL-mode elicitation may carry (characters): what every browser and
#: proxy takes, and what a screen can show whole before a person consents to open it. A
#: server refuses to send longer (``server.outgoing``), a client to open it (``client.url_consent``).
MAX_URL: Final = 2048

#: The most characters of a server's text (a message, a URL) ``describe`` quotes.
_DESCRIBED: Final = 200
#: Nesting past which a form is not read: a flat form is a few levels deep, and how deep
#: reading it recurses before Python stops it differs by version (3.11 stops short of
#: 1000 levels, 3.13 does not), so the verdict on a very deep one would too.
_FORM_DEPTH: Final = 64
#: The most characters of a server's name, version and title kept.
_NAMED: Final = 100

#: A lone surrogate: text UTF-8 (so a JSON reply) cannot encode.
_UNPAIRED = re.compile("[\ud800-\udfff]")

#: The formats whose text a ``date`` or ``datetime`` writes (``_as_json``).
_DATES: Final = frozenset({"date", "date-time"})

Mode = Literal["form", "url"]
_ACTIONS = ("accept", "decline", "cancel")


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Who the server is: its ``serverInfo`` and where it was reached (URL or command)."""

    name: str = "unknown server"
    version: str = ""
    title: str | None = None
    where: str = ""
    #: The secrets it was given where it was reached (a stdio command's ``--token T``:
    #: ``command_redaction.secret_values``), which ``ElicitationRequest.describe`` hides
    #: where its question repeats them.
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def from_json(cls, info: object, where: str, secrets: tuple[str, ...] = ()) -> ServerInfo:
        if not isinstance(info, Mapping):
            return cls(where=where, secrets=secrets)
        title = info.get("title")
        return cls(  # each cut short: they name the server in every message about it
            name=_cut(_text(info.get("name")), _NAMED) or "unknown server",
            version=_cut(_text(info.get("version")), _NAMED),
            title=_cut(title, _NAMED) if isinstance(title, str) else None,
            where=where,
            secrets=secrets,
        )

    def __str__(self) -> str:  # in every message about the server: what it chose, escaped
        if self.where and self == ServerInfo(where=self.where):  # it has told nothing yet
            return shown_text(self.where)  # "http://HOST/mcp", not "unknown server (http://HOST/mcp)"
        label = self.title or self.name
        version = f" {self.version}" if self.version else ""
        return shown_text(f"{label}{version}" + (f" ({self.where})" if self.where else ""))


def _text(value: object) -> str:
    """A string, or a number written out; nothing else (a list or an object, perhaps
    nested deeper than ``str`` can follow) is text: ""."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


@dataclass(frozen=True, slots=True)
class Origin:
    """The client request a question belongs to: ``tools/call`` of tool ``book_table``. As
    messages, log lines and pages name it, a resource's URI is redacted (``redact_uri``:
    no user name and password, query or fragment, where signed URLs carry their key)."""

    method: str
    target: str | None = None

    def __str__(self) -> str:
        if not self.target:
            return self.method
        return f"{self.method} {redact_uri(self.target) if self.method == 'resources/read' else self.target}"

    @classmethod
    def of(cls, method: str, params: Mapping[str, Any] | None) -> Origin:
        if params is None:
            return cls(method)
        target = params.get("uri") if method == "resources/read" else params.get("name")
        return cls(method, target if isinstance(target, str) else None)


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """One ``elicitation/create``, ready for an answerer.

    ``key`` is the input request key (2026-07-28) or ``"request <id>"`` for a server's own
    request (2025-11-25). ``problems`` is set when an earlier answer did not validate and
    the answerer is asked again. ``finished``, for a URL-mode request of a 2025-11-25
    session that carries an ``elicitationId``, returns once the server says the step on
    the page is done (``notifications/elicitation/complete``); None when nobody will say.
    ``sent_with`` says how the answer travels: "" as the response to the server's own
    request (2025-11-25), written as soon as the answer is given; else the request that
    carries it once every question of its round is answered (2026-07-28): ``"retry"``
    (the request of ``origin`` sent again) or ``"tasks/update"`` (a task's questions).
    """

    server: ServerInfo
    key: str
    origin: Origin
    message: str
    mode: Mode = "form"
    schema: FormSchema | None = None
    schema_problem: str | None = None
    url: str | None = None
    elicitation_id: str | None = None
    warnings: tuple[str, ...] = ()
    problems: tuple[ValidationProblem, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict, repr=False)
    finished: Callable[[], Awaitable[object]] | None = field(default=None, repr=False, compare=False)
    sent_with: Literal["", "retry", "tasks/update"] = ""

    @property
    def method(self) -> str:
        return "elicitation/create"

    @property
    def fields(self) -> tuple[str, ...]:
        """The form's field names (empty for URL mode or an unreadable schema)."""
        return self.schema.names if self.schema is not None else ()

    def again(self, problems: tuple[ValidationProblem, ...]) -> ElicitationRequest:
        return replace(self, problems=problems)

    def describe(self) -> str:
        """Which server, which question, which fields: for reports to a person (and the
        errors a server is sent), each of the server's texts cut short. A URL-mode URL is
        redacted first (``redact_uri``: a one-time code or token in its query, a password),
        then cut; so is a secret the server was given (``ServerInfo.secrets``) where it
        repeats one, before any cut leaves part of it."""

        def shown(text: str) -> str:
            return _cut(redact_secrets(text, self.server.secrets))

        key = shown(self.key)
        what = f"question {key!r} ({shown(self.message)!r})" if self.message else f"question {key!r}"
        fields = f"; fields: {shown(', '.join(self.fields))}" if self.fields else ""
        url = f"; url: {_cut(redact_uri(self.url))}" if self.url else ""
        return f"{self.server} asked {what} during {self.origin} [{self.mode} mode{fields}{url}]"


def _cut(text: str, most: int = _DESCRIBED) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def parse_elicitation(
    params: Mapping[str, Any], *, server: ServerInfo, key: str, origin: Origin
) -> ElicitationRequest:
    """Read an ``elicitation/create`` params object; a broken schema is kept as a problem."""
    mode = params.get("mode", "form")
    message = params.get("message")
    if not isinstance(message, str):  # both revisions require it: the person must see what is asked
        said = "has no message" if message is None else f"message must be text, not {quoted(message)}"
        raise ProtocolViolation(
            f"elicitation {_cut(key)!r} from {server} {said}; it must say, as text, what it asks for and why"
        )
    if mode == "url":
        url = params.get("url")
        if not isinstance(url, str) or not url:
            raise ProtocolViolation(f"URL-mode elicitation {_cut(key)!r} from {server} has no url")
        eid = params.get("elicitationId")
        return ElicitationRequest(
            server=server,
            key=key,
            origin=origin,
            message=message,
            mode="url",
            url=url,
            elicitation_id=eid if isinstance(eid, str) else None,
            params=params,
        )
    if mode != "form":
        raise ProtocolViolation(f"elicitation {_cut(key)!r} from {server} has unknown mode {quoted(mode)}")
    schema: FormSchema | None = None
    problem: str | None = None
    warnings: tuple[str, ...] = ()
    requested = params.get("requestedSchema")
    too_deep = "the form is nested too deeply to read"
    if nests_past(requested, _FORM_DEPTH):  # the same verdict on every Python (see _FORM_DEPTH)
        problem = too_deep
    else:
        try:
            schema = FormSchema.parse(
                requested, check_secrets=False, unfit_defaults="drop", beyond_subset="relax"
            )
        except FormSchemaError as exc:
            problem = str(exc)
        except RecursionError:  # read by recursion: Python stops short of what JSON takes
            problem = too_deep
        else:
            warnings = (
                *(_secret_warning(f) for f in schema.secret_findings),
                *(f"Field {p.field!r}: {p.message}." for p in schema.dropped_defaults),
                *(f"Field {p.field!r} {p.message}." for p in schema.relaxed),
            )
    return ElicitationRequest(
        server=server,
        key=key,
        origin=origin,
        message=message,
        schema=schema,
        schema_problem=problem,
        warnings=warnings,
        params=params,
    )


def _secret_warning(finding: SecretFinding) -> str:
    """What the person answering is told about a field that seems to ask for a secret."""
    return (
        f"Field {finding.field!r} seems to ask for {finding.asks_for} (its {finding.where} says "
        f"{finding.phrase!r}). MCP forbids servers to ask for passwords, API keys, access tokens "
        "or payment details in a form (it should send you to a web page, by URL, for those): do "
        "not enter a real one here unless you trust this server with it."
    )


def check_elicit_answer(request: ElicitationRequest, answer: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ElicitResult`` to send for ``answer``; ``FormValidationError`` when the content
    does not fit the form (after defaults), ``InvalidAnswer`` (a ``ValueError``) for a malformed
    answer."""
    action = answer.get("action")
    if action not in _ACTIONS:
        raise InvalidAnswer(
            f"an elicitation answer's action must be accept, decline or cancel, not {shown_repr(action)}"
        )
    if action != "accept" or request.mode == "url":
        return {"action": action}
    if request.schema is None:
        raise InvalidAnswer(
            f"cannot accept {request.key!r}: its form could not be read ({request.schema_problem})"
        )
    content = answer.get("content")
    if content is None:
        content = {}
    filled = request.schema.apply_defaults(_as_json(request.schema, content))
    checked = request.schema.validate(filled)
    unsendable = [
        ValidationProblem(
            name,
            f"has a character that is not text (U+{ord(found):04X}), which no JSON reply can carry",
        )
        for name, value in checked.items()
        for found in [unsendable_character(value)]
        if found is not None
    ]
    if unsendable:
        raise FormValidationError(unsendable)
    return {"action": "accept", "content": checked}


def _as_json(schema: FormSchema, content: object) -> object:
    """``content`` with the Python values an app's answerer naturally gives written as the
    JSON its fields take (see the rules); anything else as given, for the checks to judge."""
    if not isinstance(content, Mapping):
        return content
    out = dict(content)
    for spec in schema.fields:
        value = out.get(spec.name)
        if isinstance(spec, String) and spec.format in _DATES and isinstance(value, dt.date):
            out[spec.name] = _iso(value)  # a datetime for a date (or the reverse): its format says
        elif isinstance(spec, MultiChoice) and isinstance(value, set | frozenset):
            order = {option.value: i for i, option in enumerate(spec.options)}
            out[spec.name] = sorted(value, key=lambda item: order.get(item, len(order)))
    return out


def _iso(value: dt.date) -> str:
    """``value`` as ISO text; an aware ``datetime`` whose offset has seconds (a zone's local
    mean time, before about 1900), which RFC 3339 cannot write, as the same instant in UTC."""
    if isinstance(value, dt.datetime) and (offset := value.utcoffset()) and offset % dt.timedelta(minutes=1):
        try:
            return value.astimezone(dt.UTC).isoformat()
        except OverflowError:  # past year 1 or 9999 in UTC: as it is, refused as such text is
            pass
    return value.isoformat()


def unsendable_character(value: object) -> str | None:
    """The first lone surrogate in a text answer or a list of them (an invalid byte read
    with ``surrogateescape``, a ``"\\ud800"`` in a script), which UTF-8, so no JSON reply,
    can encode; None when there is none."""
    for text in value if isinstance(value, list) else [value]:
        found = _UNPAIRED.search(text) if isinstance(text, str) else None
        if found is not None:
            return found[0]
    return None


def check_sampling_request(params: Mapping[str, Any], *, key: str, server: ServerInfo) -> None:
    """``ProtocolViolation`` unless ``params`` are ``CreateMessageRequestParams`` without
    tools (see the rules): what a server asks is checked before a sampling callback (and a
    model) sees it."""
    from mcp_types import CreateMessageRequestParams

    try:
        CreateMessageRequestParams.model_validate(params)
    except ValidationError as exc:
        raise ProtocolViolation(
            f"{server} sent sampling/createMessage {_cut(key)!r} with malformed params: {_first(exc)}"
        ) from None
    given = [name for name in ("tools", "toolChoice") if name in params]
    if given:
        raise ProtocolViolation(
            f"{server} sent sampling/createMessage {_cut(key)!r} with {' and '.join(given)}; a tool-enabled "
            "sampling request needs the client's sampling.tools capability, and this client declares "
            "no sampling.tools capability"
        )


def check_sampling_answer(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A ``CreateMessageResult``; ``InvalidAnswer`` (a ``ValueError``) naming the first fault
    otherwise."""
    from mcp_types import CreateMessageResult

    try:
        CreateMessageResult.model_validate(answer)
    except ValidationError as exc:
        raise InvalidAnswer(
            f"the sampling callback returned no valid CreateMessageResult: {_first(exc)}"
        ) from None
    return dict(answer)


def check_roots_answer(answer: object) -> dict[str, Any]:
    """A ``ListRootsResult`` (a bare list of roots is wrapped)."""
    from mcp_types import ListRootsResult

    result = {"roots": list(answer)} if isinstance(answer, list | tuple) else answer
    try:
        ListRootsResult.model_validate(result)
    except ValidationError as exc:
        raise InvalidAnswer(f"the roots callback returned no valid ListRootsResult: {_first(exc)}") from None
    assert isinstance(result, Mapping)
    return dict(result)


def _first(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "(top level)"
    return f"{where}: {err.get('msg', 'invalid')}"
