"""Argument names pydantic's ``BaseModel`` cannot take as field names, kept as the
handler's: the arguments model holds such an argument under a name of its own, with the
argument's name as its alias (what the schema shows, the client sends and a fault names),
and the values checked go to the function under the argument's name again.

Rules: a name is held under another when ``BaseModel`` has it as an attribute (``schema``,
``json``, ``copy``: pydantic would warn that the field shadows it), when it starts with
``model_`` (``model_config`` would be taken for the model's settings and vanish from the
schema, ``model_dump`` is refused) and when it is ``Config`` (settings too, to pydantic).
No warning filter is set instead: Python's filters are the whole process's, and
``warnings.catch_warnings`` around a model made in one thread (a plain handler's, which
may register tools) puts back what it found, losing a filter another thread set meanwhile.
An alias the developer gave (``Annotated[str, pydantic.Field(alias=...)]``) still wins
over the argument's name.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Any

import pydantic
from pydantic import BaseModel

__all__ = ["as_arguments", "held_names", "named"]


def _clashes(name: str) -> bool:
    return name.startswith("model_") or name == "Config" or hasattr(BaseModel, name)


def held_names(fields: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``fields`` (argument name: annotation and default) as the model's fields, and the
    argument name of each field held under another name (empty when none is)."""
    if not any(_clashes(name) for name in fields):
        return dict(fields), {}
    held: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    for name, (annotation, default) in fields.items():
        if not _clashes(name):
            held[name] = (annotation, default)
            continue
        key = f"arg_{name}"
        while key in fields or key in held or _clashes(key):
            key = f"arg_{key}"
        alias = pydantic.Field(alias=name)
        if typing.get_origin(annotation) is typing.Annotated:  # the developer's metadata after: it wins
            held[key] = (typing.Annotated[(annotation.__origin__, alias, *annotation.__metadata__)], default)
        else:
            held[key] = (typing.Annotated[annotation, alias], default)
        renamed[key] = name
    return held, renamed


def named(
    validate: Callable[[Mapping[str, Any]], dict[str, Any]], renamed: Mapping[str, str]
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """``validate``, its values under the arguments' names again (itself when none is held
    under another name)."""
    if not renamed:
        return validate

    def validate_named(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return as_arguments(validate(arguments), renamed)

    return validate_named


def as_arguments(values: dict[str, Any], renamed: Mapping[str, str]) -> dict[str, Any]:
    """The model's ``values`` under the arguments' names (``values`` itself when none is
    held under another name)."""
    return {renamed.get(key, key): value for key, value in values.items()} if renamed else values
