"""The path an HTTP app is mounted under (the ASGI ``root_path``) as a URL's path: what
every URL and header the app builds from it starts with.

Rules:

* ASGI gives ``root_path`` %-decoded, and a ``Mount`` with a path parameter
  (``Mount("/{tenant}", app)``) takes it from the request: it may hold whatever a client
  can %-escape (a space, a line break, a quote, ``?``, ``%``, letters beyond ASCII). It is
  never put in a URL, a header or a line of text as it is.
* ``mount_path`` spells it as the request did, when the server gives the raw path
  (``raw_path``) and a start of it, up to a ``/`` or its end, decodes to ``root_path`` and
  holds only what a URL's path may: so a URL built from it is the one the client used,
  whatever the client chose to escape (RFC 9728's ``resource`` must be that URL, a DPoP
  proof's ``htu`` names it, a browser's cookie is sent back for it). Else (no
  ``raw_path``, or one without the prefix: a server that leaves it out) it is
  ``escape_path``'s.
* ``escape_path`` turns a decoded path back into a URL's: RFC 3986's ``pchar`` and ``/``
  are kept as they are, everything else is %-escaped (UTF-8 first), ``%`` itself included
  (a decoded ``100%`` is ``100%25``).
* Either way the result holds nothing but those characters and ``%XX``: no space, no
  control character, no quote, ``?``, ``#``, ``<`` or ``>``. It is one URL path, on one
  line, fit for a header. Only ``;`` may still be in it, which a cookie's ``Path``
  cannot hold: ``cookie_path`` is the path a cookie can be scoped to.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Final

from mcp_elicit.transports.http_exchange import Scope

__all__ = ["cookie_path", "escape_path", "mount_path"]

#: What a URL's path holds as it is besides letters, digits and ``-._~`` (RFC 3986's pchar and "/").
_KEPT: Final = "/:@!$&'()*+,;="
#: A path spelled only with what a URL's path may hold.
_SPELLED: Final = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")


def escape_path(decoded: str) -> str:
    """``decoded`` (a path as ASGI gives it) %-escaped back into a URL's path."""
    return urllib.parse.quote(decoded, safe=_KEPT, errors="replace")


def mount_path(scope: Scope) -> str:
    """The request's ``root_path`` as a URL's path: as the request spelled it, else
    escaped (``""`` for an app not mounted under a path)."""
    root: str = scope.get("root_path", "")
    if not root:
        return ""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes) and raw.startswith(b"/"):
        spelled = raw.decode("latin-1")
        at = done = 0  # how much of the raw path, and of root, is matched so far
        for part in spelled[1:].split("/"):  # a segment at a time: linear in the path
            piece = "/" + urllib.parse.unquote(part)
            if not root.startswith(piece, done):
                break
            at, done = at + 1 + len(part), done + len(piece)
            if done == len(root):
                prefix = spelled[:at]
                return prefix if _SPELLED.fullmatch(prefix) else escape_path(root)
    return escape_path(root)


def cookie_path(path: str) -> str:
    """The ``Path`` of a cookie for the URL path ``path`` (``mount_path``'s or
    ``escape_path``'s): ``path`` itself, unless it holds a ``;``, which would end the
    attribute (RFC 6265, section 4.1.1); then the path up to the last ``/`` before it, where
    the browser still sends the cookie back."""
    cut = path.find(";")
    return path if cut < 0 else path[: path.rfind("/", 0, cut) + 1]
