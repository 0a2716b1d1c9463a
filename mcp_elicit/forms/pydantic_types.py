"""pydantic's own text types in a form: its URL types, ``EmailStr``, its date and datetime
types, and those a form cannot ask.

``AnyUrl``, ``AnyHttpUrl``, ``HttpUrl`` (and every other single-host URL type of
pydantic's: ``FileUrl``, ``WebsocketUrl``...) are asked as text of format ``uri``, and
``EmailStr`` as text of format ``email``: the formats the form subset has for them.
``AwareDatetime``, ``PastDatetime`` and ``FutureDatetime`` are asked as a ``datetime``
(format ``date-time``, which always carries an offset, so an answer is always aware), and
``PastDate`` and ``FutureDate`` as a ``date`` (:func:`pydantic_temporal`).

Rules:

- A type's own length limit is the field's ``maxLength`` (``HttpUrl``'s 2083), and so is
  one from ``UrlConstraints(max_length=...)``; a ``Field(max_length=...)`` beside it
  gives the field the smaller of the two. ``min_length`` and ``title``/``description``
  apply as on ``str``; a ``Field(format=...)`` that is not the type's is refused.
- What the form subset cannot say (the schemes a type allows, a required host,
  email-validator's rules) is checked when the answer is built: the converter runs the
  wire text through pydantic (a ``TypeAdapter`` of the type and its ``UrlConstraints``)
  and gives the handler what pydantic makes of it (an ``AnyUrl``/``HttpUrl``, the
  normalised ``str`` of an ``EmailStr``), in a pydantic model, a dataclass and a
  TypedDict alike. An answer pydantic refuses raises ``ValueError`` with a message for
  the person ("must use the scheme 'http' or 'https'"), which the form reports as that
  field's problem; a default it refuses is refused when the form is defined.
- ``EmailStr`` needs the optional package email-validator, as it does in pydantic
  (pydantic refuses to define a model with one without it): without it the form is
  refused, naming the package and the way to ask for an address without it
  (``Annotated[str, Field(format='email')]``, checked by the form alone). No new
  dependency: a server that uses ``EmailStr`` has it already.
- Whether a date or datetime is in the past or the future is checked when the answer is
  built, by pydantic (a ``TypeAdapter`` of the type), as for a URL's schemes: one on the
  wrong side of now is that field's problem ("must be a date in the past"); a default on
  the wrong side is refused when the form is defined.
- pydantic types a form cannot ask (secrets, ``NameEmail``, DSNs of several hosts, IP
  addresses, ``Json``, byte sizes...) get a refusal saying what to use instead
  (:func:`pydantic_instead`).
- pydantic is looked at only when it is already imported: an annotation cannot be one of
  its types otherwise.
"""

from __future__ import annotations

import datetime as dt
import importlib
import sys
from functools import lru_cache
from typing import Annotated, Any

from mcp_elicit.forms.converter import Converter
from mcp_elicit.forms.fields import String, StringFormat
from mcp_elicit.forms.metadata import Constraints

__all__ = ["pydantic_instead", "pydantic_temporal", "pydantic_text"]

_EMAIL_INSTEAD = "Annotated[str, Field(format='email')]"


def _pydantic() -> Any:
    return sys.modules.get("pydantic")


@lru_cache(maxsize=256)
def _adapter(annotation: Any) -> Any:
    """pydantic's validator of ``annotation`` (built once per type and constraints)."""
    import pydantic

    return pydantic.TypeAdapter(annotation)


def _url_problem(exc: Any) -> str:
    first = exc.errors()[0]
    if first["type"] == "url_scheme":
        return f"must use the scheme {first.get('ctx', {}).get('expected_schemes', 'it allows')}"
    if first["type"] == "url_too_long":
        return f"must be at most {first.get('ctx', {}).get('max_length')} characters long"
    reason = str(first["msg"])
    return f"must be an address this server takes ({reason[:1].lower()}{reason[1:]})"


def _email_problem(exc: Any) -> str:
    reason = str(exc.errors()[0]["msg"]).removeprefix("value is not a valid email address: ")
    return f"must be an email address this server takes: {reason}"


