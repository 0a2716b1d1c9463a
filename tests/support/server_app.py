"""What the tests of the server framework share: a TypedDict a tool takes and returns."""

from __future__ import annotations

from typing_extensions import TypedDict


class Point(TypedDict):
    x: int
    y: int
