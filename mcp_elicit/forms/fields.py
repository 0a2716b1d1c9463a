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

The checks on values and the choice options live in :mod:`mcp_elicit.forms.field_values`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms.field_values import (
    REAL_NEED,
    SAFE_INTEGER,
    SAFE_RANGE,
    Option,
    OptionsLike,
    check_format_length,
    check_options,
    check_range,
    check_text,
    check_whole_range,
    enum_options,
    fail,
    given_multi_default,
    given_options,
    humanize,
    is_real,
    multi_default,
    read_options,
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

FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "choice", "multi_choice"]
StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"]
STRING_FORMATS: frozenset[str] = frozenset({"email", "uri", "date", "date-time"})


@dataclass(frozen=True, slots=True, kw_only=True)
class _Field:
    kind: ClassVar[FieldKind]

    name: str = ""
    title: str | None = None
    description: str | None = None
    required: bool = True
    not_secret: bool = field(default=False, compare=False)
    #: The form cache's key when every value but the name is its default, by identity (set
    #: when built; otherwise None, and the form works the key out from the values).
    _key: tuple[Any, ...] | None = field(default=None, init=False, repr=False, compare=False)

    def _fail(self, message: str) -> FormSchemaError:
        return fail(self, message)

    def _check_common(self) -> None:
        if not isinstance(self.name, str):
            raise self._fail(f"the name must be a string, not {self.name!r}")
        check_text(self, "the name", self.name)
        for attr in ("title", "description"):
            value = getattr(self, attr)
            if value is not None and not isinstance(value, str):
                raise self._fail(f"the {attr} must be a string, not {value!r}")
            if value is not None:
                check_text(self, f"the {attr}", value)
        if not isinstance(self.required, bool):
            raise self._fail(f"required must be True or False, not {self.required!r}")

    def _json_head(self, type_: str) -> dict[str, Any]:
        out: dict[str, Any] = {"type": type_}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        return out


_set_name, _set_title, _set_description, _set_required, _set_not_secret, _set_key = (
    vars(_Field)[name].__set__ for name in ("name", "title", "description", "required", "not_secret", "_key")
)


def _set_common(
    spec: _Field, name: str, title: str | None, description: str | None, required: bool, not_secret: bool
) -> bool:
    """Set the values every field has; whether they are all at their default but the name."""
    _set_name(spec, name)
    _set_title(spec, title)
    _set_description(spec, description)
    _set_required(spec, required)
    _set_not_secret(spec, not_secret)
    return title is None and description is None and required is True and not_secret is False


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class String(_Field):
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
        plain = _set_common(self, name, title, description, required, not_secret)
        _set_string_default(self, default)
        _set_min_length(self, min_length)
        _set_max_length(self, max_length)
        _set_format(self, format)
        plain = plain and default is None and min_length is None and max_length is None and format is None
        _set_key(self, (String, name) if plain and type(name) is str else None)

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
class Number(_Field):
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
        plain = _set_common(self, name, title, description, required, not_secret)
        _set_number_default(self, default)
        _set_number_minimum(self, minimum)
        _set_number_maximum(self, maximum)
        plain = plain and default is None and minimum is None and maximum is None
        _set_key(self, (Number, name) if plain and type(name) is str else None)

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
class Integer(_Field):
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
        plain = _set_common(self, name, title, description, required, not_secret)
        _set_integer_default(self, default)
        _set_integer_minimum(self, minimum)
        _set_integer_maximum(self, maximum)
        plain = plain and default is None and minimum is None and maximum is None
        _set_key(self, (Integer, name) if plain and type(name) is str else None)

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
class Boolean(_Field):
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
        plain = _set_common(self, name, title, description, required, not_secret)
        _set_boolean_default(self, default)
        _set_key(self, (Boolean, name) if plain and default is None and type(name) is str else None)

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


