"""Where a request's own notifications go: its ``Channel`` (its SSE stream, or stdout).

Rules: a channel sends the request's notifications and may end its stream before the
answer (only a resumable HTTP stream can); a request that became a task has no stream
(``NO_STREAM``): its notifications go nowhere, and its stream cannot be ended. A
channel may name the transport carrying it (a ``transport`` attribute, read only for a
``subscriptions/listen``), whose stop then ends that subscription (``server.lifecycle``).
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["NO_STREAM", "Channel"]


class Channel(Protocol):
    """Where a request's own notifications go (its SSE stream, or stdout)."""

    async def notify(self, method: str, params: dict[str, Any]) -> None: ...

    async def close_stream(self) -> bool:
        """End the request's stream before its answer, if the client can resume it; True
        when it did (only a resumable HTTP stream can)."""
        ...


class _NoStream:
    """A task's stream: there is none, so its notifications go nowhere."""

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close_stream(self) -> bool:
        return False


NO_STREAM = _NoStream()
