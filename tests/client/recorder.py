"""Records what a client transport sends and receives, and checks everything the client
sent against the official schema of the revision it spoke."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from support.wire import WireChecker


class Recorder:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self._asked: dict[Any, str] = {}

    def __call__(self, direction: Literal["send", "receive"], message: Mapping[str, Any]) -> None:
        if direction == "send":
            self.sent.append(dict(message))
        else:
            self.received.append(dict(message))
            if "method" in message and "id" in message:
                self._asked[message["id"]] = str(message["method"])

    def methods(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m and "id" in m]

    def check(self, checker: WireChecker) -> int:
        """Validate every message the client sent; the number checked."""
        for message in self.sent:
            if "method" in message:
                checker.outgoing(message)
            else:
                checker.response(self._asked[message["id"]], message)
        return len(self.sent)
