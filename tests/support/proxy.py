"""A reverse proxy's path rewrite, in process: what ``location /prefix/ { proxy_pass
http://upstream/; }`` does to the requests it forwards."""

from __future__ import annotations

from typing import Any

__all__ = ["stripping"]


def stripping(prefix: str, app: Any) -> Any:
    """A reverse proxy's rewrite, as ``location /mcp-app/ { proxy_pass http://up/; }`` does:
    the app is reached under ``prefix``, and sees the path without it."""

    async def proxy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            if not scope["path"].startswith(prefix + "/"):
                await send({"type": "http.response.start", "status": 404, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            path = scope["path"][len(prefix) :]
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await app(scope, receive, send)

    return proxy
