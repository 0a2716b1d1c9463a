"""What the tests of reading requestedSchema share: a requestedSchema built from its properties."""

from __future__ import annotations

from typing import Any


def form(props: dict[str, Any], required: list[str] | None = None, **top: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, **top}
    if required is not None:
        out["required"] = required
    return out
