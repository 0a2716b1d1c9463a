"""The line ``call`` (and ``prompt``, ``read``) prints on stderr when a request waits for a
page the person agreed to open: at 2026-07-28 the server answers with nothing to ask until
the page is finished, which can take minutes (a slow sign-in), and a silent terminal reads
as a hang. Said once per page (``Answerer.url_waiting``), naming the page's host; the
client bounds the wait (``RoundLimits.url_wait``).

Its own module: ``cli.call``'s answerer wrapper (``Recorded``) points at it.
"""

from __future__ import annotations

import sys

from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.ui.form_text import clean

__all__ = ["say_waiting"]


async def say_waiting(request: ElicitationRequest) -> None:
    """Say on stderr that the request waits for ``request``'s page to be finished."""
    host = judge_url(request.url, server=request.server.where).host if request.url is not None else ""
    server = request.server.title or request.server.name
    print(
        f"… waiting for the page at {clean(host) or '?'} to be finished "
        f"({clean(server)} asks, during {clean(str(request.origin))})",
        file=sys.stderr,
        flush=True,
    )
