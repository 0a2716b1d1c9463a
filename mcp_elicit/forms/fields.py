"""The field model: one frozen dataclass per kind of field a form may hold.

MCP form-mode elicitation allows a flat object whose properties are primitive:
text (:class:`String`, optionally with a ``format``), numbers (:class:`Number`,
:class:`Integer`), :class:`Boolean`, a single-select :class:`Choice` and a
multi-select :class:`MultiChoice`. A field spec is plain, immutable data that a UI
reads (``kind``, ``title``, ``description``, ``required``, ``default``, bounds,
``format``, ``options``) and that knows its wire form (:meth:`to_json`).

Rules:

- A spec is pure data: it knows nothing of answers (``validate``), Python types
  (``annotations``) or secrets (``secrets``).
- ``name`` is given by the form (``Form(...)``, ``parse``, ``from_type``); an unnamed
  spec is only a building block. ``check()`` raises :class:`FormSchemaError` naming
  the field and the rule; the form calls it, so no inconsistent spec reaches a form.
- Bounds are inclusive, as JSON Schema's ``minimum``/``minLength``/``minItems`` are.
- Choice options are ``(value, title)`` pairs, either all titled or all untitled;
  values are strings, unique, and in the order given (a ``set`` of them is refused).
- Integer bounds and defaults stay within I-JSON's safe range (RFC 7493,
  ``-(2**53-1)..2**53-1``), which every JSON peer reads exactly; whole-number
  bounds and defaults of a ``Number`` too. An ``Integer`` whose bounds hold no whole
  number is refused, as no answer could satisfy it; so is a ``String`` whose length bounds
  leave no room for an answer of its ``format`` (a ``date`` is 10 characters long).
- Every text (name, title, description, option, default) must be sendable: a lone
  surrogate (an undecodable byte as ``os.listdir`` or ``surrogateescape`` reads it) is
  refused, as UTF-8, so no JSON message, can carry it.
- ``not_secret`` is a local override for the secret guard: it is never sent and
  takes no part in equality.

The checks on values and the choice options live in :mod:`mcp_elicit.forms.field_values`,
what every kind has in :mod:`mcp_elicit.forms.field_base`, and the kinds that pick from
options (:class:`Choice`, :class:`MultiChoice`) in :mod:`mcp_elicit.forms.choices`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from mcp_elicit.forms.choices import Choice, MultiChoice
from mcp_elicit.forms.field_base import FieldBase, FieldKind, set_common, set_key
from mcp_elicit.forms.field_values import (
    REAL_NEED,
    SAFE_INTEGER,
    SAFE_RANGE,
    Option,
    OptionsLike,
    check_format_length,
    check_range,
    check_text,
    check_whole_range,
    enum_options,
    humanize,
    is_real,
    shown,
)

__all__ = [
    "SAFE_INTEGER",
    "STRING_FORMATS",
    "Boolean",
    "Choice",
    "FieldKind",
    "FieldSpec",
    "Integer",
    "MultiChoice",
    "Number",
    "Option",
    "OptionsLike",
    "String",
    "StringFormat",
    "enum_options",
    "humanize",
]

StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"]
STRING_FORMATS: frozenset[str] = frozenset({"email", "uri", "date", "date-time"})


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class String(FieldBase):
    """Free text, optionally constrained by length (in code points) and ``format``."""

    kind: ClassVar[FieldKind] = "string"

    default: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: StringFormat | None = None

    def __init__(
        self,
        *,
        name: str = "",
        title: str | None = None,
        description: str | None = None,
        required: bool = True,
        not_secret: bool = False,
        default: str | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        format: StringFormat | None = None,
    ) -> None:
        # Written out: a handler builds its fields per request (Form(region=String())),
        # and the generated frozen __init__ (object.__setattr__ per field) cost twice this.
        # The fields are set through their slots (the spec is frozen); a test checks that
        # each written-out __init__ takes the class's fields with their defaults.
        plain = set_common(self, name, title, description, required, not_secret)
        _set_string_default(self, default)
        _set_min_length(self, min_length)
        _set_max_length(self, max_length)
        _set_format(self, format)
        plain = plain and default is None and min_length is None and max_length is None and format is None
        set_key(self, (String, name) if plain and type(name) is str else None)

    def check(self) -> None:
        self._check_common()
        check_range(self, self.min_length, self.max_length, "length", counts=True)
        if self.format is not None and self.format not in STRING_FORMATS:
            raise self._fail(
                f"format {shown(self.format)} is not supported; use one of: {', '.join(sorted(STRING_FORMATS))}"
            )
        if self.format is not None:
            check_format_length(self, self.format, self.min_length, self.max_length)
        if self.default is not None and not isinstance(self.default, str):
            raise self._fail(f"the default must be a string, not {self.default!r}")
        if self.default is not None:
            check_text(self, "the default", self.default)

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("string")
        if self.min_length is not None:
            out["minLength"] = self.min_length
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.format is not None:
            out["format"] = self.format
        if self.default is not None:
            out["default"] = self.default
        return out


_set_string_default, _set_min_length, _set_max_length, _set_format = (
    vars(String)[name].__set__ for name in ("default", "min_length", "max_length", "format")
)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Number(FieldBase):
    """A JSON number (integer or not), optionally within inclusive bounds."""

    kind: ClassVar[FieldKind] = "number"

    default: float | None = None
    minimum: float | None = None
    maximum: float | None = None

    def __init__(
        self,
        *,
        name: str = "",
        title: str | None = None,
        description: str | None = None,
        required: bool = True,
        not_secret: bool = False,
        default: float | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> None:
        # Written out, as String's is: set through the slots.
        plain = set_common(self, name, title, description, required, not_secret)
        _set_number_default(self, default)
        _set_number_minimum(self, minimum)
        _set_number_maximum(self, maximum)
        plain = plain and default is None and minimum is None and maximum is None
        set_key(self, (Number, name) if plain and type(name) is str else None)

    def check(self) -> None:
        self._check_common()
        check_range(self, self.minimum, self.maximum, "value", counts=False)
        if self.default is not None and not is_real(self.default):
            raise self._fail(f"the default must be {REAL_NEED}, not {shown(self.default)}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head(self.kind)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.default is not None:
            out["default"] = self.default
        return out


_set_number_default, _set_number_minimum, _set_number_maximum = (
    vars(Number)[name].__set__ for name in ("default", "minimum", "maximum")
)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Integer(FieldBase):
    """A whole number, optionally within inclusive bounds (as written: see ``whole_bounds``)."""

    kind: ClassVar[FieldKind] = "integer"

    default: int | None = None
    minimum: float | None = None
    maximum: float | None = None

    def __init__(
        self,
        *,
        name: str = "",
        title: str | None = None,
        description: str | None = None,
        required: bool = True,
        not_secret: bool = False,
        default: int | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> None:
        # Written out, as String's is: set through the slots.
        plain = set_common(self, name, title, description, required, not_secret)
        _set_integer_default(self, default)
        _set_integer_minimum(self, minimum)
        _set_integer_maximum(self, maximum)
        plain = plain and default is None and minimum is None and maximum is None
        set_key(self, (Integer, name) if plain and type(name) is str else None)

    def check(self) -> None:
        self._check_common()
        check_whole_range(self, self.minimum, self.maximum)
        check_range(self, self.minimum, self.maximum, "value", counts=False)
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None and math.ceil(lo) > math.floor(hi):
            raise self._fail(f"no whole number lies between the minimum {lo} and the maximum {hi}")
        if self.default is not None and (isinstance(self.default, bool) or not isinstance(self.default, int)):
            raise self._fail(f"the default must be a whole number, not {self.default!r}")
        if self.default is not None and not -SAFE_INTEGER <= self.default <= SAFE_INTEGER:
            raise self._fail(f"the default must be {SAFE_RANGE}, not {shown(self.default)}")

    @property
    def whole_bounds(self) -> tuple[int | None, int | None]:
        """The least and greatest whole numbers the bounds allow: 1 and 3 for 0.5 and 3.7."""
        lo, hi = self.minimum, self.maximum
        return (None if lo is None else math.ceil(lo), None if hi is None else math.floor(hi))

    def to_json(self) -> dict[str, Any]:
        out = self._json_head(self.kind)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.default is not None:
            out["default"] = self.default
        return out


_set_integer_default, _set_integer_minimum, _set_integer_maximum = (
    vars(Integer)[name].__set__ for name in ("default", "minimum", "maximum")
)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Boolean(FieldBase):
    """A yes/no answer."""

    kind: ClassVar[FieldKind] = "boolean"

    default: bool | None = None

    def __init__(
        self,
        *,
        name: str = "",
        title: str | None = None,
        description: str | None = None,
        required: bool = True,
        not_secret: bool = False,
        default: bool | None = None,
    ) -> None:
        # Written out, as String's is: set through the slots.
        plain = set_common(self, name, title, description, required, not_secret)
        _set_boolean_default(self, default)
        set_key(self, (Boolean, name) if plain and default is None and type(name) is str else None)

    def check(self) -> None:
        self._check_common()
        if self.default is not None and not isinstance(self.default, bool):
            raise self._fail(f"the default must be True or False, not {self.default!r}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("boolean")
        if self.default is not None:
            out["default"] = self.default
        return out


_set_boolean_default = vars(Boolean)["default"].__set__


FieldSpec: TypeAlias = String | Number | Integer | Boolean | Choice | MultiChoice
