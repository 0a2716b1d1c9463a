"""Reading a form some other program wrote: keywords beyond the flat subset, taken in.

The official SDKs render ordinary models with JSON Schema keywords the subset does not
have (pydantic's ``Field(pattern=...)`` gives ``pattern``). Both revisions' schema.json
take such a form, JSON Schema ignores keywords a reader does not know, and the server
checks the answer anyway: a client that refused the form would leave the person nothing
to answer. :func:`relax` rewrites a ``requestedSchema`` into the subset before it is
parsed, and says what it did. Forms this toolkit's server defines never come here.

Rules:

- Only a keyword beside the ``type`` it applies to is taken in, and only when its value
  is well formed; anything else is left for the parser, which refuses it by name as
  before (nesting, ``$ref``, unknown types and formats are never taken in).
- ``pattern`` on a text field is dropped and never run: it is an ECMA-262 regular
  expression, which Python's ``re`` reads differently and a hostile server can make
  take exponential time. The person is told the pattern, so they can follow it.
- ``exclusiveMinimum`` and ``exclusiveMaximum`` (pydantic's ``gt``/``lt``) are checked:
  on an integer field they are its whole bounds (``exclusiveMinimum: 0`` is
  ``minimum: 1``), which the field shows; on a number field they are checks of their
  own, run with the field's (:attr:`Relaxed.checks`), and kept in the field's
  :class:`FieldExtras` for a user interface to show with the field's own bounds.
  Bounds that leave no number (``exclusiveMinimum: 5`` beside ``maximum: 5``, or no
  whole number on an integer field: ``exclusiveMinimum: 5``, ``exclusiveMaximum: 6``)
  are refused with :class:`FormSchemaError` naming the field and the bounds as the
  server wrote them, as the parser refuses a ``minimum`` above the ``maximum``: no
  answer could be sent.
- ``multipleOf`` (a number above 0) is such a check, worked out in decimal on the
  numbers as written (0.3 is a multiple of 0.1, as the person reads it); a quotient
  beyond 28 digits is not worked out (the server decides). It is kept in the
  field's :class:`FieldExtras` too.
- A text field's ``const`` (pydantic's ``Literal["a"]``) is a choice of that one
  option, when the field names no other options.
- An option of a titled choice (``oneOf``, or a multi-select's ``items.anyOf``) is read
  by its ``const`` and ``title``; its ``description`` (which the official SDKs write and
  the schema.json of both revisions allow beside them), when it is text, is kept in the
  field's :class:`FieldExtras` for the person choosing; other keys are dropped. An
  option without both ``const`` and ``title`` is left for the parser to refuse.
- A choice's value listed more than once (neither revision's schema.json asks for
  unique values: no ``uniqueItems``) is read once, the first time it comes, with the
  title (and description) it came with there: a person picks a value, and the values
  sent back are the server's own. Nothing is said: the person loses no option.
- Options whose titles a person would read alike ("Yes" and "yes", which a form this
  toolkit builds refuses) are told apart, not refused: each such title is followed by
  its value ("Yes (a)", "Yes (b)"), in ``oneOf``, ``anyOf`` and ``enumNames`` alike, so
  every user interface shows them apart. A blank title (refused too in a form this
  toolkit builds) is replaced by its option's value, which a person can pick by, or,
  when the value is blank too, by words saying so: "(blank)" for "", "(blank: U+0020)"
  for a space. Such a form is read, never refused for it.
- A form larger than any a person answers is refused with :class:`FormSchemaError`
  naming the limit, before anything else in it is read: more than ``MAX_FIELDS`` (256)
  fields, a name over ``MAX_NAME`` (128) characters, a title, an option or its title
  over ``MAX_TITLE`` (100,000), a description, default or pattern over ``MAX_TEXT``
  (1,000,000), a choice of more than ``MAX_OPTIONS`` (100,000) options or a form of more
  than ``MAX_ALL_OPTIONS`` (200,000) in all. A form this toolkit builds is held to the
  same limits (:func:`check_size`), and a title this module rewrites stays within them.
- Each note names its field and is written for the person answering. What a field's
  :class:`FieldExtras` hold is no note: it is shown with the field.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Context, Decimal, InvalidOperation
from typing import Any, TypeAlias, TypeGuard

from mcp_elicit.errors import FormSchemaError, ValidationProblem
from mcp_elicit.forms.field_values import title_key

__all__ = [
    "MAX_ALL_OPTIONS",
    "MAX_FIELDS",
    "MAX_NAME",
    "MAX_OPTIONS",
    "MAX_TEXT",
    "MAX_TITLE",
    "NO_EXTRAS",
    "Check",
    "FieldExtras",
    "Relaxed",
    "check_size",
    "relax",
]

#: A check of one field's cleaned value: the problem, for the person, or None.
Check: TypeAlias = Callable[[Any], "str | None"]

#: Keywords that name a choice's options, beside which a ``const`` is not read.
_NAMES_OPTIONS = frozenset({"enum", "enumNames", "oneOf"})
#: At most this many characters of a pattern are shown to the person.
_SHOWN = 200

# The most a form read from another server may hold: far beyond any form a person
# answers, small enough that reading the largest takes a fraction of a second (400,000
# fields took 11 s). A choice may be long (a server built with this toolkit may offer tens
# of thousands of options, which the web answerer lets a person search), so options get
# more room than fields.
MAX_FIELDS = 256
MAX_NAME = 128
#: A field's title, an option's value and its title: one line each.
MAX_TITLE = 100_000
#: A description (the form's, a field's, an option's), a default, a pattern.
MAX_TEXT = 1_000_000
#: Options in one choice, and in the whole form.
MAX_OPTIONS = 100_000
MAX_ALL_OPTIONS = 200_000


@dataclass(frozen=True, slots=True)
class FieldExtras:
    """What a field asks beyond its spec, for a user interface to show with it: a number's
    exclusive bounds (each only when stricter than the inclusive one beside it), the
    step its answer is a multiple of, and its options' descriptions by value (server
    text, as it came: a user interface makes it safe to show)."""

    more_than: float | None = None
    less_than: float | None = None
    multiple_of: float | None = None
    option_descriptions: Mapping[str, str] = field(default_factory=dict)


#: A field that asks nothing beyond its spec.
NO_EXTRAS: FieldExtras = FieldExtras()


@dataclass(frozen=True, slots=True)
class Relaxed:
    """A ``requestedSchema`` rewritten into the subset, and what was dropped on the way."""

    schema: object
    notes: tuple[ValidationProblem, ...] = ()
    checks: Mapping[str, tuple[Check, ...]] = field(default_factory=dict)
    extras: Mapping[str, FieldExtras] = field(default_factory=dict)


def relax(obj: object) -> Relaxed:
    """``obj`` with the keywords beyond the subset that a reader can take in, taken in."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("properties"), Mapping):
        return Relaxed(obj)
    check_size(obj)
    notes: list[ValidationProblem] = []
    checks: dict[str, list[Check]] = {}
    extras: dict[str, dict[str, Any]] = {}
    properties = {
        name: _relax_field(name, prop, notes, checks.setdefault(name, []), extras.setdefault(name, {}))
        if isinstance(prop, Mapping)
        else prop
        for name, prop in obj["properties"].items()
    }
    found = {name: tuple(each) for name, each in checks.items() if each}
    shown = {name: FieldExtras(**each) for name, each in extras.items() if each}
    return Relaxed({**obj, "properties": properties}, tuple(notes), found, shown)


