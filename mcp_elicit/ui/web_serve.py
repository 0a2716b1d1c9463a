"""The browser answerer's answer server: an ASGI app on 127.0.0.1 at a random port, one per
round, started and stopped by ``ui.web``.

Rules:

* Bound to 127.0.0.1 only (never a wildcard address); the port is the system's choice,
  known before the app is made, so the app can check ``Host`` against it.
* uvicorn runs in the caller's event loop, quietly (``transports.local``), and ``stop``
  always ends it and closes its socket.
* A stream the app cancels ends its response within ``_CUT_SECONDS`` (``cut_short``), and
  ends cancelled only once the app returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from mcp_elicit.errors import UsageError
from mcp_elicit.transports.local import LocalServer, serve_quietly

__all__ = ["Receive", "Scope", "Send", "cut_short", "disconnected", "serve_local"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
#: Seconds a cancelled stream may take to end its response.
_CUT_SECONDS: Final = 1.0


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


async def cut_short(send: Send) -> None:
    """A cancelled stream's response ends (within ``_CUT_SECONDS``) and its task is cancelled
    again, to end cancelled once the app returned: uvicorn reports a cancellation raised
    out of the app as a crash ("Exception in ASGI application")."""
    with contextlib.suppress(Exception):  # a response not started, or a write that failed
        async with asyncio.timeout(_CUT_SECONDS):  # a browser not reading: do not hold the end
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    task = asyncio.current_task()
    if task is not None:
        task.cancel()


async def disconnected(receive: Receive) -> None:
    """Returns once the client has gone (``http.disconnect``)."""
    while (await receive())["type"] != "http.disconnect":
        pass
