"""Call an ASGI app directly, as uvicorn would, without a socket or an HTTP client: for
tests that send thousands of requests and look at what the app keeps between them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Posted", "asgi_post"]

#: A hang guard, not a timing: an app that never answers fails the test rather than
#: holding up the run (thousands of requests each take milliseconds).
ANSWER_WITHIN = 30.0


@dataclass
class Posted:
    """A response: its status, headers (names lower-cased) and whole body."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


async def asgi_post(
    app: Any,
    body: bytes,
    headers: Mapping[str, str],
    *,
    path: str = "/mcp",
    scope_type: Callable[..., dict[str, Any]] = dict,
) -> Posted:
    """POST ``body`` to ``path`` of ``app``: the status, headers and whole body. The
    request runs in a task of its own, as under uvicorn, and its connection stays open
    until the app has answered (no disconnect): an app that has not answered within
    ``ANSWER_WITHIN`` seconds fails the test. ``scope_type`` makes the ASGI scope (a dict
    subclass lets a test hold a weak reference to it)."""
    scope = scope_type(
        type="http",
        asgi={"version": "3.0"},
        http_version="1.1",
        method="POST",
        scheme="http",
        path=path,
        raw_path=path.encode(),
        query_string=b"",
        root_path="",
        headers=[(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        client=("127.0.0.1", 50000),
        server=("127.0.0.1", 8000),
    )
    events = [{"type": "http.request", "body": body, "more_body": False}]
    posted = Posted()
    out: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if events:
            return events.pop()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            posted.status = message["status"]
            posted.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            out.append(message.get("body", b""))

    try:
        async with asyncio.timeout(ANSWER_WITHIN):
            await asyncio.ensure_future(app(scope, receive, send))  # its own task, as uvicorn runs it
    except TimeoutError:
        raise AssertionError(f"the app did not answer {path} within {ANSWER_WITHIN:g} s: {posted}") from None
    posted.body = b"".join(out)
    return posted
