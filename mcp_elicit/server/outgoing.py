"""What a handler's question must be before it goes out to a client: a URL a person
can be sent to (URL-mode elicitation) and a sampling request the schema admits.

Rules: a bad question is the handler's ``ValueError`` saying what is wrong, raised
before anything is sent; a client is never asked to refuse what the server could have
checked itself. A URL in plain http to a host that is not loopback is sent (a test server
often is one), but the spec asks for https outside development: it is warned about in
the log, once per site (scheme, host and port; never the path, which may hold a token)
in the process: every server of it shares that memory (``_warn_site``).
"""

from __future__ import annotations

import functools
import logging
import math
import urllib.parse
from collections.abc import Mapping
from typing import Any

from mcp_types import CreateMessageRequestParams
from pydantic import ValidationError

from mcp_elicit.core.client_inputs import MAX_URL
from mcp_elicit.forms.formats import is_uri, non_uri_characters
from mcp_elicit.server.options import cleartext
from mcp_elicit.url_redaction import redact_uri

__all__ = ["check_sampling", "check_url", "warn_cleartext"]

log = logging.getLogger("mcp_elicit.server")


def check_url(url: object) -> str:
    """``url`` when a URL-mode elicitation may send a person there, else ``ValueError``
    saying why: an absolute ``http(s)`` URI (RFC 3986, what the schema's ``format: uri``
    means: no spaces, control or non-ASCII characters; a name in punycode) with a host, no
    user name or password (a link must not carry credentials, and ``https://bank@evil``
    reads as the wrong site), at most ``MAX_URL`` characters."""
    if not isinstance(url, str):
        raise ValueError(f"a URL elicitation needs the URL as a string, not {type(url).__name__}")
    if len(url) > MAX_URL:
        raise ValueError(f"the URL is {len(url)} characters long; a URL elicitation takes at most {MAX_URL}")
    odd = non_uri_characters(url)
    if odd:
        raise ValueError(
            f"the URL {_shown(url)!r} has characters a URI may not hold ({', '.join(odd)}); %-escape them "
            "(a non-ASCII host name in punycode)"
        )
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # an unbalanced IPv6 bracket
        raise ValueError(f"the URL {_shown(url)!r} has an unreadable host") from None
    if parts.scheme.lower() not in ("http", "https") or not url[len(parts.scheme) :].startswith("://"):
        raise ValueError(f"a URL elicitation needs an http(s) URL, not {_shown(url)!r}")
    if "@" in parts.netloc:
        raise ValueError(
            f"the URL {_shown(url)!r} carries a user name or password before its host; a link a person "
            "is sent to must not hold credentials"
        )
    try:
        parts.port  # noqa: B018 (it checks the port)
    except ValueError:
        raise ValueError(f"the URL {_shown(url)!r} has an invalid port") from None
    if not parts.hostname:
        raise ValueError(f"the URL {_shown(url)!r} has no host")
    if not is_uri(url):  # its characters, scheme and host are right, but not all where they stand
        raise ValueError(
            f"the URL {_shown(url)!r} is not an RFC 3986 URI: it has a %-escape without two hex digits "
            "after it, a second '#', or a '[' or ']' outside an IPv6 host, the query or the fragment"
        )
    return url


def _shown(url: str) -> str:
    """``url`` as a refusal quotes it: its user name and password, query and fragment
    redacted (``redact_uri``: the message reaches logs, spans and the client), then cut to
    80 characters; the other way round, a password cut short would show its start."""
    return redact_uri(url)[:80]


def warn_cleartext(url: str) -> None:
    """Warn (once per site) when ``url``, a checked URL, is plain http off loopback."""
    if cleartext(url):
        parts = urllib.parse.urlsplit(url)
        _warn_site(f"http://{parts.netloc.lower()}")


@functools.lru_cache(maxsize=256)  # once per site, for as many sites as a server plausibly uses
def _warn_site(site: str) -> None:
    log.warning(
        "a URL-mode elicitation sends the person to %s in plain http: what they do on that page "
        "crosses the network in cleartext; outside development, give an https:// URL",
        site,
    )


def check_sampling(params: Mapping[str, Any]) -> None:
    """``ValueError`` saying what is wrong when a sampling request the handler built would
    not fit the schema (a ``system`` role, content that is not a content block, a count of
    tokens that is not a positive whole number): never sent to a client to refuse."""
    max_tokens = params["maxTokens"]
    if type(max_tokens) is not int or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive whole number, not {max_tokens!r}")
    temperature = params.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
    ):
        raise ValueError(f"temperature must be a finite number, not {temperature!r}")
    if not params["messages"]:
        raise ValueError("a sampling request needs at least one message")
    try:
        CreateMessageRequestParams.model_validate(params)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the request"
        raise ValueError(
            f"the sampling request does not fit the schema at {where}: {first.get('msg', 'invalid')} "
            "(messages are {'role': 'user' or 'assistant', 'content': {'type': 'text', 'text': ...}}; "
            "a system prompt goes in system_prompt=)"
        ) from None