def _converter(annotation: Any, problem: Any) -> Converter:
    """Wire text -> the value pydantic makes of it; a value -> its validated text."""
    import pydantic

    adapter = _adapter(annotation)

    def to_python(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            raise ValueError(problem(exc)) from None

    def to_wire(value: Any) -> Any:
        if not isinstance(value, str | pydantic.AnyUrl):
            raise ValueError(f"not text, but {type(value).__name__}")
        return str(to_python(str(value)))

    return Converter(to_python, to_wire)


def _text(meta: Constraints, kind: str, fmt: StringFormat, own_max: int | None) -> String:
    meta.only(kind, "min_length", "max_length", "format", lengths=True, url=fmt == "uri")
    given = meta.field.format
    if given is not None and given != fmt:
        raise meta.fail(f"format {given!r} does not fit {kind} (it is always {fmt!r})")
    min_len, max_len = meta.lengths("min_length", "max_length")
    limits = [n for n in (max_len, own_max) if n is not None]
    return String(format=fmt, min_length=min_len, max_length=min(limits) if limits else None)


def pydantic_text(tp: Any, meta: Constraints) -> tuple[String, Converter] | None:
    """The text field and converter for a pydantic URL type or ``EmailStr``, else None."""
    pydantic = _pydantic()
    if pydantic is None or not isinstance(tp, type):
        return None
    if issubclass(tp, pydantic.AnyUrl):
        constraints = [getattr(tp, "_constraints", None), *meta.url]
        own = [c.max_length for c in constraints if getattr(c, "max_length", None) is not None]
        spec = _text(meta, f"a URL ({tp.__name__})", "uri", min(own) if own else None)
        annotation = Annotated[(tp, *meta.url)] if meta.url else tp
        return spec, _converter(annotation, _url_problem)
    if tp is pydantic.EmailStr:
        spec = _text(meta, "an EmailStr", "email", None)
        instead = f"or ask with {_EMAIL_INSTEAD}, which the form checks itself and gives back as str"
        try:
            importlib.import_module("email_validator")
        except ImportError:
            raise meta.fail(
                "EmailStr needs the package email-validator, which is not installed: install it "
                f"(pip install 'pydantic[email]'), {instead}"
            ) from None
        try:
            _adapter(tp)
        except ImportError as exc:  # too old for pydantic, in pydantic's words
            raise meta.fail(
                f"EmailStr needs the package email-validator, which pydantic could not load ({exc}); {instead}"
            ) from None
        return spec, _converter(tp, _email_problem)
    return None


#: pydantic's date and datetime types by name: the standard type each is asked as, and
#: whether pydantic checks an answer beyond what that type does (past, future).
_TEMPORAL: dict[str, tuple[type, bool]] = {
    "AwareDatetime": (dt.datetime, False),
    "PastDatetime": (dt.datetime, True),
    "FutureDatetime": (dt.datetime, True),
    "PastDate": (dt.date, True),
    "FutureDate": (dt.date, True),
}
_WHEN_PROBLEMS = {
    "date_past": "must be a date in the past",
    "date_future": "must be a date in the future",
    "datetime_past": "must be in the past",
    "datetime_future": "must be in the future",
}


def pydantic_temporal(tp: Any) -> tuple[type, Converter | None] | None:
    """For one of pydantic's date and datetime types: the standard type it is asked as,
    and the check pydantic adds to it (a :class:`Converter` of the value to itself,
    raising ``ValueError`` for one on the wrong side of now), None when it adds none;
    None for any other type."""
    pydantic = _pydantic()
    name = getattr(tp, "__name__", None)
    if pydantic is None or name not in _TEMPORAL or getattr(pydantic, name, None) is not tp:
        return None
    base, checked = _TEMPORAL[name]
    if not checked:
        return base, None
    adapter = _adapter(tp)

    def check(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(_WHEN_PROBLEMS.get(first["type"]) or str(first["msg"])) from None

    return base, Converter(check, check)


_INSTEAD: dict[str, str] = {
    "SecretStr": "secrets do not belong in a form (a client shows and keeps what is typed there): "
    "ask for them on a page of your own with ctx.elicit_url(...)",
    "SecretBytes": "secrets do not belong in a form: ask for them with ctx.elicit_url(...)",
    "NameEmail": f"a form asks for the address alone: use EmailStr (or {_EMAIL_INSTEAD}), "
    "and a str field for the name",
    "IPvAnyAddress": "an address has no format in a form; ask for str and read it with ipaddress in the tool",
    "IPvAnyInterface": "an interface has no format in a form; ask for str and read it with ipaddress in the tool",
    "IPvAnyNetwork": "a network has no format in a form; ask for str and read it with ipaddress in the tool",
    "ByteSize": "ask for an int (of bytes, or of the unit the title names)",
    "NaiveDatetime": "a form's date-time always carries a UTC offset: ask for a datetime (or "
    "AwareDatetime) and drop the zone in the tool (.replace(tzinfo=None), after converting it)",
    "Json": "a form holds flat fields: ask for each value in a field of its own",
}


def pydantic_instead(tp: Any) -> str | None:
    """For a pydantic type a form cannot ask: why, and what to use instead; else None."""
    pydantic = _pydantic()
    if pydantic is None:
        return None
    name = getattr(tp, "__name__", None)
    if isinstance(name, str) and name in _INSTEAD and getattr(pydantic, name, None) is tp:
        return _INSTEAD[name]
    networks = sys.modules.get("pydantic.networks")
    multi = getattr(networks, "_BaseMultiHostUrl", None)
    if isinstance(tp, type) and isinstance(multi, type) and issubclass(tp, multi):
        return (
            "it is a URL of several hosts, which a form's format 'uri' does not take: "
            "use AnyUrl (or a URL type of one host) and read it with the DSN type in the tool"
        )
    return None
