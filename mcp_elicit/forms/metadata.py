"""What is said about a field besides its type: ``Field(...)`` and constraint objects.

``Annotated[int, Field(title="Party size", minimum=1, maximum=20)]`` is how a dataclass,
TypedDict or pydantic model gives a form field its title, description, bounds, format,
option titles and the ``not_secret`` override. :class:`Constraints` gathers all that a
field's annotation and its pydantic ``FieldInfo`` say into one place.

Rules:

- Several ``Field(...)`` merge; a later one's set values win.
- Besides ``Field``, only what maps onto the form subset is understood: annotated-types
  objects with ``ge``/``gt``/``le``/``lt``/``min_length``/``max_length`` (pydantic
  turns ``pydantic.Field(ge=1)`` into these), groups of them (``Interval``, pydantic's
  ``StringConstraints``, read item by item), a pydantic ``FieldInfo`` inside
  ``Annotated``, pydantic's ``UrlConstraints`` (kept for a URL type, see
  :mod:`pydantic_types`; refused on any other) and pydantic's ``Strict`` (ignored:
  answers are checked strictly anyway). Anything else is refused with
  :class:`FormSchemaError` saying what to do instead where there is a way, rather than ignored;
  so is a pydantic field's ``json_schema_extra`` (where pydantic users put a ``format``),
  which no form reads: dropped, its format would be neither shown nor checked. Its keys
  that only document a field (``examples``, ``example``, ``$comment``, ``deprecated``)
  are dropped, as on a wire schema's field; a callable one is refused (what it does to
  the schema is unknown).
- pydantic is looked at only when it is already imported.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms.fields import StringFormat
from mcp_elicit.forms.parse import _FIELD_IGNORED, KEYWORD_HINTS

__all__ = ["Constraints", "Field", "unread_by_forms"]


@dataclass(frozen=True, slots=True, init=False)
class Field:
    """Form metadata for ``Annotated[T, Field(...)]``: titles, bounds, format, secret override.

    Bounds are inclusive. ``titles`` maps option values to display titles.
    ``not_secret=True`` tells the secret guard this field is not a secret.
    """

    title: str | None
    description: str | None
    minimum: float | None
    maximum: float | None
    min_length: int | None
    max_length: int | None
    format: StringFormat | None
    min_items: int | None
    max_items: int | None
    titles: tuple[tuple[str, str], ...] | None
    not_secret: bool

    def __init__(
        self,
        *,
        title: str | None = None,
        description: str | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        format: StringFormat | None = None,
        min_items: int | None = None,
        max_items: int | None = None,
        titles: Mapping[str, str] | None = None,
        not_secret: bool = False,
    ) -> None:
        values = dict(locals())
        del values["self"]
        if titles is not None and not isinstance(titles, Mapping):
            raise TypeError(
                "Field(titles=...) maps each option's value to its title, "
                f"as {{'inside': 'Inside'}}; got {type(titles).__name__} {titles!r:.80}"
            )
        values["titles"] = None if titles is None else tuple(titles.items())
        for attr, value in values.items():
            object.__setattr__(self, attr, value)

    def said(self) -> dict[str, Any]:
        """The attributes this Field sets (not None, not False)."""
        return {a: v for a in Field.__slots__ if (v := getattr(self, a)) is not None and v is not False}


def _pydantic_field_info(item: object) -> Any:
    """``item`` if it is a pydantic ``FieldInfo`` (only when pydantic is already imported)."""
    if "pydantic" not in sys.modules:
        return None
    from pydantic.fields import FieldInfo

    return item if isinstance(item, FieldInfo) else None


#: ``json_schema_extra`` keys that only document a field: what a wire schema's field may
#: carry and a form drops (``parse``), and OpenAPI's ``example`` (pydantic 2 puts a
#: ``Field(example=...)`` there).
_EXTRA_IGNORED = _FIELD_IGNORED | {"example"}


def unread_by_forms(info: Any) -> str | None:
    """Why a pydantic ``FieldInfo`` cannot be asked as it is: what it says that a form
    would drop (its ``json_schema_extra``, but for keys that only document the field),
    else None."""
    extra = getattr(info, "json_schema_extra", None)
    if isinstance(extra, Mapping):
        extra = {k: v for k, v in extra.items() if k not in _EXTRA_IGNORED} or None
    if extra is None:
        return None
    return (
        f"pydantic.Field(json_schema_extra={extra!r}) is not read into a form, so what it says "
        "would be neither asked nor checked: give a format as "
        "Annotated[str, mcp_elicit.Field(format='email')] (or 'uri', 'date', 'date-time'), "
        "bounds with pydantic.Field(ge=..., le=..., min_length=..., max_length=...)"
    )


@dataclass(slots=True)
class Constraints:
    """Everything said about one field besides its type, merged from all sources."""

    name: str
    field: Field = field(default_factory=Field)
    lower: float | None = None
    upper: float | None = None
    lower_exclusive: bool = False
    upper_exclusive: bool = False
    min_len: int | None = None
    max_len: int | None = None
    #: pydantic ``UrlConstraints`` said of the field, for a URL type.
    url: list[Any] = dataclasses.field(default_factory=list)

    def fail(self, message: str) -> FormSchemaError:
        return FormSchemaError(message, field=self.name)

    @property
    def has_bounds(self) -> bool:
        return self.lower is not None or self.upper is not None

    @property
    def has_lengths(self) -> bool:
        return self.min_len is not None or self.max_len is not None

    def take(self, item: object) -> None:
        """Merge one metadata object in, or refuse it."""
        if isinstance(item, Field):
            merged = {a: getattr(self.field, a) for a in Field.__slots__} | item.said()
            titles = merged.pop("titles")
            self.field = Field(**merged, titles=None if titles is None else dict(titles))
        elif item is None or type(item).__name__ == "Strict":
            return
        elif getattr(type(item), "__is_annotated_types_grouped_metadata__", False):
            for inner in item:  # type: ignore[attr-defined]  # Interval, StringConstraints: their parts
                self.take(inner)
        elif type(item).__name__ == "UrlConstraints" and type(item).__module__.startswith("pydantic"):
            self.url.append(item)
        elif type(item).__module__ == "annotated_types":
            self._take_constraint(item)
        elif (info := _pydantic_field_info(item)) is not None:
            if (why := unread_by_forms(info)) is not None:
                raise self.fail(why)
            self.take(Field(title=info.title, description=info.description))
            for inner in info.metadata:
                self.take(inner)
        elif type(item).__module__.startswith("pydantic") and hasattr(item, "__dict__") and not _said(item):
            return  # pydantic's metadata with nothing set (condecimal()'s max_digits=None)
        else:
            raise self.fail(_not_expressible(item))

    def _take_constraint(self, item: object) -> None:
        known = False
        for attr, target, exclusive in (
            ("ge", "lower", False),
            ("gt", "lower", True),
            ("le", "upper", False),
            ("lt", "upper", True),
        ):
            if (value := getattr(item, attr, None)) is not None:
                known = True
                setattr(self, target, value)
                setattr(self, f"{target}_exclusive", exclusive)
        for attr, target in (("min_length", "min_len"), ("max_length", "max_len")):
            if (value := getattr(item, attr, None)) is not None:
                known = True
                setattr(self, target, value)
        if not known and type(item).__name__ == "MultipleOf":
            raise self.fail(
                f"the constraint {item!r} cannot be expressed in a form: multipleOf is not part of "
                "the form subset; check it in the tool instead"
            )
        if not known:
            raise self.fail(f"the constraint {item!r} cannot be expressed in a form")

    def only(
        self, kind: str, *allowed: str, bounds: bool = False, lengths: bool = False, url: bool = False
    ) -> None:
        """Refuse what does not apply to ``kind``: Field attributes not in ``allowed``, stray constraints."""
        if not url and self.url:
            raise self.fail(f"UrlConstraints apply only to a URL type (AnyUrl, HttpUrl...), not to {kind}")
        for attr in self.field.said():
            if attr not in allowed and attr not in ("title", "description", "not_secret"):
                raise self.fail(f"Field({attr}=...) does not apply to {kind}")
        if not bounds and self.has_bounds:
            raise self.fail(f"numeric bounds do not apply to {kind}")
        if not lengths and self.has_lengths:
            raise self.fail(f"length constraints do not apply to {kind}")

    def numeric_bounds(self, *, whole: bool) -> tuple[float | None, float | None]:
        """Inclusive bounds: ``Field`` wins; exclusive ones are exact for whole numbers only."""
        lower, upper = self.lower, self.upper
        for bound, exclusive in ((lower, self.lower_exclusive), (upper, self.upper_exclusive)):
            if exclusive and bound is not None and not (whole and isinstance(bound, int)):
                raise self.fail("exclusive bounds (gt/lt) cannot be expressed in a form; use ge/le")
        if self.lower_exclusive and lower is not None:
            lower += 1
        if self.upper_exclusive and upper is not None:
            upper -= 1
        if self.field.minimum is not None:
            lower = self.field.minimum
        if self.field.maximum is not None:
            upper = self.field.maximum
        return lower, upper

    def lengths(self, low: str, high: str) -> tuple[int | None, int | None]:
        """Length bounds from ``Field(low=..., high=...)``, else from MinLen/MaxLen."""
        lo, hi = getattr(self.field, low), getattr(self.field, high)
        return (self.min_len if lo is None else lo), (self.max_len if hi is None else hi)


def _said(item: object) -> dict[str, Any]:
    """What a pydantic metadata object sets: its attributes that are not None."""
    return {key: value for key, value in getattr(item, "__dict__", {}).items() if value is not None}


def _not_expressible(item: object) -> str:
    """Why ``item`` is refused: a pydantic constraint by the arguments it was given
    (``pydantic.Field(pattern=...)``), anything else by its ``repr``."""
    said = _said(item) if type(item).__module__.startswith("pydantic") else {}
    if not said:
        return (
            f"the constraint {item!r} cannot be expressed in a form; "
            "use mcp_elicit.forms.Field(...) for titles, bounds and formats"
        )
    named = ", ".join(f"{key}={value!r}" for key, value in said.items())
    hints = [KEYWORD_HINTS.get(key) or _ARGUMENT_HINTS.get(key) for key in said]
    why = (
        "; ".join(dict.fromkeys(hint for hint in hints if hint))
        or "use mcp_elicit.forms.Field(...) for titles, bounds and formats"
    )
    return f"{named} cannot be expressed in a form: {why}"


#: For a pydantic argument with no keyword of the wire behind it: what to do instead.
_ARGUMENT_HINTS = {
    "max_digits": "the form subset cannot limit digits; check them in the tool",
    "decimal_places": "the form subset cannot limit digits; check them in the tool",
    "strip_whitespace": "a form gives the text as typed; strip or change it in the tool",
    "to_lower": "a form gives the text as typed; strip or change it in the tool",
    "to_upper": "a form gives the text as typed; strip or change it in the tool",
}
