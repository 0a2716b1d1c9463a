"""How the command line writes log lines to stderr: every character that could act on a
terminal shown instead, a message on one line (a traceback keeps its lines), and as
stderr's encoding can show it. ``serve``'s log and the client commands' warnings both
quote the other side (a tool's log lines its arguments, a server's error its words).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["InertFormatter", "ShownHandler"]


class InertFormatter(logging.Formatter):
    """Log lines with every character that could act on a terminal shown instead, and a
    message on one line: a server's log quotes what clients send (a tool's own log lines
    its arguments), a client's warnings what servers send, and either could otherwise
    forge a line or act on the terminal. A traceback keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return _inert(super().formatMessage(record), multiline=False)

    def formatException(self, ei: Any) -> str:
        return _inert(super().formatException(ei), multiline=True)

    def formatStack(self, stack_info: str) -> str:
        return _inert(super().formatStack(stack_info), multiline=True)


def _inert(text: str, *, multiline: bool) -> str:
    from mcp_elicit.ui.form_text import clean  # on the first line logged, not at start-up

    return clean(text, multiline=multiline)


class ShownHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log lines as stderr's encoding can show them (``server_text.for_encoding``): a
    warning quoting a server's Chinese on an ASCII-only terminal, not logging's traceback."""

    def format(self, record: logging.LogRecord) -> str:
        from mcp_elicit.ui.server_text import for_encoding

        return for_encoding(super().format(record), getattr(self.stream, "encoding", None))
