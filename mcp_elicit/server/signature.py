"""A handler function's signature: which parameter gets the ``Context``, and a pydantic
model for the rest, giving the JSON Schema of the arguments and their validation.

Rules: a parameter annotated ``Context`` receives the request context and is not part of
the schema; every other parameter must be named (no ``*args``/``**kwargs``); defaults make
a parameter optional; ``Annotated[..., pydantic.Field(...)]`` adds descriptions and
constraints. Generated titles are left out of the schema, explicit ones kept.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

__all__ = ["Signature", "ArgumentsError"]


class ArgumentsError(ValueError):
    """Arguments that do not fit a handler's signature; the message lists every fault."""


@dataclass(frozen=True, slots=True)
class Signature:
    context_param: str | None
    names: tuple[str, ...]
    model: type[BaseModel]
    schema: dict[str, Any]
    return_annotation: Any
    is_async: bool

    @classmethod
    def of(cls, fn: Callable[..., Any], *, context_type: type) -> Signature:
        sig = inspect.signature(fn)
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:  # a forward reference that cannot resolve
            raise TypeError(f"cannot read the type hints of {fn.__qualname__}: {exc}") from exc
        context_param: str | None = None
        fields: dict[str, Any] = {}
        for name, param in sig.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(
                    f"{fn.__qualname__}: *{name} parameters are not supported; name every argument"
                )
            annotation = hints.get(name, Any)
            if _is_context(annotation, context_type):
                context_param = name
                continue
            if name.startswith("_"):
                raise TypeError(f"{fn.__qualname__}: argument names may not start with '_' ({name})")
            default = ... if param.default is param.empty else param.default
            if isinstance(default, FieldInfo):
                fields[name] = (annotation, default)
            else:
                fields[name] = (annotation, default)
        model = create_model(
            f"{fn.__name__}_arguments",
            __config__=ConfigDict(arbitrary_types_allowed=False, extra="ignore"),
            **fields,
        )
        schema = _clean_schema(model.model_json_schema(), model)
        return cls(
            context_param=context_param,
            names=tuple(fields),
            model=model,
            schema=schema,
            return_annotation=hints.get("return", sig.return_annotation),
            is_async=inspect.iscoroutinefunction(fn),
        )

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate ``arguments``; return keyword arguments for the function (no context)."""
        try:
            instance = self.model.model_validate(arguments or {})
        except ValidationError as exc:
            raise ArgumentsError(_describe(exc)) from None
        values = instance.__dict__
        return {name: values[name] for name in self.names}


def _is_context(annotation: Any, context_type: type) -> bool:
    if annotation is context_type:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_context(typing.get_args(annotation)[0], context_type)
    return isinstance(annotation, type) and issubclass(annotation, context_type)


def _clean_schema(schema: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    schema.pop("title", None)
    props = schema.get("properties", {})
    for name, prop in props.items():
        field = model.model_fields.get(name)
        if field is not None and field.title is None and isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "Invalid arguments: " + "; ".join(parts)
