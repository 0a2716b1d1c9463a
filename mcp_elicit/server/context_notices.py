"""What a handler tells the client while it runs: progress (``ctx.report_progress``) and
log messages (``ctx.log``, ``ctx.info``...), on the request's own stream.

Rules: progress goes out only when the request carried a progress token, and only above
the last progress sent for the request (a step reported twice, or going back, sends
nothing); in a task it becomes the task's ``statusMessage``. Log messages go out only at
or above the level the request (or session) asked for, at most 100 a second
(``core.rate_limit.LogBudget``: past it they are dropped and counted). Neither is sent
once the request has ended; off the handler's event loop, both are refused
(``context_guard``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from mcp_elicit.core.rate_limit import LogBudget
from mcp_elicit.server.context_guard import ContextGuard
from mcp_elicit.wire.meta import LOG_LEVELS

if TYPE_CHECKING:
    from mcp_elicit.server.channel import Channel
    from mcp_elicit.server.task_handler import Detach
    from mcp_elicit.server.tasks import Running

__all__ = ["ContextNotices"]


class ContextNotices(ContextGuard):
    """Progress and logs of ``Context`` (a mixin: it needs ``call``, ``task``, ``_detach``,
    ``_channel`` and ``_log_level``)."""

    task: Running | None
    _detach: Detach | None
    _channel: Channel
    _log_level: str | None
    #: The last progress sent for this request (a class default: most requests send none).
    _progress: float | None = None
    #: How many log messages it may still send (made by the first one sent).
    _logs: LogBudget | None = None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the request asked for progress and ``progress``
        is above the last one sent (each must increase); in a task, the progress (its
        message, else the numbers) becomes the task's ``statusMessage``. A ``progress`` or
        ``total`` that is NaN or infinite is a ``ValueError`` (JSON has no such number)."""
        if not self._sending("report_progress"):
            return
        for name, value in (("progress", progress), ("total", total)):
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, not {value}")
        if self.task is not None and self._detach is not None:
            shown = message if message is not None else f"{progress:g}" + (f" of {total:g}" if total else "")
            self.task.record.set_message(shown, self._detach.tasks.clock())
            return
        token = self.call.progress_token
        if token is None or (self._progress is not None and progress <= self._progress):
            return
        self._progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._channel.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client asked for logs at this level."""
        if not self._sending("log"):
            return
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        wanted = self._log_level
        if wanted is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        budget = self._logs
        if budget is None:
            budget = self._logs = LogBudget()
        send, notice, worst = budget.take(time.monotonic(), LOG_LEVELS.index(level))
        if notice is not None:  # at the most severe level dropped: the client asked for that
            await self._channel.notify("notifications/message", {"level": LOG_LEVELS[worst], "data": notice})
        if not send:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._channel.notify("notifications/message", params)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)
