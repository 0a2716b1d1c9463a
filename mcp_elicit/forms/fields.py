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
  values are strings, unique, and in the order given.
- Integer bounds and defaults stay within I-JSON's safe range (RFC 7493,
  ``-(2**53-1)..2**53-1``), which every JSON peer reads exactly; whole-number
  bounds and defaults of a ``Number`` too. An ``Integer`` whose bounds hold no whole
  number is refused, as no answer could satisfy it.
- Every text (name, title, description, option, default) must be sendable: a lone
  surrogate (an undecodable byte as ``os.listdir`` or ``surrogateescape`` reads it) is
  refused, as UTF-8, so no JSON message, can carry it.
- ``not_secret`` is a local override for the secret guard: it is never sent and
  takes no part in equality.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple, TypeAlias

from mcp_elicit.errors import FormSchemaError

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
SAFE_INTEGER = 2**53 - 1
"""The largest whole number every JSON peer reads exactly (RFC 7493, I-JSON)."""
_UNPAIRED = re.compile("[\ud800-\udfff]")


class Option(NamedTuple):
    """One choice: the ``value`` sent on the wire and the ``title`` a person reads."""

    value: str
    title: str | None = None


OptionsLike: TypeAlias = (
    Mapping[str, str] | Iterable[str] | Iterable[tuple[str, str | None]] | type[enum.Enum]
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Field:
    kind: ClassVar[FieldKind]

    name: str = ""
    title: str | None = None
    description: str | None = None
    required: bool = True
    not_secret: bool = field(default=False, compare=False)

    def _fail(self, message: str) -> FormSchemaError:
        return FormSchemaError(message, field=self.name or None)

    def _check_common(self) -> None:
        if not isinstance(self.name, str):
            raise self._fail(f"the name must be a string, not {self.name!r}")
        _check_text(self, "the name", self.name)
        for attr in ("title", "description"):
            value = getattr(self, attr)
            if value is not None and not isinstance(value, str):
                raise self._fail(f"the {attr} must be a string, not {value!r}")
            if value is not None:
                _check_text(self, f"the {attr}", value)
        if not isinstance(self.required, bool):
            raise self._fail(f"required must be True or False, not {self.required!r}")

    def _json_head(self, type_: str) -> dict[str, Any]:
        out: dict[str, Any] = {"type": type_}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        return out


def _check_text(spec: _Field, what: str, text: str) -> None:
    found = _UNPAIRED.search(text)
    if found is not None:
        raise spec._fail(
            f"{what} has a character that is not text (U+{ord(found[0]):04X}), "
            "which no JSON message can carry"
        )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_real(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return -SAFE_INTEGER <= value <= SAFE_INTEGER
    return math.isfinite(value)


def _shown(value: object) -> str:
    """``repr`` for a message, with a very long whole number cut short."""
    text = repr(value)
    if isinstance(value, int) and len(text) > 24:
        return f"{text[:12]}… ({len(text.lstrip('-'))} digits)"
    return text


_SAFE_RANGE = f"between {-SAFE_INTEGER} and {SAFE_INTEGER}"
_REAL_NEED = f"a finite number, and a whole one must be {_SAFE_RANGE} (write a larger one as a float)"


def _check_range(spec: _Field, lo: float | None, hi: float | None, what: str, *, counts: bool) -> None:
    test = _is_count if counts else _is_real
    need = "a whole number of 0 or more" if counts else _REAL_NEED
    for label, value in (("minimum", lo), ("maximum", hi)):
        if value is not None and not test(value):
            raise spec._fail(f"the {label} {what} must be {need}, not {_shown(value)}")
        if counts and value is not None and value > SAFE_INTEGER:  # a JSON peer may not read it
            raise spec._fail(f"the {label} {what} must be at most {SAFE_INTEGER}, not {_shown(value)}")
    if lo is not None and hi is not None and lo > hi:
        raise spec._fail(f"the minimum {what} {lo} is greater than the maximum {what} {hi}")


def _check_whole_range(spec: _Field, lo: float | None, hi: float | None) -> None:
    """Integer bounds inside the safe range."""
    for label, value in (("minimum", lo), ("maximum", hi)):
        if isinstance(value, int | float) and not -SAFE_INTEGER <= value <= SAFE_INTEGER:
            raise spec._fail(f"the {label} value must be {_SAFE_RANGE}, not {_shown(value)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class String(_Field):
    """Free text, optionally constrained by length (in code points) and ``format``."""

    kind: ClassVar[FieldKind] = "string"

    default: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: StringFormat | None = None

    def check(self) -> None:
        self._check_common()
        _check_range(self, self.min_length, self.max_length, "length", counts=True)
        if self.format is not None and self.format not in STRING_FORMATS:
            raise self._fail(
                f"format {self.format!r} is not supported; use one of: {', '.join(sorted(STRING_FORMATS))}"
            )
        if self.default is not None and not isinstance(self.default, str):
            raise self._fail(f"the default must be a string, not {self.default!r}")
        if self.default is not None:
            _check_text(self, "the default", self.default)

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Number(_Field):
    """A JSON number (integer or not), optionally within inclusive bounds."""

    kind: ClassVar[FieldKind] = "number"

    default: float | None = None
    minimum: float | None = None
    maximum: float | None = None

    def check(self) -> None:
        self._check_common()
        _check_range(self, self.minimum, self.maximum, "value", counts=False)
        if self.default is not None and not _is_real(self.default):
            raise self._fail(f"the default must be {_REAL_NEED}, not {_shown(self.default)}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head(self.kind)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Integer(_Field):
    """A whole number, optionally within inclusive bounds."""

    kind: ClassVar[FieldKind] = "integer"

    default: int | None = None
    minimum: float | None = None
    maximum: float | None = None

    def check(self) -> None:
        self._check_common()
        _check_whole_range(self, self.minimum, self.maximum)
        _check_range(self, self.minimum, self.maximum, "value", counts=False)
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None and math.ceil(lo) > math.floor(hi):
            raise self._fail(f"no whole number lies between the minimum {lo} and the maximum {hi}")
        if self.default is not None and (isinstance(self.default, bool) or not isinstance(self.default, int)):
            raise self._fail(f"the default must be a whole number, not {self.default!r}")
        if self.default is not None and not -SAFE_INTEGER <= self.default <= SAFE_INTEGER:
            raise self._fail(f"the default must be {_SAFE_RANGE}, not {_shown(self.default)}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head(self.kind)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Boolean(_Field):
    """A yes/no answer."""

    kind: ClassVar[FieldKind] = "boolean"

    default: bool | None = None

    def check(self) -> None:
        self._check_common()
        if self.default is not None and not isinstance(self.default, bool):
            raise self._fail(f"the default must be True or False, not {self.default!r}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("boolean")
        if self.default is not None:
            out["default"] = self.default
        return out


def humanize(name: str) -> str:
    """A title from an identifier: ``GLUTEN_FREE`` and ``gluten_free`` become ``Gluten free``."""
    text = name.replace("_", " ").strip()
    if text.isupper():
        text = text.lower()
    return text[:1].upper() + text[1:]


def enum_options(enum_type: type[enum.Enum]) -> tuple[Option, ...]:
    """Titled options from an Enum whose values are strings; titles come from member names."""
    options = []
    for member in enum_type:
        if not isinstance(member.value, str):
            raise FormSchemaError(
                f"Enum {enum_type.__name__} has the non-string value {member.value!r}; "
                "form choices are strings (use a StrEnum or an Enum of str)"
            )
        options.append(Option(member.value, humanize(member.name)))
    return tuple(options)


def _normalize_options(options: OptionsLike) -> tuple[Option, ...]:
    if isinstance(options, type) and issubclass(options, enum.Enum):
        return enum_options(options)
    if isinstance(options, Mapping):
        return tuple(Option(value, title) for value, title in options.items())
    if isinstance(options, str):
        raise FormSchemaError(f"options must be a list of strings, not the single string {options!r}")
    out: list[Option] = []
    for item in options:
        if isinstance(item, str):
            out.append(Option(item))
        elif isinstance(item, tuple) and len(item) == 2:
            out.append(Option(item[0], item[1]))
        else:
            raise FormSchemaError(f"option {item!r} is neither a string nor a (value, title) pair")
    return tuple(out)


def _check_options(spec: _Field, options: tuple[Option, ...]) -> None:
    if not options:
        raise spec._fail("a choice needs at least one option")
    seen: set[str] = set()
    for value, title in options:
        if not isinstance(value, str):
            raise spec._fail(f"option values must be strings, not {value!r}")
        if title is not None and not isinstance(title, str):
            raise spec._fail(f"the title of option {value!r} must be a string, not {title!r}")
        _check_text(spec, f"option {value!r}", value)
        if title is not None:
            _check_text(spec, f"the title of option {value!r}", title)
        if value in seen:
            raise spec._fail(f"option {value!r} is listed twice")
        seen.add(value)
    titled = {title is not None for _, title in options}
    if len(titled) > 1:
        raise spec._fail("options must either all have titles or all have none")


def _options_json(options: tuple[Option, ...], key: str) -> dict[str, Any]:
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
            ("options", _normalize_options(options)),
            ("default", default),
            ("legacy_enum_names", legacy_enum_names),
        ):
            object.__setattr__(self, attr, value)

    @property
    def titled(self) -> bool:
        """Whether the options carry titles."""
        return bool(self.options) and self.options[0].title is not None

    def check(self) -> None:
        self._check_common()
        _check_options(self, self.options)
        if self.legacy_enum_names and not self.titled:
            raise self._fail("legacy_enum_names needs options with titles")
        if self.default is not None and not isinstance(self.default, str):
            raise self._fail(f"the default must be a string, not {self.default!r}")

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("string")
        if self.legacy_enum_names:
            out["enum"] = [value for value, _ in self.options]
            out["enumNames"] = [title for _, title in self.options]
        else:
            out.update(_options_json(self.options, "oneOf"))
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
        if isinstance(default, str):
            raise FormSchemaError(f"the default of a multi-choice must be a list, not the string {default!r}")
        for attr, value in (
            ("name", name),
            ("title", title),
            ("description", description),
            ("required", required),
            ("not_secret", not_secret),
            ("options", _normalize_options(options)),
            ("default", None if default is None else tuple(default)),
            ("min_items", min_items),
            ("max_items", max_items),
        ):
            object.__setattr__(self, attr, value)

    @property
    def titled(self) -> bool:
        """Whether the options carry titles."""
        return bool(self.options) and self.options[0].title is not None

    def check(self) -> None:
        self._check_common()
        _check_options(self, self.options)
        _check_range(self, self.min_items, self.max_items, "number of choices", counts=True)
        if self.min_items is not None and self.min_items > len(self.options):
            raise self._fail(
                f"it asks for at least {self.min_items} choices but offers only {len(self.options)} options"
            )

    def to_json(self) -> dict[str, Any]:
        out = self._json_head("array")
        out["items"] = _options_json(self.options, "anyOf")
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.default is not None:
            out["default"] = list(self.default)
        return out


FieldSpec: TypeAlias = String | Number | Integer | Boolean | Choice | MultiChoice
