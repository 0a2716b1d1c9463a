"""Between one field's wire value and the Python value its class declares.

A :class:`Converter` turns a validated wire value into the declared Python value
(``to_python``: a date, an Enum member, an ``AnyUrl``) and a Python default into its
wire value (``to_wire``). Either raises ``ValueError`` with a message for a person when
the value does not fit; a form reports one from ``to_python`` as that field's problem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Converter", "same"]


@dataclass(frozen=True, slots=True)
class Converter:
    """Between one field's wire value and its declared Python value."""

    to_python: Callable[[Any], Any]
    to_wire: Callable[[Any], Any]


def same(value: Any) -> Any:
    """The value as it is: a converter for a field whose wire value is its Python value."""
    return value