def check_size(obj: Mapping[str, Any], *, reader: str = "this client") -> None:
    """:class:`FormSchemaError` naming the first limit (``MAX_*``) the form passes, read
    before anything else in it: its fields, their names, texts and options.

    A form being built (``FormSchema``'s own check, so that a server never sends what a
    client refuses) names the client as ``reader``. A client's rewriting of a title
    (:func:`relax`) keeps it within the limit too, so a form read within the limits builds."""
    properties = obj["properties"]
    if len(properties) > MAX_FIELDS:
        raise FormSchemaError(
            f"the form has {len(properties):,} fields; {reader} reads at most {MAX_FIELDS:,}"
        )
    _check_texts(None, obj, "the form's", reader)
    offered = 0
    for name, prop in properties.items():
        if isinstance(name, str) and len(name) > MAX_NAME:
            raise FormSchemaError(
                f"a field's name is {len(name):,} characters long ({name[:40] + '…'!r}); "
                f"{reader} reads at most {MAX_NAME:,}"
            )
        if isinstance(prop, Mapping):
            offered += _check_field_size(name, prop, reader)
    if offered > MAX_ALL_OPTIONS:
        raise FormSchemaError(
            f"the form offers {offered:,} options in all; {reader} reads at most {MAX_ALL_OPTIONS:,}"
        )