def _options_json(spec: Choice | MultiChoice, key: str) -> dict[str, Any]:
    options = read_options(spec, spec.options)  # kept as given (unnamed, unchecked): refused
    if options[0].title is None:
        return {"type": "string", "enum": [value for value, _ in options]}
    return {key: [{"const": value, "title": title} for value, title in options]}


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Choice(_Field):
    """Pick exactly one option. ``Choice(["a", "b"])``, ``Choice({"a": "Title A"})``, ``Choice(MyEnum)``.

    ``legacy_enum_names`` writes titles as the deprecated ``enum`` + ``enumNames``
    pair instead of ``oneOf`` (parse sets it when it read that form).
    """

    kind: ClassVar[FieldKind] = "choice"

    options: tuple[Option, ...]
    default: str | None = None
    legacy_enum_names: bool = False

    def __init__(
        self,
        options: OptionsLike,
        *,
        name: str = "",
        title: str | None = None,
        description: str | None = None,
        required: bool = True,
        default: str | None = None,
        legacy_enum_names: bool = False,
        not_secret: bool = False,
    ) -> None:
        for attr, value in (
            ("name", name),
            ("title", title),
            ("description", description),
            ("required", required),
            ("not_secret", not_secret),
            ("options", given_options(options, name)),
            ("default", default),
            ("legacy_enum_names", legacy_enum_names),
            ("_key", None),
        ):
            object.__setattr__(self, attr, value)

    @property
    def titled(self) -> bool:
        """Whether the options carry titles."""
        return bool(self.options) and self.options[0].title is not None

    def check(self) -> None:
        self._check_common()
        check_options(self, self.options)
        if self.legacy_enum_names and not self.titled:
            raise self._fail("legacy_enum_names needs options with titles")
        if self.default is not None and not isinstance(self.default, str):
            raise self._fail(f"the default must be a string, not {self.default!r}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("string")
        if self.legacy_enum_names:
            out["enum"] = [value for value, _ in read_options(self, self.options)]
            out["enumNames"] = [title for _, title in self.options]
        else:
            out.update(_options_json(self, "oneOf"))
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class MultiChoice(_Field):
    """Pick any number of distinct options, optionally between ``min_items`` and ``max_items``."""

    kind: ClassVar[FieldKind] = "multi_choice"

    options: tuple[Option, ...]
    default: tuple[str, ...] | None = None
    min_items: int | None = None
    max_items: int | None = None

    def __init__(
        self,
        options: OptionsLike,
        *,
        name: str = "",
        title: str | None = None,
        description: str | None = None,
        required: bool = True,
        default: Iterable[str] | None = None,
        min_items: int | None = None,
        max_items: int | None = None,
        not_secret: bool = False,
    ) -> None:
        for attr, value in (
            ("name", name),
            ("title", title),
            ("description", description),
            ("required", required),
            ("not_secret", not_secret),
            ("options", given_options(options, name)),
            ("default", given_multi_default(default, name)),
            ("min_items", min_items),
            ("max_items", max_items),
            ("_key", None),
        ):
            object.__setattr__(self, attr, value)

    @property
    def titled(self) -> bool:
        """Whether the options carry titles."""
        return bool(self.options) and self.options[0].title is not None

    def check(self) -> None:
        self._check_common()
        check_options(self, self.options)
        multi_default(self.default, self.name)  # one kept as given (``given_multi_default``): refused
        check_range(self, self.min_items, self.max_items, "number of choices", counts=True)
        if self.min_items is not None and self.min_items > len(self.options):
            offered = f"{len(self.options)} option{'s' if len(self.options) > 1 else ''}"
            raise self._fail(f"it asks for at least {self.min_items} choices but offers only {offered}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("array")
        out["items"] = _options_json(self, "anyOf")
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.default is not None:
            out["default"] = list(multi_default(self.default, self.name) or ())  # kept as given: refused
        return out


FieldSpec: TypeAlias = String | Number | Integer | Boolean | Choice | MultiChoice
