"""What a registering decorator accepts (``@app.tool``, ``@app.prompt``,
``@app.resource(uri)``, ``@app.completion()``), checked when the module defining the
function is imported, never at a listing the schema refuses.

Rules: ``@app.tool`` and ``@app.prompt`` are used bare (the function their one argument,
registered with the defaults) or called (``@app.tool()``, ``@app.tool("name")``,
``@app.tool(title=...)``); a function given with options (``app.tool(fn, title=...)``) is a
``TypeError`` saying to write the options in the call. ``@app.resource`` needs its URI and
``@app.completion`` its call: bare, each is a ``TypeError`` saying what to write. A name or
URI that is not text, or an option not of its kind, is a ``TypeError`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KINDS", "bare", "check_options", "taken", "text_option"]


def bare(kind: str, first: object, *options: object) -> Callable[..., Any] | None:
    """The function when ``@app.<kind>`` was used bare (``first``, its first argument, is
    one), else None. ``TypeError`` when ``options`` (each None unless given) came with it."""
    if first is None or isinstance(first, str) or not callable(first):
        return None
    if any(option is not None for option in options):
        raise TypeError(
            f"app.{kind}() takes a function alone or options alone, not both: give the options "
            f"in the call above the function, @app.{kind}(title=...)"
        )
    return first


def text_option(kind: str, option: str, value: object, call: str) -> str | None:
    """A decorator's ``name``/``uri``, refused when not text: a function there is the
    decorator used without its call (``@app.resource``), which would register nothing."""
    if value is None or isinstance(value, str):
        return value
    if callable(value):
        raise TypeError(f"@app.{kind} needs its parentheses: write @app.{kind}({call}) above the function")
    raise TypeError(f"app.{kind}(): the {option} must be a string, not {type(value).__name__} ({value!r})")


KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "text": ((str, type(None)), "None or a string"),
    "mapping": ((Mapping, type(None)), "None or a mapping"),
    "list": ((list, type(None)), "None or a list of mappings"),
    "maybe": ((bool, type(None)), "None, True or False"),
    "flag": ((bool,), "True or False"),
}


def check_options(kind: str, **options: tuple[str, object]) -> None:
    """``TypeError`` naming the first of a decorator's ``options`` (each ``(kind, value)``)
    that is not of its kind: caught at registration, not in a listing the schema refuses."""
    for option, (of, value) in options.items():
        types, expected = KINDS[of]
        if not isinstance(value, types):
            raise TypeError(f"app.{kind}(): {option} {value!r}: expected {expected}")


def taken(kind: str, name: str) -> str:
    """The error for a tool or prompt registered under a ``name`` already taken, saying how to resolve it."""
    return (
        f"a {kind} named {name!r} is already registered: give this one a name of its own "
        f"(@app.{kind}(name=...)), or remove the other first (app.remove_{kind}({name!r}))"
    )
