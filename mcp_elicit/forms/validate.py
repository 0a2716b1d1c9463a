"""Checking answers against a form: per-field checkers compiled once, run many times.

The same code checks an answer on the server (did the user send what was asked?)
and on the client (may this be sent?), so it is the single source of truth for
what a valid answer is, and its messages are written for a person.

Rules:

- A checker takes one JSON value and returns the cleaned value or an
  :class:`Invalid` carrying one message. Checkers are closures specialised at
  schema construction; the hot path allocates only the result dict.
- Types follow JSON: ``bool`` is never a number, ``int`` is never a ``bool``.
  The coercions: an integral float for an integer field (``3.0`` -> ``3``); for a
  number field, a whole number beyond the safe range becomes the float every JSON
  peer reads it as (``10**20`` -> ``1e20``; the wire cannot carry one past 64 bits),
  and one beyond what a float holds is refused; str/int subclasses (``StrEnum``
  members) become plain ``str``/``int``.
- A value of ``None`` (JSON ``null``) counts as absent: it is dropped for an optional
  field and "is required" for a required one.
- Unknown keys are dropped. Every problem is reported, one per field, in field order.
  A message shows at most the first 40 characters of a value the answer gave.
- Lengths count code points (a message for a wrong length says so where a person would
  count fewer: an accent, an emoji of several parts). Numbers must be finite. Integer answers must be
  within I-JSON's safe range (``-(2**53-1)..2**53-1``), as every JSON peer and the
  sealed request state read it exactly.
"""

from __future__ import annotations

import math
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from mcp_elicit.errors import FormValidationError, ValidationProblem
from mcp_elicit.forms.fields import (
    SAFE_INTEGER,
    Boolean,
    Choice,
    FieldSpec,
    Integer,
    MultiChoice,
    Number,
    Option,
    String,
)
from mcp_elicit.forms.formats import FORMAT_CHECKS, FORMAT_MESSAGES, format_message

__all__ = ["Checker", "FormValidator", "Invalid", "compile_field"]


class Invalid:
    """What a checker returns for a bad value: one message for a person."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"Invalid({self.message!r})"


Checker: TypeAlias = Callable[[object], object]

_NOT_OBJECT = "the answer must be an object that maps field names to values"
_NOT_TEXT = Invalid("must be text")
_NOT_NUMBER = Invalid("must be a number")
_NOT_WHOLE = Invalid("must be a whole number")
_NOT_FINITE = Invalid("must be a finite number")
_NOT_BOOL = Invalid("must be true or false")
_LARGEST_FLOAT = sys.float_info.max
_PAST_FLOAT = Invalid(f"must be between {-_LARGEST_FLOAT!r} and {_LARGEST_FLOAT!r}")
_MAX_LISTED = 10
_MAX_SHOWN = 40
#: The longest text whose length a person might count letter by letter (longer ones are not
#: searched for parts: an answer may be megabytes).
_COUNTED = 1000


def _num(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _listing(options: Sequence[Option]) -> str:
    values = [value for value, _ in options]
    if len(values) <= _MAX_LISTED:
        return ", ".join(values)
    return ", ".join(values[: _MAX_LISTED - 1]) + f", … ({len(values)} options)"


def _length_messages(lo: int | None, hi: int | None) -> tuple[str, str]:
    """What an answer too short and one too long are told, before the length it has
    (``_wrong_length``): a person sees both the bound and how far off the text is."""
    if lo is not None and lo == hi:
        exact = f"must be exactly {_plural(lo, 'character')} long"
        return exact, exact
    short = "must not be empty" if lo == 1 else f"must be at least {_plural(lo or 0, 'character')} long"
    return short, f"must be at most {_plural(hi or 0, 'character')} long"


def _wrong_length(message: str, value: str) -> Invalid:
    """``message`` and how long ``value`` is, in code points: where a person would count
    fewer (a letter and its accent, an emoji of several parts), saying why."""
    if not value:
        return Invalid(message)
    counted = len(value) <= _COUNTED and _has_parts(value)
    parts = " (an accent and each part of an emoji count as one too)" if counted else ""
    return Invalid(f"{message}, not {len(value):,}{parts}")


def _has_parts(text: str) -> bool:
    """Whether ``text`` has code points a person does not count as letters of their own:
    combining marks, joiners and variation selectors, skin tones, flags' letters."""
    return any(
        unicodedata.category(ch) in ("Mn", "Me", "Cf")
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or "\U0001f1e6" <= ch <= "\U0001f1ff"
        for ch in text
    )


