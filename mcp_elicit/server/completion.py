"""``completion/complete``: argument suggestions from the function registered with
``@app.completion()``.

Rules: ``ref`` names a prompt or a resource (template); ``argument`` has a ``name`` and the
``value`` typed so far; anything else is -32602. The function gets ``(ref, argument,
context)`` and may be async; at most 100 values are returned, as strings, never more
(``hasMore`` is false). Without a function, the answer is an empty list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp_elicit.errors import InvalidParams

__all__ = ["Completer", "complete"]

Completer = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any] | None], Any]
_MAX_VALUES = 100


async def complete(completer: Completer | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``completion/complete`` result (before ``finish``)."""
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or ref.get("type") not in ("ref/prompt", "ref/resource"):
        raise InvalidParams(
            'Invalid params: completion/complete "ref" must be a prompt or resource reference'
        )
    if (
        not isinstance(argument, dict)
        or not isinstance(argument.get("name"), str)
        or not isinstance(argument.get("value"), str)
    ):
        raise InvalidParams(
            'Invalid params: completion/complete "argument" needs "name" and "value" (strings)'
        )
    values: list[str] = []
    if completer is not None:
        context = params.get("context")
        out = completer(ref, argument, context if isinstance(context, dict) else None)
        if hasattr(out, "__await__"):
            out = await out
        values = [str(v) for v in (out or [])][:_MAX_VALUES]
    return {"completion": {"values": values, "hasMore": False}}
