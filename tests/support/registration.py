"""What the registration tests share: the text of a tool result, and a label for an item."""

from __future__ import annotations

from typing import Any


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def label(kind: str, item: str) -> str:
    """Label an item."""
    return f"{kind}:{item}"