def _string(spec: String) -> Checker:
    lo, hi = spec.min_length or 0, spec.max_length if spec.max_length is not None else sys.maxsize
    too_short, too_long = _length_messages(spec.min_length, spec.max_length)
    fmt = FORMAT_CHECKS[spec.format] if spec.format is not None else None
    bad_format = Invalid(FORMAT_MESSAGES[spec.format] if spec.format is not None else "")
    plain = lo == 0 and hi == sys.maxsize and fmt is None

    def check(value: object) -> object:
        if type(value) is not str:
            if not isinstance(value, str):
                return _NOT_TEXT
            value = str.__str__(value)
        if plain:
            return value
        size = len(value)
        if size < lo:
            return _wrong_length(too_short, value)
        if size > hi:
            return _wrong_length(too_long, value)
        if fmt is not None and not fmt(value):
            message = format_message(spec.format or "", value)
            return bad_format if message == bad_format.message else Invalid(message)
        return value

    return check


def _numeric(spec: Number | Integer) -> Checker:
    whole = isinstance(spec, Integer)
    low, high = spec.whole_bounds if isinstance(spec, Integer) else (spec.minimum, spec.maximum)
    lo = -math.inf if low is None else low
    hi = math.inf if high is None else high
    too_small = Invalid(f"must be at least {_num(lo)}")
    too_big = Invalid(f"must be at most {_num(hi)}")
    if whole:
        unsafe = Invalid(f"must be between {-SAFE_INTEGER} and {SAFE_INTEGER}")
        if spec.minimum is None:
            lo, too_small = -SAFE_INTEGER, unsafe
        if spec.maximum is None:
            hi, too_big = SAFE_INTEGER, unsafe

    def large(value: int) -> object:
        """A number field's whole number past the safe range, as the float JSON peers read."""
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if value > 0 else -math.inf
        if number < lo:
            return too_small
        if number > hi:
            return too_big
        return number if math.isfinite(number) else _PAST_FLOAT

    def check(value: object) -> object:
        number: float
        if type(value) is int:
            if not whole and not -SAFE_INTEGER <= value <= SAFE_INTEGER:
                return large(value)
            number = value
        elif type(value) is float:
            number = value
            if not math.isfinite(number):
                return _NOT_FINITE
            if whole:
                if not number.is_integer():
                    return _NOT_WHOLE
                number = int(number)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            return _NOT_WHOLE if whole else _NOT_NUMBER
        else:  # an int or float subclass
            return check(int(value) if isinstance(value, int) else float(value))
        if number < lo:
            return too_small
        if number > hi:
            return too_big
        return number

    return check


def _boolean(spec: Boolean) -> Checker:
    def check(value: object) -> object:
        return value if value is True or value is False else _NOT_BOOL

    return check


def _choice(spec: Choice) -> Checker:
    values = frozenset(value for value, _ in spec.options)
    not_member = Invalid(f"must be one of: {_listing(spec.options)}")

    def check(value: object) -> object:
        if type(value) is str:
            return value if value in values else not_member
        if isinstance(value, str):
            return check(str.__str__(value))
        return not_member

    return check


def _shown(item: object) -> str:
    """``repr`` for a message, a long one cut short (the answer's value, not the form's)."""
    text = repr(item)
    if len(text) <= _MAX_SHOWN:
        return text
    return f"{text[:_MAX_SHOWN]}… ({len(text)} characters)"


def _first_repeat(items: Sequence[str]) -> str:
    """The first item that was already seen earlier in ``items`` (one pass, not quadratic)."""
    seen: set[str] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    raise ValueError("no item is repeated")


