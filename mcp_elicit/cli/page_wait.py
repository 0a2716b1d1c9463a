"""The line ``call`` (and ``prompt``, ``read``) prints on stderr when a request waits for a
page the person agreed to open (``ui.page_wait``, the line every answerer says), whoever
answers: said once per page (``Answerer.url_waiting``).

Its own module: ``cli.call``'s answerer wrapper (``Recorded``) points at it.
"""

from __future__ import annotations

import sys

from mcp_elicit.cli.output import write
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.ui.page_wait import waiting_line

__all__ = ["say_waiting"]


async def say_waiting(request: ElicitationRequest) -> None:
    """Say on stderr that the request waits for ``request``'s page to be finished."""
    write(waiting_line(request), sys.stderr)
