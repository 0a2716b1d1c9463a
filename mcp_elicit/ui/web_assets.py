"""The browser answerer's page assets: its scripts, in the order they run, and its
stylesheet, shipped in the package (``web_static/``) and served by the answer server.

Rules: no build step and no CDN; every asset is a file of ``web_static/`` named here, and
nothing else is served from ``/static``. The scripts are deferred, so they run in the
order of ``SCRIPTS``: each module a later one uses (``window.mcpElicit...``) comes first.
"""

from __future__ import annotations

import importlib.resources
from types import MappingProxyType
from typing import Final

__all__ = ["SCRIPTS", "STATIC", "asset"]

#: The answer page's scripts, in the order they run (deferred).
SCRIPTS: Final = ("values.js", "draft.js", "review.js", "events.js", "urlstep.js", "app.js", "spin.js")
#: Every asset by its path on the answer server, with its content type.
STATIC: Final = MappingProxyType(
    {
        **{f"/static/{name}": "text/javascript" for name in SCRIPTS},
        "/static/app.css": "text/css",
    }
)


def asset(path: str) -> bytes:
    """The bytes of the asset at ``path`` (a key of ``STATIC``)."""
    if path not in STATIC:
        raise KeyError(path)
    name = path.rsplit("/", 1)[1]
    return importlib.resources.files("mcp_elicit.ui").joinpath("web_static", name).read_bytes()
