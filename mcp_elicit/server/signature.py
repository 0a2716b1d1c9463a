"""A handler function's signature: which parameter gets the ``Context``, and a pydantic
model for the rest, giving the JSON Schema of the arguments and their validation.
``Signature.bind`` is pydantic's lax check (a prompt's arguments are text on the wire;
a tool with an explicit ``input_schema=`` has had its JSON checked); a tool whose schema
is derived binds its arguments strictly, as that schema reads them (``strict_arguments``).

Rules: a parameter annotated ``Context`` receives the request context and is not part of
the schema; every other parameter must be named (no ``*args``/``**kwargs``, nothing
positional-only: everything is passed by name); defaults make a parameter optional, and
must fit its type; ``Annotated[..., pydantic.Field(...)]`` adds descriptions and
constraints, and so does ``mcp_elicit.Field`` (made pydantic's: ``parameter_fields``).
A parameter named ``ctx`` or ``context`` without an annotation is refused (the
annotation was forgotten: it would be an argument), and so is a type with no JSON
Schema, naming it. Generated titles are left out of the schema, explicit ones kept. A
``typing.TypedDict`` (which pydantic takes only from Python 3.12) is read as its
``typing_extensions`` twin, wherever it sits in a hint (``pydantic_ready``).

A handler is whatever a developer naturally passes: a function, a bound method, a
``staticmethod`` (registered in its class body), a callable object (``__call__``, plain or
``async def``) or a ``functools.partial`` (what it binds, by position or keyword, is not an
argument: the caller cannot override it). The type hints, the docstring and whether it is
async come from the function underneath (``__call__``, ``partial.func``). Its name is its
``__name__``; one without (a callable object, a partial) or a lambda needs ``name=``, and
a ``classmethod`` object (its class does not exist yet) is refused: each says so when it
is registered.
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, PydanticUserError, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, SchemaValidator
from typing_extensions import TypedDict, is_typeddict

from mcp_elicit.forms.metadata import Field
from mcp_elicit.server.argument_names import as_arguments, held_names
from mcp_elicit.server.invalid_arguments import ArgumentsError
from mcp_elicit.server.parameter_fields import rebuilt, with_pydantic_fields

__all__ = [
    "Signature",
    "handler",
    "handler_doc",
    "handler_name",
    "is_async",
    "pydantic_ready",
]


#: Parameter names that mean the request context: one without an annotation is a mistake.
_CONTEXT_NAMES: Final = frozenset({"ctx", "context"})


@dataclass(frozen=True, slots=True)
class Signature:
    context_param: str | None
    names: tuple[str, ...]
    model: type[BaseModel]
    schema: dict[str, Any]
    return_annotation: Any
    is_async: bool
    #: The argument's name of each model field held under another (``argument_names``).
    renamed: Mapping[str, str]
    #: The model's check, giving ``(field values, ...)``: see ``_fields_validator``.
    _validate: Callable[[Any], tuple[dict[str, Any], Any, Any]] = field(compare=False, repr=False)

    @classmethod
    def of(cls, fn: Callable[..., Any], *, context_type: type) -> Signature:
        where = _describe_handler(fn)
        sig = inspect.signature(fn)  # without what a partial or a bound method binds
        try:
            hints = typing.get_type_hints(_underneath(fn), include_extras=True)
        except Exception as exc:  # a forward reference that cannot resolve
            raise TypeError(f"cannot read the type hints of {where}: {exc}") from exc
        bound = _bound_keywords(fn)
        context_param: str | None = None
        fields: dict[str, Any] = {}
        for name, param in sig.parameters.items():
            if name in bound:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"{where}: *{name} parameters are not supported; name every argument")
            if param.kind is param.POSITIONAL_ONLY:
                raise TypeError(
                    f"{where}: {name} is positional-only, but arguments (and the context) are passed "
                    "by name; remove the '/' from the parameters"
                )
            if name in _CONTEXT_NAMES and name not in hints:
                raise TypeError(
                    f"{where}: {name} has no annotation, so it would be an argument the client sends; "
                    f"to receive the request context, write {name}: {context_type.__name__}"
                )
            annotation = hints.get(name, Any)
            if _is_context(annotation, context_type):
                if context_param is not None:
                    raise TypeError(
                        f"{where}: {context_param} and {name} are both {context_type.__name__} parameters; "
                        "keep one (a handler gets one context)"
                    )
                context_param = name
                continue
            if name.startswith("_"):
                raise TypeError(f"{where}: argument names may not start with '_' ({name})")
            default = ... if param.default is param.empty else param.default
            if isinstance(default, FieldInfo | Field):
                raise TypeError(_field_as_default(where, name, annotation, default))
            fields[name] = (pydantic_ready(with_pydantic_fields(where, name, annotation)), default)
            if default is not ...:
                _check_default(where, name, *fields[name])
        held, renamed = held_names(fields)  # an argument may be called "schema" or "model_config"
        try:
            model = create_model(
                f"{getattr(_underneath(fn), '__name__', 'handler')}_arguments",
                __config__=ConfigDict(arbitrary_types_allowed=False, extra="ignore", allow_inf_nan=False),
                **held,
            )
            schema = _clean_schema(model.model_json_schema(), model)
        except PydanticUserError as exc:  # a type pydantic cannot check or describe
            raise TypeError(f"{where}: {_without_schema(fields) or exc}") from exc
        return cls(
            context_param=context_param,
            names=tuple(fields),
            model=model,
            schema=schema,
            return_annotation=pydantic_ready(hints.get("return", sig.return_annotation)),
            is_async=is_async(fn),
            renamed=renamed,
            _validate=_fields_validator(model),
        )

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate ``arguments``; return keyword arguments for the function (no context)."""
        try:
            # The model's fields are exactly ``names``, some held under another name
            # (extras are ignored, not kept); the values are this call's alone, so they
            # need no copy.
            values = self._validate(arguments or {})[0]
        except ValidationError as exc:
            raise ArgumentsError.found(exc) from None
        return as_arguments(values, self.renamed)


