"""What a public transport's constructor is given, checked as it is given: a wrong argument
is refused at once, saying what the option takes, not found out later as Python's own
error from deep inside (``'int' object is not iterable``) or when the process or the
connection starts.

Rules:

* A value of the wrong type raises ``TypeError`` naming the option, what it takes (with an
  example) and the type given; a value of the right type but out of range raises
  ``ConfigError`` the same way (``client.options.seconds`` for a number of seconds).
* A mapping's values may be secrets (an environment's token, a header's key): an error
  names the key and the type of its value, never the value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final, NoReturn, TypeVar

from mcp_elicit.errors import ConfigError

__all__ = ["callable_or_none", "instance", "path_or_none", "text_mapping", "whole_above", "wrong_type"]

T = TypeVar("T")

#: How a type is named in an error: its name, or "None".
_NONE: Final = "None"


def wrong_type(option: str, value: object, takes: str) -> NoReturn:
    """``TypeError``: ``option`` takes ``takes``, not what ``value`` is."""
    kind = _NONE if value is None else type(value).__name__
    raise TypeError(f"{option} takes {takes}, not {kind}")


def instance(option: str, value: object, kind: type[T], takes: str) -> T:
    """``value`` when it is a ``kind``; ``TypeError`` otherwise."""
    if not isinstance(value, kind):
        wrong_type(option, value, takes)
    return value


def callable_or_none(option: str, value: T, takes: str) -> T:
    """``value`` when it is None or callable; ``TypeError`` otherwise."""
    if value is not None and not callable(value):
        wrong_type(option, value, takes)
    return value


def path_or_none(option: str, value: object) -> str | os.PathLike[str] | None:
    """``value`` when it is None, a string or a path; ``TypeError`` otherwise (bytes too:
    a directory is named as text)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        return value
    wrong_type(option, value, "a directory as a string or a pathlib.Path, or None")


def text_mapping(option: str, value: object, takes: str) -> dict[str, str]:
    """``value``, a mapping of strings to strings, as a dict; ``TypeError`` naming the key
    (never its value, which may be a secret) otherwise."""
    if not isinstance(value, Mapping):
        wrong_type(option, value, takes)
    items: dict[Any, Any] = dict(value)
    for key, item in items.items():
        if not isinstance(key, str):
            raise TypeError(f"{option}: the name {key!r} is {type(key).__name__}, not a string")
        if not isinstance(item, str):
            kind = _NONE if item is None else type(item).__name__
            raise TypeError(f"{option}[{key!r}] is {kind}; each value is a string")
    return items


def whole_above(option: str, value: object, least: int, takes: str) -> int:
    """``value``, a whole number (not a bool) of at least ``least``: ``TypeError`` for
    another type, ``ConfigError`` below it."""
    if not isinstance(value, int) or isinstance(value, bool):
        wrong_type(option, value, takes)
    if value < least:
        raise ConfigError(f"{option} {value!r}: expected {takes}")
    return value
