"""From a class of fields (dataclass, TypedDict, pydantic model) to a form, and back.

:func:`describe_class` reads a class's fields, in order, into named field specs
(through :mod:`annotations`) and a :class:`Binding` that :meth:`Binding.build` uses to
turn a validated answer into an instance of that class.

Rules:

- A field is required unless it has a default (or a default factory), is ``X | None``,
  or is a TypedDict key that is not required. ``init=False`` dataclass fields,
  ClassVars and ``InitVar``\\s with a default are not asked; an ``InitVar`` without
  one is refused, as no answer could build the class.
- A default becomes the wire default when it fits the field (an Enum member becomes its
  value, a date its ISO text, a set a list in option order); a default that does not
  fit is refused, while a default factory whose result does not fit is simply not
  shown (the factory still runs when the instance is built).
- ``build`` leaves an absent field out when the class has a default for it (or for a
  TypedDict), and passes None for an absent ``X | None`` field without one. A value the
  field's declared type refuses (its converter's ``ValueError``: a URL of a scheme the
  type does not allow) is that field's problem in a :class:`FormValidationError`, every
  such field at once, before the class is made.
- pydantic is only looked at when it has been imported: a class cannot be a pydantic
  model otherwise. A pydantic dataclass is read like a model (its ``pydantic.Field``
  defaults give constraints and defaults) and built through pydantic. A pydantic field's name on the wire is the key the model validates
  by: its ``validation_alias`` (or ``alias``) when that is one string, its own name when
  the model does not validate by alias. A choice of aliases (``AliasChoices``) or a
  path (``AliasPath``) is refused: a form field has exactly one flat key.
  ``ValidationError``\\s raised while building a model, and a ``ValueError`` from a
  class's own check (a dataclass's ``__post_init__``), become :class:`FormValidationError`.
  A ``RootModel`` (one value, no fields) is refused.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_elicit.errors import FormSchemaError, FormValidationError, ValidationProblem
from mcp_elicit.forms.annotations import spec_for
from mcp_elicit.forms.converter import Converter
from mcp_elicit.forms.fields import FieldSpec
from mcp_elicit.forms.metadata import unread_by_forms
from mcp_elicit.forms.validate import Invalid, compile_field

__all__ = ["Binding", "describe_class"]

_NO_DEFAULT: Any = object()


@dataclass(frozen=True, slots=True)
class _Attr:
    """One class field as found: wire name, type, defaults and what pydantic says."""

    name: str
    annotation: Any
    declared_required: bool
    default: Any = _NO_DEFAULT
    factory: Callable[[], Any] | None = None
    metadata: tuple[object, ...] = ()
    title: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Binding:
    """How to build an instance of ``target`` from a validated answer."""

    target: type[Any]
    make: Callable[[dict[str, Any]], Any]
    # (wire name, to_python, pass None when absent)
    plan: tuple[tuple[str, Callable[[Any], Any], bool], ...]

    def build(self, content: Mapping[str, Any]) -> Any:
        values: dict[str, Any] = {}
        refused: list[ValidationProblem] = []
        for name, to_python, none_when_absent in self.plan:
            value = content.get(name)
            if value is not None:
                try:
                    values[name] = to_python(value)
                except ValueError as exc:  # the declared type refused it (a URL of another scheme)
                    refused.append(ValidationProblem(name, str(exc)))
            elif none_when_absent:
                values[name] = None
        if refused:
            raise FormValidationError(refused)
        try:
            return self.make(values)
        except ValueError as exc:  # the class's own check (a __post_init__) refused the answer
            raise FormValidationError([ValidationProblem(None, str(exc) or type(exc).__name__)]) from None


def _field_naming(cls: type[Any], missing: str) -> str | None:
    """The first field whose written annotation mentions the name ``missing``."""
    word = re.compile(rf"\b{re.escape(missing)}\b")
    for klass in reversed(cls.__mro__):
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            text = getattr(annotation, "__forward_arg__", annotation)
            if isinstance(text, str) and word.search(text):
                return str(name)
    return None


def _hints(cls: type[Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except NameError as exc:  # a forward reference (or a postponed annotation) to an unknown name
        missing = getattr(exc, "name", None)
        message = f"cannot read the annotations of {cls.__name__}: {exc}"
        if not missing:
            raise FormSchemaError(message) from None
        raise FormSchemaError(
            f"{message}; define or import {missing} at module level (annotations written as text "
            "are read in the module's namespace, not in the function that defines the class, "
            "nor under TYPE_CHECKING)",
            field=_field_naming(cls, missing),
        ) from None
    except Exception as exc:  # TypeError: an annotation that is not a type
        raise FormSchemaError(f"cannot read the annotations of {cls.__name__}: {exc}") from None


def _refuse_initvars(cls: type[Any], hints: Mapping[str, Any]) -> None:
    """An ``InitVar`` is not a field, so it is never asked: one without a default cannot be built."""
    declared = getattr(cls, "__dataclass_fields__", {})
    for name, hint in hints.items():
        if not isinstance(hint, dataclasses.InitVar):
            continue
        found = declared.get(name)
        if found is None or (
            found.default is dataclasses.MISSING and found.default_factory is dataclasses.MISSING
        ):
            raise FormSchemaError(
                f"InitVar fields are not part of a form; give {name} a default or make it a field",
                field=name,
            )


def _dataclass_attrs(cls: type[Any]) -> list[_Attr]:
    hints = _hints(cls)
    _refuse_initvars(cls, hints)
    attrs = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        default = _NO_DEFAULT if f.default is dataclasses.MISSING else f.default
        required = default is _NO_DEFAULT and factory is None
        attrs.append(_Attr(f.name, hints.get(f.name, f.type), required, default, factory))
    return attrs


def _key_required(hint: Any, declared: bool) -> bool:
    """Whether a TypedDict key is required: its own ``Required``/``NotRequired``, else ``declared``.

    ``declared`` is whether the key is in ``__required_keys__``, which holds the totality
    of the class that declares the key (a ``total=False`` subclass keeps its base's
    required keys). The wrappers are read here because on Python 3.11, under
    ``from __future__ import annotations``, ``__required_keys__`` misses them.
    """
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
        elif origin is typing.NotRequired:
            return False
        elif origin is typing.Required:
            return True
        else:
            return declared


def _typeddict_attrs(cls: type[Any]) -> list[_Attr]:
    required = frozenset(getattr(cls, "__required_keys__", ()))
    return [_Attr(name, tp, _key_required(tp, name in required)) for name, tp in _hints(cls).items()]


def _pydantic_base() -> type[Any] | None:
    if "pydantic" not in sys.modules:
        return None
    import pydantic

    return pydantic.BaseModel


def _is_pydantic_dataclass(cls: type[Any]) -> bool:
    if "pydantic" not in sys.modules:
        return False
    import pydantic.dataclasses

    return pydantic.dataclasses.is_pydantic_dataclass(cls)


def _pydantic_key(config: Mapping[str, Any], name: str, info: Any) -> str:
    """The key pydantic validates field ``name`` from, which is its name on the wire."""
    if config.get("validate_by_alias", True) is False:
        return name
    alias = info.validation_alias
    if alias is None:
        return name
    if isinstance(alias, str):
        return alias
    raise FormSchemaError(
        f"the validation alias {alias!r} gives more than one key (or a nested one); "
        "a form field has exactly one: use a single string alias",
        field=name,
    )


def _pydantic_attrs(fields: Mapping[str, Any], config: Mapping[str, Any]) -> list[_Attr]:
    """The fields of a pydantic model or pydantic dataclass (its ``FieldInfo``\\s and config)."""
    from pydantic_core import PydanticUndefined

    attrs = []
    for name, info in fields.items():
        if info.init is False:  # a pydantic dataclass field(init=False)
            continue
        key = _pydantic_key(config, name, info)
        if (why := unread_by_forms(info)) is not None:
            raise FormSchemaError(why, field=key)
        default = _NO_DEFAULT if info.default is PydanticUndefined else info.default
        factory = info.default_factory  # one that takes the validated data fails and shows no default
        attrs.append(
            _Attr(
                key,
                info.annotation,
                info.is_required(),
                default,
                factory,
                tuple(info.metadata),
                info.title,
                info.description,
            )
        )
    return attrs


def _pydantic_maker(cls: type[Any]) -> Callable[[dict[str, Any]], Any]:
    import pydantic

    validate = (
        cls.model_validate
        if issubclass(cls, pydantic.BaseModel)
        else pydantic.TypeAdapter(cls).validate_python
    )

    def make(values: dict[str, Any]) -> Any:
        try:
            return validate(values)
        except pydantic.ValidationError as exc:
            problems = [
                ValidationProblem(str(err["loc"][0]) if err["loc"] else None, err["msg"])
                for err in exc.errors()
            ]
            raise FormValidationError(problems) from None

    return make


def _wire_default(spec: FieldSpec, converter: Converter, attr: _Attr) -> Any:
    """The wire default for ``attr``, or None when there is none (or a factory's does not fit)."""
    if attr.default is not _NO_DEFAULT:
        if attr.default is None:
            return None
        try:
            wire = converter.to_wire(attr.default)
        except (ValueError, TypeError) as exc:
            message = f"the default {attr.default!r} does not fit the field: {exc}"
            raise FormSchemaError(message, field=attr.name) from None
    elif attr.factory is not None:
        try:
            value = attr.factory()
            wire = None if value is None else converter.to_wire(value)
        except (ValueError, TypeError):
            return None
        if wire is None or isinstance(compile_field(spec)(wire), Invalid):
            return None
    else:
        return None
    return tuple(wire) if isinstance(wire, list) else wire


#: The field that asks one value of a type other toolkits take as a form by itself.
_ONE_VALUE: dict[object, str] = {bool: "Boolean", int: "Integer", float: "Number", str: "String"}


def describe_class(cls: object) -> tuple[tuple[FieldSpec, ...], Binding]:
    """Named field specs for the fields of ``cls``, and the binding that builds a ``cls``."""
    base = _pydantic_base()
    make: Callable[[dict[str, Any]], Any]
    if not isinstance(cls, type):
        raise FormSchemaError(f"a form needs a dataclass, TypedDict or pydantic model class, not {cls!r}")
    if _is_pydantic_dataclass(cls):
        _refuse_initvars(cls, _hints(cls))
        pydantic_dc: Any = cls
        attrs = _pydantic_attrs(pydantic_dc.__pydantic_fields__, pydantic_dc.__pydantic_config__)
        make = _pydantic_maker(cls)
    elif dataclasses.is_dataclass(cls):
        attrs, make = _dataclass_attrs(cls), lambda values: cls(**values)
    elif issubclass(cls, dict) and hasattr(cls, "__required_keys__"):
        attrs, make = _typeddict_attrs(cls), dict
    elif base is not None and issubclass(cls, base):
        if getattr(cls, "__pydantic_root_model__", False):
            raise FormSchemaError(
                f"{cls.__name__} is a RootModel, which holds one value rather than fields; "
                "a form needs a model with fields: put the value in a field of a BaseModel"
            )
        model: type[Any] = cls
        attrs, make = _pydantic_attrs(model.model_fields, model.model_config), _pydantic_maker(cls)
    elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
        raise FormSchemaError(
            f"a form needs a dataclass, TypedDict or pydantic model class; {cls.__name__} is a "
            "NamedTuple; use a dataclass with the same fields"
        )
    else:
        one = _ONE_VALUE.get(cls)
        hint = f": one value is a form of one field, Form(value={one}()), read as answer.data['value']"
        raise FormSchemaError(
            f"a form needs a dataclass, TypedDict or pydantic model class, not {cls.__name__}"
            + (hint if one else "")
        )
    specs: list[FieldSpec] = []
    plan = []
    for attr in attrs:
        spec, converter, optional = spec_for(
            attr.name, attr.annotation, attr.metadata, title=attr.title, description=attr.description
        )
        has_default = attr.default is not _NO_DEFAULT or attr.factory is not None
        required = attr.declared_required and not optional and not has_default
        spec = dataclasses.replace(spec, required=required)
        wire = _wire_default(spec, converter, attr)
        if wire is not None:
            spec = dataclasses.replace(spec, default=wire)
        specs.append(spec)
        plan.append((attr.name, converter.to_python, optional and not has_default and attr.declared_required))
    return tuple(specs), Binding(cls, make, tuple(plan))