def pydantic_ready(hint: Any) -> Any:
    """``hint`` with each ``typing.TypedDict`` in it (nested ones too) made its
    ``typing_extensions.TypedDict`` twin: pydantic refuses the former before Python 3.12."""
    if sys.version_info >= (3, 12):
        return hint
    return _ready(hint, ())


def _ready(hint: Any, seen: tuple[type, ...]) -> Any:
    if is_typeddict(hint):
        if type(hint).__module__ != "typing" or hint in seen:  # a recursive one stays as it is
            return hint
        return _typeddict_twin(hint, (*seen, hint))
    args = typing.get_args(hint)
    ready = tuple(_ready(arg, seen) for arg in args)
    if all(a is b for a, b in zip(ready, args, strict=True)):
        return hint
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return typing.Annotated[(ready[0], *hint.__metadata__)]
    return rebuilt(hint, ready)


_MARKS: Final = (typing.Required, typing.NotRequired)


@functools.cache
def _typeddict_twin(cls: type, seen: tuple[type, ...]) -> Any:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # a name it cannot resolve: pydantic says so, as for any hint
        return cls
    fields: dict[str, Any] = {}
    for key, hint in hints.items():
        # the hint's own Required/NotRequired wins: on 3.11 the class's own keys miss them
        # when its annotations are strings (``from __future__ import annotations``)
        required = key in cls.__required_keys__  # type: ignore[attr-defined]
        while (origin := typing.get_origin(hint)) in _MARKS:
            required = origin is typing.Required
            (hint,) = typing.get_args(hint)
        hint = _ready(hint, seen)
        fields[key] = typing.Required[hint] if required else typing.NotRequired[hint]
    twin: Any = TypedDict(cls.__name__, fields)  # type: ignore[misc]
    twin.__doc__, twin.__module__, twin.__qualname__ = cls.__doc__, cls.__module__, cls.__qualname__
    return twin


def _fields_validator(model: type[BaseModel]) -> Callable[[Any], tuple[dict[str, Any], Any, Any]]:
    """The check of ``model``'s fields alone, giving ``(values, extras, fields set)``: the
    model's own check without making the instance, which costs as much as the check. The
    arguments model has no model-level validators, so its fields' check is all of it; a
    model pydantic could not complete (or another layout) goes through ``model_validate``."""
    schema = model.__pydantic_core_schema__ if model.__pydantic_complete__ else None
    if schema is not None and schema["type"] == "model" and schema["schema"]["type"] == "model-fields":
        return SchemaValidator(schema["schema"], schema.get("config")).validate_python
    return lambda arguments: (model.model_validate(arguments).__dict__, None, None)


def handler(fn: object, kind: str) -> Callable[..., Any]:
    """What to call for ``fn`` registered with ``app.<kind>()``: a ``staticmethod``'s
    function; ``TypeError`` for a ``classmethod`` object or something not callable."""
    if isinstance(fn, staticmethod):
        return fn.__func__
    if isinstance(fn, classmethod):
        func = fn.__func__
        raise TypeError(
            f"app.{kind}() got the classmethod {func.__qualname__} while its class is being defined, "
            f"so there is no class to bind yet; register it after the class body: "
            f"app.{kind}()(ClassName.{func.__name__})"
        )
    if not callable(fn):
        raise TypeError(f"app.{kind}() registers a function (or another callable); got {type(fn).__name__}")
    return fn


