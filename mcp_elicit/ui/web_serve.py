"""The browser answerer's answer server: an ASGI app on 127.0.0.1 at a random port, one per
round, started and stopped by ``ui.web``.

Rules:

* Bound to 127.0.0.1 only (never a wildcard address); the port is the system's choice,
  known before the app is made, so the app can check ``Host`` against it.
* uvicorn runs in the caller's event loop, quietly (``transports.local``), and ``stop``
  always ends it and closes its socket.
"""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import Callable
from typing import Any

from mcp_elicit.errors import UsageError
from mcp_elicit.transports.local import LocalServer, serve_quietly

__all__ = ["serve_local"]


async def serve_local(make_app: Callable[[int], Any]) -> LocalServer:
    """``make_app(port)``, an ASGI app, served on 127.0.0.1 at a random port, started."""
    if importlib.util.find_spec("uvicorn") is None:  # pragma: no cover - a core dependency
        raise UsageError("the browser answerer needs uvicorn: pip install 'mcp-elicit'")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
    except OSError:
        sock.close()
        raise
    app = make_app(int(sock.getsockname()[1]))
    return await serve_quietly(
        sock, app, grace=2, failed=lambda: UsageError("the answer page's server stopped before it started")
    )
