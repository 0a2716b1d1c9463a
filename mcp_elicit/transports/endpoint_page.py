"""What a person gets who opens the MCP endpoint in a browser: a GET there is no MCP request.

Rules:

* Only a person's GET gets it: one whose ``Accept`` prefers ``text/html`` (a page) or
  ``text/plain`` (the same, as text) to anything else it names, names no
  ``text/event-stream`` (a client asking for the 2025-11-25 standalone stream, or probing
  for the legacy HTTP+SSE transport, keeps getting the bare 405), and that carries no
  ``MCP-Protocol-Version`` (nor ``Mcp-Session-Id``: such a GET never comes here).
* Its status stays the 405 (``Allow: POST``) that every GET without a session gets: both
  revisions ask for it (2025-11-25: no stream is offered there; 2026-07-28: no GET at
  all). Only the body tells a person what they reached.
* It says what the endpoint is, whose it is, which revisions it speaks
  (``wire.versions.SUPPORTED``) and how to try it (``mcp-elicit check <URL>``). Whose:
  the server's title as it declares it in ``serverInfo``, else its name (``public_name``),
  made inert (``inert_text``: no control or bidi character reaches a page or a terminal)
  and cut to ``NAME_MAX`` characters; nothing else of the server (no version, no
  instructions, no tool). A server that needs a token shows no more than it shows
  without one: only the ``resource_name`` it publishes in its protected resource
  metadata (RFC 9728), else no name, as its ``serverInfo`` is for clients with a token. The URL is the public URL's, else the
  request's scheme, ``Host`` and mount path; never its query. A ``Host`` that is not a host
  name or address (with a port) is not shown: the page says "this page's address" instead.
  The mount path is spelled as the request did, else %-escaped back (``mount_path``: ASGI
  gives it decoded, and a ``Mount`` with a path parameter takes it from the request): the
  URL shown is one URL, on one line, that ``check`` can use, never lines of text a link's
  path slips onto the page. Everything shown is HTML-escaped all the same, and the
  command shell-quoted.
* Whether a GET gets the page, the text or the bare 405 depends on its ``Accept``,
  ``MCP-Protocol-Version`` and ``Mcp-Session-Id``: each of those answers names them in
  ``Vary`` (``VARY``), so that a cache (a 405 is cacheable by default) never gives a
  browser a client's answer, nor a client a page.
* The page carries every page's headers (``page_html.HEADERS``: ``no-store``, a strict
  Content-Security-Policy, no framing, no referrer); the text ``no-store`` and ``nosniff``.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Mapping
from typing import Final, Literal

from starlette.responses import PlainTextResponse, Response

from mcp_elicit.inert_text import inert
from mcp_elicit.transports.http_exchange import Scope
from mcp_elicit.transports.mount_path import escape_path, mount_path
from mcp_elicit.transports.page_html import html_page
from mcp_elicit.wire.headers import VERSION_HEADER
from mcp_elicit.wire.versions import SUPPORTED

__all__ = ["NAME_MAX", "VARY", "endpoint_page", "endpoint_url", "public_name", "wants_page"]

Kind = Literal["html", "text"]

#: A host name, IPv4 or bracketed IPv6 address, with a port or not: what a browser sends.
_HOST: Final = re.compile(r"(?:[A-Za-z0-9_.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")
#: What the command names when the request's own address cannot be shown.
_SOMEWHERE: Final = "<this page's address>"
_REVISIONS: Final = ", ".join(SUPPORTED[:-1]) + " and " + SUPPORTED[-1]
#: The request headers a GET's 405 (the page, the text or the bare one) depends on.
VARY: Final = "Accept, MCP-Protocol-Version, Mcp-Session-Id"
_ALLOW: Final = {"Allow": "POST", "Vary": VARY}
#: The most characters of the server's name shown (a longer one ends with "…").
NAME_MAX: Final = 120


def public_name(
    name: str, title: str | None, *, guarded: bool, resource_name: str | None = None
) -> str | None:
    """Whose endpoint this is, as an anonymous visitor may be told: the server's ``title``
    else its ``name`` (its ``serverInfo``), or, for a server ``guarded`` by tokens, only the
    ``resource_name`` of its public resource metadata (None without one); made inert and
    cut to ``NAME_MAX`` characters as shown. None: the page names nobody."""
    shown = (resource_name or None) if guarded else (title or name)
    if not shown:
        return None
    whole = inert(shown, spaces=True)
    if len(whole) <= NAME_MAX:
        return whole
    cut = ""  # NAME_MAX characters as shown, escapes counted; an escape kept whole or left out
    for character in shown:
        piece = inert(character, spaces=True)
        if len(cut) + len(piece) > NAME_MAX - 1:
            break
        cut += piece
    return cut + "…"


def wants_page(headers: Mapping[str, str]) -> Kind | None:
    """``"html"`` or ``"text"`` for a person's GET (``headers`` lower-cased, as the app
    reads them), None for any other, which keeps the bare 405."""
    if VERSION_HEADER in headers or "mcp-session-id" in headers:
        return None
    best = html_q = text_q = 0.0
    for item in headers.get("accept", "").lower().split(","):
        kind, _, params = item.partition(";")
        kind = kind.strip()
        q = _quality(params)
        if q <= 0.0:
            continue
        if kind == "text/event-stream":
            return None  # a client's GET for its stream: the 405 it has always had
        best = max(best, q)
        if kind in ("text/html", "application/xhtml+xml"):
            html_q = max(html_q, q)
        elif kind == "text/plain":
            text_q = max(text_q, q)
    if html_q > 0.0 and html_q >= best:
        return "html"
    if text_q > 0.0 and text_q >= best:
        return "text"
    return None


def _quality(params: str) -> float:
    """The ``q`` of an ``Accept`` item's parameters (1 without one, or an unreadable one)."""
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip() == "q":
            try:
                return float(value)
            except ValueError:
                return 1.0
    return 1.0


