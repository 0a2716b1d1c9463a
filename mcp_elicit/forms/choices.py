"""The fields that pick from options: :class:`Choice` (exactly one) and
:class:`MultiChoice` (any number, distinct), part of the field model (``forms.fields``).

Rules:

- Options are ``(value, title)`` pairs, either all titled or all untitled; values are
  strings, unique, and in the order given (a ``set`` of them is refused); an enum class
  gives its members (``field_values``).
- Untitled options are written as ``enum``; titled ones as ``oneOf`` (a ``Choice``) or
  ``anyOf`` (the items of a ``MultiChoice``) of ``const`` and ``title``, or, for a
  ``Choice`` read that way, as the deprecated ``enum`` + ``enumNames`` pair.
- A ``MultiChoice`` cannot ask for more choices (``min_items``) than it offers, and its
  default holds distinct options.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from mcp_elicit.forms.field_base import FieldBase, FieldKind
from mcp_elicit.forms.field_values import (
    Option,
    OptionsLike,
    check_options,
    check_range,
    given_multi_default,
    given_options,
    multi_default,
    read_options,
)

__all__ = ["Choice", "MultiChoice"]


def _options_json(spec: Choice | MultiChoice, key: str) -> dict[str, Any]:
    options = read_options(spec, spec.options)  # kept as given (unnamed, unchecked): refused
    if options[0].title is None:
        return {"type": "string", "enum": [value for value, _ in options]}
    return {key: [{"const": value, "title": title} for value, title in options]}


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Choice(FieldBase):
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
class MultiChoice(FieldBase):
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
