"""From one Python annotation to one field spec, plus the converters between them.

``str``, ``int``, ``float``, ``decimal.Decimal``, ``bool``, ``datetime.date``,
``datetime.datetime``, pydantic's URL types, ``EmailStr``, ``AwareDatetime`` and its past
and future dates and datetimes (see :mod:`pydantic_types`),
``Literal["a", "b"]`` (of strings or str Enum members), a str-valued ``enum.Enum``, and
``list``/``set``/``frozenset`` of a Literal or such an Enum map to form fields;
``X | None`` makes a field optional; ``Annotated[X, Field(...)]`` adds titles and bounds
(see :mod:`metadata`).

Rules:

- Anything else (nested dataclasses or models, dicts, ``list[str]``, tuples, ``Any``,
  unions of two types, Literals of non-strings, ``uuid.UUID``, ``datetime.time``...)
  raises :class:`FormSchemaError` naming the field and the rule, and what to use
  instead where the type is a common one, when the form is defined.
- A ``Decimal`` is a number field: its bounds and default go out as JSON numbers (an
  int when whole and within a double's exact integers, else a float), and one that no
  double holds as written (``Decimal("0.1000000000000000000001")``, ``1e400``) is
  refused rather than rounded; an answer comes back as the Decimal of the number as
  written (``19.99``, not the binary float's expansion).
- ``bool`` is checked before ``int`` (it is a subclass), ``datetime`` before ``date``.
  ``NewType``\\s are read as their base type.
- An Enum gives a titled choice; each title comes from the member name
  (``GLUTEN_FREE`` -> "Gluten free") unless ``Field(titles=...)`` says otherwise.
  A Literal gives an untitled choice unless ``titles`` are given (values without a
  title then use the value). The items of a multi-select may carry only ``titles=``.
- A :class:`Converter` turns a validated wire value into the declared Python value
  (dates, Enum members, ``float``, ``Decimal``, URLs, the declared collection) and a
  Python default into its wire value (raising ``ValueError`` when it does not fit).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import ipaddress
import math
import types
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms.converter import Converter
from mcp_elicit.forms.converter import same as _same
from mcp_elicit.forms.fields import (
    STRING_FORMATS,
    Boolean,
    Choice,
    FieldSpec,
    Integer,
    MultiChoice,
    Number,
    Option,
    String,
    StringFormat,
    enum_options,
)
from mcp_elicit.forms.formats import parse_date, parse_date_time
from mcp_elicit.forms.metadata import Constraints, Field
from mcp_elicit.forms.pydantic_types import pydantic_instead, pydantic_temporal, pydantic_text

__all__ = ["Converter", "spec_for"]

_WRAPPERS = {"Required", "NotRequired", "ReadOnly"}
_COLLECTIONS: dict[Any, type] = {list: list, set: set, frozenset: frozenset}
_ALLOWED_TYPES = (
    "str, int, float, bool, date, datetime, Decimal, AnyUrl, EmailStr, a Literal of strings, "
    "a str Enum, or a list/set/frozenset of choices"
)
#: Common types a form has no field for, and what to ask for instead.
_INSTEAD: dict[Any, str] = {
    uuid.UUID: "a UUID has no format in a form; ask for str and read it with uuid.UUID in the tool "
    "(or offer the known ones as a Literal of strings)",
    dt.time: "a time of day has no format in a form; ask for a datetime (format 'date-time'), "
    "or for str and read it with datetime.time.fromisoformat in the tool",
    dt.timedelta: "a timedelta has no format in a form; ask for an int or float of the unit the "
    "title names (minutes, days) and make the timedelta in the tool",
    bytes: "a form holds text: ask for str",
    **{
        tp: "an address has no format in a form; ask for str and read it with ipaddress in the tool"
        for tp in (
            ipaddress.IPv4Address,
            ipaddress.IPv6Address,
            ipaddress.IPv4Network,
            ipaddress.IPv6Network,
            ipaddress.IPv4Interface,
            ipaddress.IPv6Interface,
        )
    },
}


def _unwrap(annotation: Any, meta: Constraints) -> tuple[Any, bool]:
    """The bare type and whether None is allowed, collecting Annotated metadata into ``meta``."""
    optional = False
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation, *extras = get_args(annotation)
            for item in extras:
                meta.take(item)
        elif getattr(origin, "_name", None) in _WRAPPERS:
            annotation = get_args(annotation)[0]
        elif origin is Union or origin is types.UnionType:
            members = [a for a in get_args(annotation) if a is not type(None)]
            optional = optional or len(members) < len(get_args(annotation))
            if len(members) != 1:
                shown = " | ".join(getattr(a, "__name__", repr(a)) for a in members)
                raise meta.fail(f"unions of several types are not allowed ({shown}); use one type")
            annotation = members[0]
        elif hasattr(annotation, "__supertype__"):  # typing.NewType
            annotation = annotation.__supertype__
        else:
            return annotation, optional


def _choices(tp: Any, meta: Constraints) -> tuple[tuple[Option, ...], Converter] | None:
    """Options and converter if ``tp`` is a Literal of strings or a str Enum, else None."""
    titles = dict(meta.field.titles or ())
    if get_origin(tp) is Literal:
        declared = get_args(tp)
        for value in declared:
            if not isinstance(value, str):
                raise meta.fail(
                    f"Literal options must be strings, not {value!r}; use Literal['{value}', ...] "
                    "and convert in the tool, or an int field with bounds"
                )
        # A str Enum member (Literal[Tone.CALM]) is sent as its value and given back as itself.
        wire_of = {v: v.value if isinstance(v, enum.Enum) else str.__str__(v) for v in declared}
        member_of = {wire: v for v, wire in wire_of.items() if isinstance(v, enum.Enum)}
        options = tuple(Option(w, titles.get(w, w) if titles else None) for w in wire_of.values())

        def literal_to_wire(value: Any) -> Any:
            if value not in declared or not isinstance(value, str):
                raise ValueError(f"{value!r} is not one of the options")
            return wire_of.get(value, value)

        def literal_to_python(value: Any) -> Any:
            return member_of.get(value, value)

        converter = Converter(literal_to_python if member_of else _same, literal_to_wire)
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            options = tuple(Option(v, titles.get(v, t)) for v, t in enum_options(tp))
        except FormSchemaError as exc:
            raise meta.fail(str(exc)) from None
        enum_type: type[enum.Enum] = tp

        def enum_to_wire(value: Any) -> Any:
            return value.value if isinstance(value, enum_type) else enum_type(value).value

        converter = Converter(enum_type, enum_to_wire)
    else:
        return None
    unknown = set(titles) - {value for value, _ in options}
    if unknown:
        raise meta.fail(f"titles names {', '.join(sorted(map(repr, unknown)))}, which are not options")
    return options, converter


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "an int", "a float"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _typed(kind: type, convert: Callable[[Any], Any] = _same) -> Converter:
    accepted = (int, float) if kind is float else (kind,)

    def to_wire(value: Any) -> Any:
        if not isinstance(value, accepted) or isinstance(value, bool) != (kind is bool):
            raise ValueError(f"not {_a(kind.__name__)}")
        return value

    return Converter(convert, to_wire)


def _date_to_wire(value: Any) -> Any:
    if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
        raise ValueError("not a date")
    return value.isoformat()


def _datetime_to_wire(value: Any) -> Any:
    if not isinstance(value, dt.datetime) or value.tzinfo is None:
        raise ValueError("a datetime default needs a time zone")
    return value.isoformat()


_TEMPORAL: dict[Any, tuple[StringFormat, Converter]] = {
    dt.datetime: ("date-time", Converter(parse_date_time, _datetime_to_wire)),
    dt.date: ("date", Converter(parse_date, _date_to_wire)),
}


#: The largest whole number a double (a JSON number, as most readers hold one) carries exactly.
_EXACT_WHOLE = 2**53 - 1


def _json_number(value: Any) -> Any:
    """A bound or default as a JSON number: a Decimal as an int when whole (and a double
    holds it exactly), else as a float; ``ValueError`` when no double is the Decimal as
    written (sent as the nearest one, a bound would take answers it does not, and a
    default kept would build a Decimal the class never declared)."""
    if not isinstance(value, decimal.Decimal):
        return value
    if not value.is_finite():
        raise ValueError("not a finite number")
    if value == value.to_integral_value() and abs(value) <= _EXACT_WHOLE:
        return int(value)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value} is beyond what a JSON number carries")
    if decimal.Decimal(str(number)) != value:
        raise ValueError(
            f"{value} has more digits than a JSON number carries (a double keeps 15 significant "
            f"digits); the nearest one is {number!r}"
        )
    return number


def _decimal_to_wire(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, decimal.Decimal | int | float):
        raise ValueError("not a Decimal")
    return _json_number(value)


def _decimal_to_python(value: Any) -> decimal.Decimal:
    # The number as written: str(0.1) is "0.1", where Decimal(0.1) is the binary float's expansion.
    return decimal.Decimal(str(value))


_DECIMAL = Converter(_decimal_to_python, _decimal_to_wire)


def _scalar(tp: Any, meta: Constraints) -> tuple[FieldSpec, Converter] | None:
    if tp is bool:
        meta.only("a bool")
        return Boolean(), _typed(bool)
    if tp is int or tp is float:
        meta.only(_a(tp.__name__), "minimum", "maximum", bounds=True)
        lower, upper = meta.numeric_bounds(whole=tp is int)
        if tp is int:
            return Integer(minimum=lower, maximum=upper), _typed(int)
        return Number(minimum=lower, maximum=upper), _typed(float, float)
    if tp is decimal.Decimal:
        meta.only("a Decimal", "minimum", "maximum", bounds=True)
        lower, upper = meta.numeric_bounds(whole=False)
        try:
            return Number(minimum=_json_number(lower), maximum=_json_number(upper)), _DECIMAL
        except ValueError as exc:
            raise meta.fail(f"a bound of a Decimal must be a JSON number: {exc}") from None
    if (temporal := pydantic_temporal(tp)) is not None:  # AwareDatetime, PastDate...
        base, check = temporal
        spec, converter = _text(base, meta)
        return spec, converter if check is None else _then(converter, check)
    if tp is str or tp in _TEMPORAL:
        return _text(tp, meta)
    return None


def _then(converter: Converter, check: Converter) -> Converter:
    """``converter``, with ``check`` run on the Python value both ways (each may raise
    ``ValueError``): a wire value is converted, then checked; a default is checked as
    the declared type, then converted."""

    def to_python(value: Any) -> Any:
        return check.to_python(converter.to_python(value))

    def to_wire(value: Any) -> Any:
        wire = converter.to_wire(value)
        check.to_wire(value)
        return wire

    return Converter(to_python, to_wire)


def _text(tp: Any, meta: Constraints) -> tuple[FieldSpec, Converter]:
    """A ``str``, ``date`` or ``datetime`` field: text, of the format its type gives."""
    meta.only("text", "min_length", "max_length", "format", lengths=True)
    given = meta.field.format
    fmt, converter = _TEMPORAL.get(tp) or (given, _typed(str))
    if given is not None and given != fmt:
        raise meta.fail(f"format {given!r} does not fit {_a(tp.__name__)} (it is always {fmt!r})")
    if fmt is not None and fmt not in STRING_FORMATS:
        raise meta.fail(f"format {fmt!r} is not supported; use one of: {', '.join(sorted(STRING_FORMATS))}")
    min_len, max_len = meta.lengths("min_length", "max_length")
    return String(format=fmt, min_length=min_len, max_length=max_len), converter


def _multi(tp: Any, meta: Constraints) -> tuple[FieldSpec, Converter] | None:
    collection = _COLLECTIONS.get(get_origin(tp))
    if collection is None:
        return None
    item_type = (get_args(tp) or (Any,))[0]
    inner = Constraints(meta.name)
    item_tp, item_optional = _unwrap(item_type, inner)
    if set(inner.field.said()) - {"titles"} or inner.has_bounds or inner.has_lengths:
        raise meta.fail("put Field(...) on the multi-select itself; its items may only carry titles=")
    if item_optional:
        raise meta.fail("the choices of a multi-select cannot be None")
    if inner.field.titles and not meta.field.titles:
        meta.take(Field(titles=dict(inner.field.titles)))
    chosen = _choices(item_tp, meta)
    if chosen is None:
        shown = getattr(item_type, "__name__", repr(item_type))
        raise meta.fail(
            f"a {collection.__name__} must be a multi-select of a Literal or a str Enum, not of {shown}; "
            "free-form lists are not allowed in a form"
        )
    meta.only("a multi-select", "min_items", "max_items", "titles", lengths=True)
    options, item = chosen
    order = {value: index for index, (value, _) in enumerate(options)}

    def to_python(values: Any) -> Any:
        return collection(item.to_python(v) for v in values)

    def to_wire(values: Any) -> Any:
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise ValueError("not a collection")
        wire = [item.to_wire(v) for v in values]
        return wire if isinstance(values, Sequence) else sorted(wire, key=order.__getitem__)

    min_items, max_items = meta.lengths("min_items", "max_items")
    return MultiChoice(options, min_items=min_items, max_items=max_items), Converter(to_python, to_wire)


def _refuse(tp: Any, meta: Constraints) -> FormSchemaError:
    shown = getattr(tp, "__name__", None) or repr(tp)
    origin = get_origin(tp)
    instead = _INSTEAD.get(tp) if isinstance(tp, type) else None
    if instead is not None or (instead := pydantic_instead(tp)) is not None:
        return meta.fail(f"type {shown} is not allowed in a form; {instead}")
    if tp is Any or tp is object:
        return meta.fail(f"{shown} is not allowed in a form; give the field one of: {_ALLOWED_TYPES}")
    if isinstance(tp, type) and (
        any(hasattr(tp, attr) for attr in ("__dataclass_fields__", "__required_keys__", "model_fields"))
        or (issubclass(tp, tuple) and hasattr(tp, "_fields"))  # a NamedTuple
    ):
        return meta.fail(
            f"nested forms are not allowed ({shown} is a class of fields); flatten its fields into this form"
        )
    if origin is tuple or tp is tuple:
        return meta.fail(
            "tuples are not allowed in a form; use separate fields, or a list of a Literal for a multi-select"
        )
    if tp is dict or (isinstance(origin, type) and issubclass(origin, Mapping)):
        return meta.fail("mappings are not allowed in a form; use separate fields")
    if tp in _COLLECTIONS:
        return meta.fail(
            f"a bare {shown} is not allowed; "
            f"use {shown}[Literal[...]] or {shown}[SomeEnum] for a multi-select"
        )
    return meta.fail(f"type {shown} is not allowed in a form; use {_ALLOWED_TYPES}")


def spec_for(
    name: str,
    annotation: Any,
    metadata: Sequence[object] = (),
    *,
    title: str | None = None,
    description: str | None = None,
) -> tuple[FieldSpec, Converter, bool]:
    """The field spec (named, required) for ``annotation``, its converter, and whether None is allowed.

    ``metadata`` holds extra constraint objects (pydantic's ``FieldInfo.metadata``);
    ``title``/``description`` are defaults that a ``Field(...)`` overrides.
    """
    meta = Constraints(name)
    meta.take(Field(title=title, description=description))
    for item in metadata:
        meta.take(item)
    tp, optional = _unwrap(annotation, meta)
    built = _scalar(tp, meta) or pydantic_text(tp, meta) or _multi(tp, meta)
    if built is None:
        chosen = _choices(tp, meta)
        if chosen is None:
            raise _refuse(tp, meta)
        meta.only("a choice", "titles")
        built = Choice(chosen[0]), chosen[1]
    spec, converter = built
    said = meta.field
    spec = dataclasses.replace(
        spec, name=name, title=said.title, description=said.description, not_secret=said.not_secret
    )
    return spec, converter, optional