def _too_long(field: str | None, what: str, text: object, most: int, reader: str) -> None:
    if isinstance(text, str) and len(text) > most:
        raise FormSchemaError(
            f"{what} is {len(text):,} characters long; {reader} reads at most {most:,}", field=field
        )


def _check_texts(field: str | None, where: Mapping[str, Any], whose: str, reader: str) -> None:
    _too_long(field, f"{whose} title", where.get("title"), MAX_TITLE, reader)
    for key in ("description", "default", "pattern"):
        _too_long(field, f"{whose} {key}", where.get(key), MAX_TEXT, reader)


def _check_field_size(name: str, prop: Mapping[str, Any], reader: str) -> int:
    """How many options the field offers, once its texts and options are within the limits."""
    _check_texts(name, prop, "its", reader)
    items = prop.get("items")
    found = [prop.get(key) for key in ("enum", "enumNames", "oneOf")]
    if isinstance(items, Mapping):
        found += [items.get("enum"), items.get("anyOf")]
    lists: list[list[Any]] = [each for each in found if isinstance(each, list)]
    count = max(map(len, lists), default=0)
    if count > MAX_OPTIONS:
        raise FormSchemaError(
            f"it offers {count:,} options; {reader} reads at most {MAX_OPTIONS:,} in a choice", field=name
        )
    for each in lists:
        for n, entry in enumerate(each, 1):
            if isinstance(entry, Mapping):
                _too_long(name, f"option {n}", entry.get("const"), MAX_TITLE, reader)
                _too_long(name, f"the title of option {n}", entry.get("title"), MAX_TITLE, reader)
                _too_long(name, f"the description of option {n}", entry.get("description"), MAX_TEXT, reader)
            else:
                what = "the title of option" if each is prop.get("enumNames") else "option"
                _too_long(name, f"{what} {n}", entry, MAX_TITLE, reader)
    return count


def _real(value: object) -> TypeGuard[float]:
    """A finite JSON number (a bool is none)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _shown(value: float) -> str:
    return (
        str(int(value))
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e16
        else str(value)
    )


def _relax_field(
    name: str,
    prop: Mapping[str, Any],
    notes: list[ValidationProblem],
    checks: list[Check],
    extras: dict[str, Any],
) -> Mapping[str, Any]:
    out = dict(prop)
    kind = out.get("type")
    if kind in ("number", "integer"):
        _exclusive_bounds(out, kind, checks, extras)
        if kind == "number":
            _check_room(name, out, extras)
        else:
            _check_whole_room(name, prop, out)
        step = out.get("multipleOf")
        if _real(step) and step > 0:
            del out["multipleOf"]
            checks.append(_multiple_of(step))
            extras["multiple_of"] = step
    if kind == "string" and isinstance(out.get("const"), str) and _NAMES_OPTIONS.isdisjoint(out):
        out["enum"] = [out.pop("const")]
    if kind in ("string", "array"):
        _each_value_once(out)
    if kind == "string" and isinstance(out.get("oneOf"), list):
        out["oneOf"] = _options(out["oneOf"], extras)
    items = out.get("items")
    if kind == "array" and isinstance(items, Mapping) and isinstance(items.get("anyOf"), list):
        out["items"] = {**items, "anyOf": _options(items["anyOf"], extras)}
    values, titles = out.get("enum"), out.get("enumNames")
    if kind == "string" and isinstance(values, list) and isinstance(titles, list):
        out["enumNames"] = _told_apart(values, titles)
    if kind == "string" and isinstance(out.get("pattern"), str):
        pattern = out.pop("pattern")
        shown = pattern if len(pattern) <= _SHOWN else pattern[:_SHOWN] + "…"
        notes.append(
            ValidationProblem(
                name,
                f"should match the pattern {shown!r}, which this client does not check: "
                "the server may refuse an answer that does not",
            )
        )
    return out


def _exclusive_bounds(out: dict[str, Any], kind: str, checks: list[Check], extras: dict[str, Any]) -> None:
    """Take in ``exclusiveMinimum``/``exclusiveMaximum`` of a number or integer field."""
    for key, inclusive, below in (
        ("exclusiveMinimum", "minimum", False),
        ("exclusiveMaximum", "maximum", True),
    ):
        bound, current = out.get(key), out.get(inclusive)
        if not _real(bound) or (current is not None and not _real(current)):
            continue  # malformed: the parser refuses it by name
        del out[key]
        if kind == "integer":
            whole = math.ceil(bound) - 1 if below else math.floor(bound) + 1
            if current is None or (current > whole if below else current < whole):
                out[inclusive] = whole
            continue
        if _real(current) and (current < bound if below else current > bound):
            continue  # the inclusive bound is the stricter one
        checks.append(_below(bound) if below else _above(bound))
        extras["less_than" if below else "more_than"] = bound


def _check_room(name: str, out: Mapping[str, Any], extras: Mapping[str, Any]) -> None:
    """:class:`FormSchemaError` for a number field whose exclusive bounds leave no number
    (``exclusiveMinimum: 5`` beside ``maximum: 5``); inclusive bounds alone are the parser's."""
    if "more_than" not in extras and "less_than" not in extras:
        return
    low, above = (
        (extras["more_than"], "more than") if "more_than" in extras else (out.get("minimum"), "at least")
    )
    high, below = (
        (extras["less_than"], "less than") if "less_than" in extras else (out.get("maximum"), "at most")
    )
    if _real(low) and _real(high) and low >= high:
        raise FormSchemaError(f"no number is {above} {_shown(low)} and {below} {_shown(high)}", field=name)


