"""What a person is told while a request waits for a page they agreed to open: at
2026-07-28 the server answers with nothing to ask until the page is finished, which can
take minutes (a slow sign-in), and a silent interface reads as a hang. One line, naming
the page's host, the server asking and the request; said once per page
(``Answerer.url_waiting``) by the terminal and browser answerers and by ``mcp-elicit
call``. The client bounds the wait (``RoundLimits.url_wait``).

Server text in it is made inert (``form_text.clean``); the host is the one URL consent
showed the person (``client.url_consent.judge_url``).
"""

from __future__ import annotations

from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.ui.form_text import TITLE_MAX, clean, fit

__all__ = ["waiting_line"]


def waiting_line(request: ElicitationRequest) -> str:
    """The line saying the request waits for ``request``'s page to be finished."""
    host = judge_url(request.url, server=request.server.where).host if request.url is not None else ""
    server = request.server.title or request.server.name
    return (
        f"… waiting for the page at {clean(host, joiners=False) or '?'} to be finished "
        f"({fit(server, TITLE_MAX, length=True)} asks, during {fit(str(request.origin), TITLE_MAX, length=True)})"
    )
