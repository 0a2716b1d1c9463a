"""``mcp_elicit.Field`` on a handler's parameter, made pydantic's own metadata when the
handler is registered.

``Field`` is made for forms, but a developer who imports it from ``mcp_elicit`` puts it on
a tool's (or a prompt's) parameters too, where pydantic would silently ignore it. So each
one, wherever it sits in a parameter's hint (``list[Annotated[int, Field(minimum=1)]]``
too), becomes the ``pydantic.Field`` that says the same thing: the ``inputSchema`` and the
check of the arguments are then exactly those of ``pydantic.Field``, built once, and a
call costs what it costs with ``pydantic.Field``.

Rules:

* ``title`` and ``description`` apply to any parameter; ``minimum``/``maximum`` to an
  ``int`` or ``float`` (``ge``/``le``); ``min_length``/``max_length`` and ``format`` to a
  ``str``; ``min_items``/``max_items`` to a ``list``, ``set``, ``frozenset`` or ``tuple``.
  ``X | None`` is read as ``X``. ``format`` is shown in the schema and checked, with the
  form's own check and message, on a text the client sends (not on ``None``).
* Anything else (``titles``, ``not_secret``, a bound on a type it does not fit) is refused
  with ``TypeError``, naming the parameter and what to do; so are values the form's own
  rules refuse (a minimum above the maximum, an unknown format...).
* A ``Field`` inside a dataclass, TypedDict or pydantic model a parameter is typed with
  (a form's dataclass, say) is refused, naming the class and its field: pydantic reads
  those classes itself and would ignore it, and a twin class would not be the one the
  function expects; ``pydantic.Field`` says the same there.
* So is one inside the class a tool returns, when its ``outputSchema`` is made from it
  (``tools``): pydantic writes that schema too. One on a tool's return type itself
  (``-> Annotated[str, Field(...)]``) is refused always: a result is described by the
  tool's description, or by the fields of the class it is.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, Final

import pydantic
from pydantic import AfterValidator, BaseModel
from typing_extensions import is_typeddict

from mcp_elicit.errors import FormSchemaError
from mcp_elicit.forms import Field
from mcp_elicit.forms.field_values import check_range
from mcp_elicit.forms.fields import Integer, Number, String
from mcp_elicit.forms.formats import FORMAT_CHECKS, FormatMismatch, format_message

__all__ = ["refuse_fields_in_classes", "refuse_fields_on_result", "with_pydantic_fields"]

#: What each kind of parameter may be told, besides ``title`` and ``description``.
_APPLIES: Final[dict[str, frozenset[str]]] = {
    "text": frozenset({"min_length", "max_length", "format"}),
    "number": frozenset({"minimum", "maximum"}),
    "list": frozenset({"min_items", "max_items"}),
    "other": frozenset(),
}

#: What to do instead, for what applies to no parameter.
_INSTEAD: Final = {
    "titles": "it titles a form's options; say what the values mean in description=",
    "not_secret": "it tells the secret guard of forms about a field; a parameter has none",
}

_ITEMS: Final = (list, set, frozenset, tuple, collections.abc.Sequence, collections.abc.Set)


def with_pydantic_fields(where: str, name: str, hint: Any) -> Any:
    """``hint`` with each ``Field`` in it made pydantic's metadata (``hint`` itself when
    it has none); ``TypeError`` naming ``where`` and ``name`` for what cannot apply."""
    refuse_fields_in_classes(where, f"the type of {name}", hint)
    return _translated(where, name, hint)


def refuse_fields_in_classes(where: str, what: str, hint: Any) -> None:
    """``TypeError`` naming ``where``, ``what`` (``hint``) and the class and field, when a
    dataclass, TypedDict or pydantic model in ``hint`` has a ``Field`` (a parameter's type,
    or a tool's return type, whose ``outputSchema`` pydantic makes)."""
    inside = _in_a_class(hint, set())
    if inside is not None:
        raise TypeError(
            f"{where}: {what} holds {inside}, whose mcp_elicit.Field pydantic does not read "
            "inside a class, so it would be neither shown nor checked; there, use pydantic.Field "
            "(title=, description=, ge=, le=, min_length=, max_length=)"
        )


def refuse_fields_on_result(where: str, hint: Any) -> None:
    """``TypeError`` naming ``where`` when a tool's return type ``hint`` has a ``Field``
    outside any class (on the type itself, or on an item of a list): nothing reads it."""
    if _has_field(hint):
        raise TypeError(
            f"{where}: the return type has an mcp_elicit.Field, which nothing reads on a result, so "
            "it would be neither shown nor checked; say what the tool returns in its description=, "
            "or return a dataclass, TypedDict or pydantic model whose fields use pydantic.Field"
        )


def _has_field(hint: Any) -> bool:
    if typing.get_origin(hint) is typing.Annotated:
        return any(isinstance(m, Field) for m in hint.__metadata__) or _has_field(typing.get_args(hint)[0])
    return any(_has_field(arg) for arg in typing.get_args(hint))


def _translated(where: str, name: str, hint: Any) -> Any:
    args = typing.get_args(hint)
    if not args:
        return hint
    if typing.get_origin(hint) is typing.Annotated:
        inner = _translated(where, name, args[0])
        said = [_said(where, name, inner, m) if isinstance(m, Field) else [m] for m in hint.__metadata__]
        return typing.Annotated[(inner, *(m for ms in said for m in ms))]
    ready = tuple(_translated(where, name, arg) for arg in args)
    if all(a is b for a, b in zip(ready, args, strict=True)):
        return hint
    return rebuilt(hint, ready)


def _in_a_class(hint: Any, seen: set[type]) -> str | None:
    """``Class.field`` of the first ``Field`` in a dataclass, TypedDict or pydantic model
    that ``hint`` holds (its fields' own hints too), else None."""
    if isinstance(hint, type) and hint not in seen:
        if dataclasses.is_dataclass(hint) or is_typeddict(hint):
            seen.add(hint)
            try:
                fields = typing.get_type_hints(hint, include_extras=True)
            except Exception:  # a name it cannot resolve: pydantic says so, as for any hint
                return None
            for key, field_hint in fields.items():
                while typing.get_origin(field_hint) in (typing.Required, typing.NotRequired):
                    (field_hint,) = typing.get_args(field_hint)  # a TypedDict's key, marked
                metadata = getattr(field_hint, "__metadata__", ())
                if any(isinstance(m, Field) for m in metadata):
                    return f"{hint.__qualname__}.{key}"
                if (found := _in_a_class(field_hint, seen)) is not None:
                    return found
        elif issubclass(hint, BaseModel):
            seen.add(hint)
            for key, info in hint.model_fields.items():
                if any(isinstance(m, Field) for m in info.metadata):
                    return f"{hint.__qualname__}.{key}"
                if (found := _in_a_class(info.annotation, seen)) is not None:
                    return found
        return None
    for arg in typing.get_args(hint):
        if (found := _in_a_class(arg, seen)) is not None:
            return found
    return None


def rebuilt(hint: Any, args: tuple[Any, ...]) -> Any:
    """The generic ``hint`` with ``args`` in place of its own (not an ``Annotated``)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[args]  # noqa: UP007 (built from a tuple)
    return hint.copy_with(args) if hasattr(hint, "copy_with") else origin[args]


def _said(where: str, name: str, hint: Any, field: Field) -> list[Any]:
    """The pydantic metadata saying what ``field`` says of a parameter typed ``hint``."""
    kind = _kind(hint)
    said = field.said()
    for attr in said:
        if attr in _INSTEAD:
            raise TypeError(
                f"{where}: Field({attr}=...) on {name} does not apply to a parameter: {_INSTEAD[attr]}"
            )
        if attr not in _APPLIES[kind] and attr not in ("title", "description"):
            raise TypeError(
                f"{where}: Field({attr}=...) on {name} does not apply to a {kind} parameter ({hint!r}); "
                f"it applies to {_applies_to(attr)}"
            )
    try:
        _check(kind, hint, field)
    except FormSchemaError as exc:
        raise TypeError(f"{where}: the Field(...) of {name}: {exc}") from None
    lo, hi = (field.min_items, field.max_items) if kind == "list" else (field.min_length, field.max_length)
    out: list[Any] = [
        pydantic.Field(
            title=field.title,
            description=field.description,
            ge=field.minimum,
            le=field.maximum,
            min_length=lo,
            max_length=hi,
            json_schema_extra=None if field.format is None else {"format": field.format},
        )
    ]
    if field.format is not None:
        out.append(AfterValidator(_format_check(field.format)))
    return out


def _kind(hint: Any) -> str:
    """Which ``Field`` attributes fit a parameter typed ``hint``: its kind."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        others = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _kind(others[0]) if len(others) == 1 else "other"
    if typing.get_origin(hint) is typing.Annotated:
        return _kind(typing.get_args(hint)[0])
    if hint is str:
        return "text"
    if hint in (int, float):
        return "number"
    if hint in _ITEMS or typing.get_origin(hint) in _ITEMS:
        return "list"
    return "other"


def _applies_to(attr: str) -> str:
    for kind, names in _APPLIES.items():
        if attr in names:
            return {"text": "a str", "number": "an int or a float", "list": "a list, set or tuple"}[kind]
    return "none"  # pragma: no cover (every attribute of Field is in one)


def _check(kind: str, hint: Any, field: Field) -> None:
    """The form's own rules for the values ``field`` says (``FormSchemaError``)."""
    title, description = field.title, field.description
    if kind == "number":
        spec = Integer if _kind_is(hint, int) else Number
        spec(title=title, description=description, minimum=field.minimum, maximum=field.maximum).check()
        return
    fmt: Any = field.format  # checked here: a developer may pass any text
    text = String(
        title=title,
        description=description,
        min_length=field.min_length,
        max_length=field.max_length,
        format=fmt,
    )
    text.check()
    check_range(text, field.min_items, field.max_items, "number of items", counts=True)


def _kind_is(hint: Any, cls: type) -> bool:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_kind_is(arg, cls) for arg in typing.get_args(hint))
    return hint is cls


def _format_check(fmt: str) -> Callable[[Any], Any]:
    test = FORMAT_CHECKS[fmt]

    def check(value: Any) -> Any:
        if isinstance(value, str) and not test(value):
            raise FormatMismatch(format_message(fmt, value))
        return value

    return check
