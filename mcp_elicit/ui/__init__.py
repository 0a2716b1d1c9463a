"""User interfaces that answer a server's questions for a person.

``TerminalAnswerer`` (``ui.terminal``) asks in the terminal with rich and prompt_toolkit
(the ``cli`` extra); ``form_text`` holds what any text interface needs (labels,
constraints, reading typed answers, making server text safe to print). The URL consent
rules themselves are in ``mcp_elicit.client.url_consent``, for any interface to use.
"""

from __future__ import annotations

from mcp_elicit.ui.terminal import TerminalAnswerer

__all__ = ["TerminalAnswerer"]
