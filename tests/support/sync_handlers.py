"""What the tests of handlers written as plain functions share: the bound on any wait, and the
text of a tool result."""

from __future__ import annotations

from typing import Any

#: How long anything here may wait; a test that needs it has failed.
BOUND = 5.0


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])
