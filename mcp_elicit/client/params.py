"""The params of the client's calls, checked before anything is sent: arguments that are
no mapping raise ``TypeError`` naming the call, where ``dict(arguments)`` raised a
``ValueError`` about "dictionary update sequence elements"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["given"]


def given(what: str, key: str, value: object) -> dict[str, Any]:
    """``{key: value}`` as a dict (nothing for None); ``TypeError`` unless it is a mapping."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{what}: the {key} must be a mapping of name to value (a dict), not {type(value).__name__}"
        )
    return {key: dict(value)}
