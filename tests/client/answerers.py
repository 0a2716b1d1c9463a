"""Answerers for the client's tests that stand in for a person."""

from __future__ import annotations

import asyncio

from mcp_elicit.client import ElicitAnswer, ElicitationRequest

__all__ = ["NeverAnswering"]


class NeverAnswering:
    """A person who never answers: each question waits until it is withdrawn (``asked`` and
    ``withdrawn`` are set when one is; ``shown`` holds the messages shown)."""

    modes = frozenset({"form"})

    def __init__(self) -> None:
        self.asked, self.withdrawn = asyncio.Event(), asyncio.Event()
        self.shown: list[str] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.shown.append(request.message)
        self.asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn.set()
            raise
        raise AssertionError("unreachable")

    async def url_done(self, request: ElicitationRequest) -> None:
        return None  # form mode only: no URL step reaches it
