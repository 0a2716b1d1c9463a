"""User interfaces that answer a server's questions for a person.

``TerminalAnswerer`` (``ui.terminal``) asks in the terminal with rich and prompt_toolkit
(the ``cli`` extra); ``form_text`` holds what any text interface needs (labels,
constraints, reading typed answers, making server text safe to print). The URL consent
rules themselves are in ``mcp_elicit.client.url_consent``, for any interface to use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_elicit.ui.terminal import TerminalAnswerer
    from mcp_elicit.ui.web import WebAnswerer

__all__ = ["TerminalAnswerer", "WebAnswerer"]


def __getattr__(name: str) -> Any:
    """Answerers are imported on first use: importing ``ui.form_text`` stays cheap."""
    if name == "TerminalAnswerer":
        from mcp_elicit.ui.terminal import TerminalAnswerer

        return TerminalAnswerer
    if name == "WebAnswerer":
        from mcp_elicit.ui.web import WebAnswerer

        return WebAnswerer
    raise AttributeError(f"module 'mcp_elicit.ui' has no attribute {name!r}")