def _check_whole_room(name: str, prop: Mapping[str, Any], out: Mapping[str, Any]) -> None:
    """:class:`FormSchemaError` for an integer field whose bounds, one exclusive at least,
    leave no whole number (``exclusiveMinimum: 5`` and ``exclusiveMaximum: 6``), said in
    the bounds the server wrote rather than the whole ones they became."""
    if "exclusiveMinimum" not in prop and "exclusiveMaximum" not in prop:
        return  # inclusive bounds alone are the parser's
    low, high = out.get("minimum"), out.get("maximum")
    if not (_real(low) and _real(high)) or math.ceil(low) <= math.floor(high):
        return
    said = []
    for exclusive, inclusive, strict, loose in (
        ("exclusiveMinimum", "minimum", "more than", "at least"),
        ("exclusiveMaximum", "maximum", "less than", "at most"),
    ):
        bound = prop.get(exclusive)
        # The exclusive bound is the one that counts when it is what the field became.
        if _real(bound) and out.get(inclusive) == (
            math.floor(bound) + 1 if strict == "more than" else math.ceil(bound) - 1
        ):
            said.append(f"{strict} {_shown(bound)}")
        else:
            said.append(f"{loose} {_shown(prop[inclusive])}")
    raise FormSchemaError(f"no whole number is {said[0]} and {said[1]}", field=name)


def _above(bound: float) -> Check:
    message = f"must be more than {_shown(bound)}"
    return lambda value: None if value > bound else message


def _below(bound: float) -> Check:
    message = f"must be less than {_shown(bound)}"
    return lambda value: None if value < bound else message


#: Decimal arithmetic of its own: a caller's context (precision, traps) never changes it.
_DECIMAL = Context(prec=28, traps=[InvalidOperation])


def _multiple_of(step: float) -> Check:
    message = f"must be a multiple of {_shown(step)}"
    divisor = Decimal(repr(step))

    def check(value: float) -> str | None:
        try:
            rest = _DECIMAL.remainder(Decimal(repr(value)), divisor)
        except InvalidOperation:  # the quotient needs more than 28 digits
            return None
        return None if rest == 0 else message

    return check


