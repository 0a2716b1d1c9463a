"""Where URL mode's pages are, as links name them: the pages' public base URL.

Rules:

* The base is checked as every link made from it will be (``outgoing.check_url``): an
  http(s) URL with a host, no query or fragment, no credentials; its trailing ``/`` is
  dropped.
* Plain http off loopback is refused (the pages take secrets), as for an OAuth
  provider's URLs, unless the base was derived from the address the server bound
  (``serve --http`` on a LAN): then it is served, and ``UrlMode.warn_at_start`` says so.
* Errors never show a password the URL held (``url_redaction``).
"""

from __future__ import annotations

import urllib.parse

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.options import cleartext, http_meant
from mcp_elicit.server.outgoing import check_url
from mcp_elicit.url_redaction import redact_uri, redact_urls

__all__ = ["PAGES_PATH", "public_base"]

#: Where the pages are served, under the server's public base URL.
PAGES_PATH = "/mcp-elicit"


def public_base(url: str, *, from_address: bool = False) -> str:
    """The pages' public base URL, checked as every link made from it will be. Plain http
    off loopback is refused, as for an OAuth provider's URLs (``server/oauth.py``), unless
    the URL was derived from the bound address (``from_address``; warned at start-up)."""
    shown = redact_uri(url) if "://" in url else redact_uri("//" + url)[2:]  # no password, host first
    text, wrong = url.strip(), f"the public URL must look like http(s)://host[:port][/path], not {shown!r}"
    if text.partition("://")[0].lower() not in ("http", "https") or "://" not in text:  # said once
        raise ConfigError(f"{wrong}{redact_urls(http_meant(text))}")
    try:
        check_url(text)
    except ValueError as exc:
        raise ConfigError(f"{wrong}: {exc}") from None
    if (parts := urllib.parse.urlsplit(text)).query or parts.fragment:
        raise ConfigError(wrong)
    if not from_address and cleartext(text):
        raise ConfigError(
            f"the public URL {shown!r} is plain http on a host that is not loopback: the pages that take "
            "secrets, their one-time links and their cookies would cross the network in cleartext. Give an "
            "https:// URL (TLS may end at a proxy in front), as for an OAuth provider's URLs; plain http "
            "only on loopback (127.0.0.1, [::1], localhost)"
        )
    return text.rstrip("/")