def endpoint_url(scope: Scope, headers: Mapping[str, str], path: str, public_url: str | None) -> str | None:
    """The endpoint's URL as the person reached it (``path``: the endpoint's, inside the
    app): the public URL's when one is set, else from the request's scheme, ``Host`` and
    mount path (``mount_path``), without the query. None when the ``Host`` is not a host (or the
    scheme not http(s)): nothing of such a request is shown."""
    if public_url:
        return f"{public_url}{escape_path(path)}"
    scheme, host = scope.get("scheme", "http"), headers.get("host", "")
    if scheme not in ("http", "https") or not _HOST.fullmatch(host):
        return None
    return f"{scheme}://{host}{mount_path(scope)}{escape_path(path)}"


def endpoint_page(kind: Kind, url: str | None, name: str | None = None) -> Response:
    """The 405 for a person's GET at the endpoint reached at ``url`` (None: not shown) of
    the server called ``name`` (``public_name``; None: not named)."""
    command = f"mcp-elicit check {shlex.quote(url) if url else _SOMEWHERE}"
    whose = "a Model Context Protocol (MCP) server's endpoint"
    if name:
        whose = f"the Model Context Protocol (MCP) endpoint of the server {name}"
    if kind == "text":
        text = (
            "MCP server endpoint\n\n"
            f"This address is {whose}: MCP clients send "
            "it JSON-RPC messages with POST. A browser cannot use it.\n"
            f"It speaks MCP revisions {_REVISIONS}.\n\n"
            f"Try it from a terminal:\n\n    {command}\n"
        )
        headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", **_ALLOW}
        return PlainTextResponse(text, status_code=405, headers=headers)
    body = (
        "<h1>MCP server endpoint</h1>"
        f"<p>This address is {html.escape(whose)}: MCP clients send it "
        "JSON-RPC messages with <code>POST</code>. A browser cannot use it.</p>"
        f"<p>It speaks MCP revisions {html.escape(_REVISIONS)}.</p>"
        "<h2>Try it</h2><p>From a terminal:</p>"
        '<pre style="white-space:pre-wrap;padding:.75rem;border:1px solid #ccc;border-radius:6px">'
        f"<code>{html.escape(command)}</code></pre>"
        '<p class="muted">Or give this address to an MCP client as a Streamable HTTP server.</p>'
    )
    title = f"MCP server endpoint · {name}" if name else "MCP server endpoint"  # which tab is whose
    return html_page(title, body, status=405, headers=_ALLOW)