def _each_value_once(out: dict[str, Any]) -> None:
    """A choice's options (``enum`` with its ``enumNames``, ``oneOf``, and a multi-select's
    ``items.enum`` or ``items.anyOf``), each text value kept the first time it comes.
    ``enumNames`` of another length than ``enum`` leaves both for the parser to refuse."""
    values, titles = out.get("enum"), out.get("enumNames")
    if isinstance(values, list) and (
        titles is None or (isinstance(titles, list) and len(titles) == len(values))
    ):
        kept = _first_of_each(values, _itself)
        out["enum"] = [values[i] for i in kept]
        if titles is not None:
            out["enumNames"] = [titles[i] for i in kept]
    if isinstance(out.get("oneOf"), list):
        out["oneOf"] = [out["oneOf"][i] for i in _first_of_each(out["oneOf"], _const)]
    items = out.get("items")
    if isinstance(items, Mapping):
        items = dict(items)
        for key, value_of in (("enum", _itself), ("anyOf", _const)):
            if isinstance(items.get(key), list):
                items[key] = [items[key][i] for i in _first_of_each(items[key], value_of)]
        out["items"] = items


def _itself(entry: object) -> object:
    return entry


def _const(entry: object) -> object:
    return entry.get("const") if isinstance(entry, Mapping) else None


def _first_of_each(entries: list[Any], value_of: Callable[[Any], object]) -> list[int]:
    """The places of ``entries`` to keep: each text value the first time it comes, and
    every entry without one (left for the parser to refuse by name)."""
    seen: set[str] = set()
    kept: list[int] = []
    for i, entry in enumerate(entries):
        value = value_of(entry)
        if isinstance(value, str):
            if value in seen:
                continue
            seen.add(value)
        kept.append(i)
    return kept


def _options(entries: list[Any], extras: dict[str, Any]) -> list[Any]:
    """Titled options, each with its ``const`` and ``title`` alone (others as they are);
    the descriptions of those with text ``const`` and ``description`` go to ``extras``
    (the first of a value: the parser refuses a value given twice)."""
    out: list[Any] = []
    described: dict[str, str] = {}
    for entry in entries:
        if not (isinstance(entry, Mapping) and "const" in entry and "title" in entry):
            out.append(entry)
            continue
        out.append({"const": entry["const"], "title": entry["title"]})
        value, about = entry["const"], entry.get("description")
        if isinstance(value, str) and isinstance(about, str) and about:
            described.setdefault(value, about)
    if described:
        extras["option_descriptions"] = described
    titled = [
        i for i, entry in enumerate(out) if isinstance(entry, dict) and entry.keys() == {"const", "title"}
    ]
    told = _told_apart([out[i]["const"] for i in titled], [out[i]["title"] for i in titled])
    for i, title in zip(titled, told, strict=True):
        out[i] = {"const": out[i]["const"], "title": title}
    return out


def _told_apart(values: list[Any], titles: list[Any]) -> list[Any]:
    """``titles``, a blank one replaced by its value (:func:`_readable`), and those a person
    would read alike (:func:`title_key`) each followed by its value in brackets: "Yes (a)",
    "Yes (b)". Should that still leave two alike (a third option titled "Yes (b)"), or a
    title past ``MAX_TITLE``, every title is its value, which the parser keeps distinct. Anything not text, or lists of
    different lengths, is left for the parser to refuse."""
    pairs = list(zip(values, titles, strict=False))
    if len(values) != len(titles) or not all(isinstance(v, str) and isinstance(t, str) for v, t in pairs):
        return titles
    titles = [t if t.strip() else _readable(v) for v, t in pairs]  # a blank title reads as nothing
    pairs = list(zip(values, titles, strict=True))
    counts = Counter(title_key(t) for t in titles)
    if all(n == 1 for n in counts.values()):
        return titles
    told = [f"{t} ({v})" if counts[title_key(t)] > 1 else t for v, t in pairs]
    if len({title_key(t) for t in told}) == len(told) and max(map(len, told)) <= MAX_TITLE:
        return told
    return [_readable(v) for v in values]


def _readable(value: str) -> str:
    """``value`` as an option's title a person can pick by: itself, or, when it is blank
    too, words saying so that keep each blank value apart ("(blank)" for "", "(blank:
    U+0020 U+0020)" for two spaces)."""
    if value.strip():
        return value
    if not value:
        return "(blank)"
    points = " ".join(f"U+{ord(c):04X}" for c in value)
    return f"(blank: {points})" if len(points) < MAX_TITLE - 9 else f"(blank: {len(value):,} characters)"