def _multi_choice(spec: MultiChoice) -> Checker:
    values = frozenset(value for value, _ in spec.options)
    listing = _listing(spec.options)
    not_list = Invalid(f"must be a list of choices from: {listing}")
    lo = spec.min_items or 0
    hi = spec.max_items if spec.max_items is not None else sys.maxsize
    if lo == hi:
        too_few = too_many = Invalid(f"must have exactly {_plural(lo, 'choice')}")
    else:
        too_few = Invalid(f"must have at least {_plural(lo, 'choice')}")
        too_many = Invalid(f"must have at most {_plural(hi, 'choice')}")

    def check(value: object) -> object:
        if type(value) is not list and not isinstance(value, list | tuple):
            return not_list
        chosen: list[str] = []
        for item in value:
            if type(item) is not str:
                if not isinstance(item, str):
                    return Invalid(f"contains {_shown(item)}, which is not one of: {listing}")
                item = str.__str__(item)
            if item not in values:
                return Invalid(f"contains {_shown(item)}, which is not one of: {listing}")
            chosen.append(item)
        count = len(chosen)
        if count > 1 and len(set(chosen)) != count:
            return Invalid(f"contains {_first_repeat(chosen)!r} more than once")
        if count < lo:
            return too_few
        if count > hi:
            return too_many
        return chosen

    return check


def compile_field(spec: FieldSpec) -> Checker:
    """The checker for one field: value in, cleaned value or :class:`Invalid` out."""
    if isinstance(spec, String):
        return _string(spec)
    if isinstance(spec, Number | Integer):
        return _numeric(spec)
    if isinstance(spec, Boolean):
        return _boolean(spec)
    if isinstance(spec, Choice):
        return _choice(spec)
    return _multi_choice(spec)


class FormValidator:
    """Validation, defaults and per-field checks for one ordered set of fields."""

    __slots__ = ("_by_name", "_defaults", "_plan")

    def __init__(self, fields: Sequence[FieldSpec]) -> None:
        plan = []
        for spec in fields:
            missing = ValidationProblem(spec.name, "is required") if spec.required else None
            plan.append((spec.name, missing, compile_field(spec)))
        self._plan: tuple[tuple[str, ValidationProblem | None, Checker], ...] = tuple(plan)
        self._by_name = {entry[0]: entry for entry in plan}
        self._defaults = tuple((spec.name, spec.default) for spec in fields if spec.default is not None)

    def validate(self, content: object) -> dict[str, Any]:
        """The cleaned answer, or :class:`FormValidationError` listing every problem."""
        if type(content) is not dict and not isinstance(content, Mapping):
            raise FormValidationError((ValidationProblem(None, _NOT_OBJECT),))
        get = content.get
        out: dict[str, Any] = {}
        problems: list[ValidationProblem] | None = None
        for name, missing, check in self._plan:
            value = get(name)
            if value is None:
                if missing is not None:
                    if problems is None:
                        problems = []
                    problems.append(missing)
                continue
            result = check(value)
            if type(result) is Invalid:
                if problems is None:
                    problems = []
                problems.append(ValidationProblem(name, result.message))
            else:
                out[name] = result
        if problems is not None:
            raise FormValidationError(problems)
        return out

    def apply_defaults(self, content: object) -> dict[str, Any]:
        """A copy of ``content`` with each absent (or null) field that has a default filled in."""
        if not isinstance(content, Mapping):
            raise FormValidationError((ValidationProblem(None, _NOT_OBJECT),))
        out = dict(content)
        for name, default in self._defaults:
            if out.get(name) is None:
                out[name] = list(default) if isinstance(default, tuple) else default
        return out

    def check_field(self, name: str, value: object) -> str | None:
        """The problem with ``value`` for field ``name`` as a message, or None if it is fine."""
        _, missing, check = self._by_name[name]
        if value is None:
            return None if missing is None else missing.message
        result = check(value)
        return result.message if isinstance(result, Invalid) else None