def handler_name(fn: Callable[..., Any], kind: str) -> str:
    """The name ``fn`` gives a ``kind`` registered without ``name=``: its ``__name__``;
    ``ValueError`` when it has none (a callable object, a partial) or is a lambda."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise ValueError(
            f"{_describe_handler(fn)} has no __name__ to name the {kind} after; pass name=... to app.{kind}()"
        )
    if name == "<lambda>":
        raise ValueError(
            f"a lambda's name '<lambda>' is not a valid {kind} name; pass name=... to app.{kind}()"
        )
    return name


def handler_doc(fn: Callable[..., Any]) -> str | None:
    """The docstring describing ``fn``: its own, else that of the function underneath
    (``partial.func``, ``__call__``), else a callable object's class's; cleaned."""
    if isinstance(fn, functools.partial):
        return handler_doc(fn.func)
    doc = fn.__doc__ if inspect.isroutine(fn) or isinstance(fn, type) else None
    if not doc and not inspect.isroutine(fn) and not isinstance(fn, type):
        doc = getattr(type(fn).__call__, "__doc__", None) or type(fn).__doc__
    return inspect.cleandoc(doc) if doc else None


def _underneath(fn: Callable[..., Any]) -> Any:
    """The function whose annotations describe ``fn``: through partials, to a callable
    object's ``__call__``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isroutine(fn) or isinstance(fn, type):
        return fn
    return type(fn).__call__


def _bound_keywords(fn: Callable[..., Any]) -> set[str]:
    """The keywords partials bind: not arguments a caller may give."""
    bound: set[str] = set()
    while isinstance(fn, functools.partial):
        bound.update(fn.keywords)
        fn = fn.func
    return bound


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` function or method, a
    partial of one, or a callable object whose ``__call__`` is ``async def``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    if inspect.isroutine(fn) or isinstance(fn, type):
        return False
    return inspect.iscoroutinefunction(type(fn).__call__)


def _describe_handler(fn: Callable[..., Any]) -> str:
    """``fn`` as an error message names it."""
    if isinstance(fn, functools.partial):
        return f"functools.partial({_describe_handler(fn.func)}, ...)"
    qualname = getattr(fn, "__qualname__", None)
    if isinstance(qualname, str) and (inspect.isroutine(fn) or isinstance(fn, type)):
        return qualname
    return f"the {type(fn).__qualname__} object"


def _is_context(annotation: Any, context_type: type) -> bool:
    if annotation is context_type:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_context(typing.get_args(annotation)[0], context_type)
    return isinstance(annotation, type) and issubclass(annotation, context_type)


def _field_as_default(where: str, name: str, annotation: Any, given: FieldInfo | Field) -> str:
    """Where a ``Field`` given as a parameter's default goes (``x: int = Field(...)``, the
    way some frameworks take it): in the annotation, with the default, if any, after it."""
    kind = "mcp_elicit.Field" if isinstance(given, Field) else "pydantic.Field"
    shown = annotation.__name__ if isinstance(annotation, type) else repr(annotation)
    default = ""
    if isinstance(given, FieldInfo) and given.default is not PydanticUndefined:
        default = f" = {given.default!r}"
    return (
        f"{where}: the default of {name} is a {kind}(...), which goes in the annotation: "
        f"{name}: Annotated[{shown}, {kind}(...)]{default}"
    )


def _check_default(where: str, name: str, annotation: Any, default: Any) -> None:
    """``TypeError`` when ``default`` does not fit ``annotation`` (it would be the schema's
    ``default``, and the value a call without the argument runs with)."""
    try:
        TypeAdapter(annotation).validate_python(default)
    except ValidationError as exc:
        problem = exc.errors()[0].get("msg", "invalid")
        raise TypeError(
            f"{where}: the default of {name}, {default!r}, does not fit its type ({problem}); "
            "change the default or the type (X | None for a default of None)"
        ) from None
    except PydanticUserError:  # a type with no schema: said with the others, below
        pass


def _without_schema(fields: Mapping[str, tuple[Any, Any]]) -> str | None:
    """Which parameter's type has no JSON Schema, said with what to use instead."""
    for name, (annotation, _) in fields.items():
        try:
            TypeAdapter(annotation).json_schema()
        except PydanticUserError:
            return (
                f"the type of {name} ({annotation!r}) has no JSON Schema; use str, int, float, bool, "
                "a list or dict of them, a Literal, an Enum, a date, a dataclass, TypedDict or pydantic model"
            )
    return None


def _clean_schema(schema: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    schema.pop("title", None)
    props = schema.get("properties", {})
    fields = {
        info.alias or name: info for name, info in model.model_fields.items()
    }  # as the schema names them
    for name, prop in props.items():
        field = fields.get(name)
        if field is not None and field.title is None and isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema
