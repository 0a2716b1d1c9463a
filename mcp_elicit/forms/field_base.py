"""What every field of a form has, whatever its kind: a ``name``, an optional ``title``
and ``description``, ``required``, and the local ``not_secret`` override; checked and
written to JSON the same way for every kind (``forms.fields``, ``forms.choices``).

Rules:

- ``name``, ``title`` and ``description`` are strings (the latter two optional) that
  UTF-8 can carry (``field_values.check_text``); ``required`` is ``True`` or ``False``.
  A failed check raises :class:`FormSchemaError` naming the field and the rule.
- ``not_secret`` is never sent and takes no part in equality.
- Every kind writes ``type``, then ``title`` and ``description`` when given, first.
- A kind built with its own ``__init__`` sets these values with ``set_common`` (straight
  through the slots, as the frozen dataclass's own ``__init__`` would) and its form cache
  key with ``set_key``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms.field_values import check_text, fail

__all__ = ["FieldBase", "FieldKind", "set_common", "set_key"]

FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "choice", "multi_choice"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldBase:
    """The values and checks every kind of field shares."""

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


_set_name, _set_title, _set_description, _set_required, _set_not_secret, set_key = (
    vars(FieldBase)[name].__set__
    for name in ("name", "title", "description", "required", "not_secret", "_key")
)


def set_common(
    spec: FieldBase, name: str, title: str | None, description: str | None, required: bool, not_secret: bool
) -> bool:
    """Set the values every field has; whether they are all at their default but the name."""
    _set_name(spec, name)
    _set_title(spec, title)
    _set_description(spec, description)
    _set_required(spec, required)
    _set_not_secret(spec, not_secret)
    return title is None and description is None and required is True and not_secret is False
