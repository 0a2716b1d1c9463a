"""The probe for a legacy HTTP+SSE server (MCP 2024-11-05), which ``cli.diagnose`` makes
after a 4xx: one GET to the TARGET URL with ``Accept: text/event-stream``, as the 2025-03-26
backwards-compatibility section prescribes, looking for the first ``endpoint`` event.

Rules: a few seconds and a few KiB at most; a redirect is followed as the client's own
transport follows one (never from https to http, the person's headers kept at home); any
failure is "not such a server". httpx is imported only when the probe runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

from mcp_elicit.errors import TransportError

__all__ = ["legacy_sse_endpoint"]

_SSE_PROBE_SECONDS: Final = 3.0
_SSE_PROBE_BYTES: Final = 4096


async def legacy_sse_endpoint(url: str, headers: dict[str, str]) -> str | None:
    """The message endpoint a legacy HTTP+SSE server names in its first ``endpoint``
    event on GET, or None (not such a server, or no answer within a few seconds). A
    redirect is followed as the client's own transport follows one: never from https to
    http, and without the person's ``headers`` to another origin."""
    import httpx

    from mcp_elicit.transports.http_redirects import keep_home, refuse_leaving

    async def home_only(request: httpx.Request) -> None:
        keep_home(request, url, headers)

    async def no_downgrade(response: httpx.Response) -> None:
        refuse_leaving(response, url, url)

    hooks: dict[str, list[Callable[..., Any]]] = {"request": [home_only], "response": [no_downgrade]}
    with contextlib.suppress(httpx.HTTPError, TransportError, TimeoutError, OSError, UnicodeDecodeError):
        async with (
            httpx.AsyncClient(timeout=_SSE_PROBE_SECONDS, follow_redirects=True, event_hooks=hooks) as client,
            asyncio.timeout(_SSE_PROBE_SECONDS),
            client.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as response,
        ):
            kind = response.headers.get("content-type", "")
            if response.status_code != 200 or not kind.startswith("text/event-stream"):
                return None
            data = b""
            async for chunk in response.aiter_bytes():
                data += chunk
                found = _endpoint_event(data.decode("utf-8", errors="replace"))
                if found is not None or len(data) > _SSE_PROBE_BYTES:
                    return found
    return None


def _endpoint_event(text: str) -> str | None:
    for block in text.replace("\r\n", "\n").split("\n\n")[:-1]:
        event, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if event == "endpoint":
            return "\n".join(data)
    return None
