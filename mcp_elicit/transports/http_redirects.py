"""Where the client's HTTP requests may go when a server redirects them (``http_client``).

Rules:

* The configured URL is an absolute ``http(s)`` URL with a host (``check_server_url``).
* Not from https to plain http, whatever the method; not, for a POST (whose body carries
  tool arguments and a person's answers) or a DELETE (which ends the session wherever it
  lands), to another origin (scheme, host, port). ``refuse_leaving`` raises a
  ``TransportError`` naming the server, the status and the new location (its user name
  and password, query redacted), for a person to use directly if they trust it, saying
  which parts ``REDACTED`` hides (``written_out``); the response is left unread.
* A redirect that is followed has its body read whole by httpx first: it is refused
  compressed and capped at ``MAX_REDIRECT_BODY``, as answers are.
* A request that does go to another origin (the GET stream) goes without what is meant
  for the configured server only (``keep_home``): the caller's fixed headers, a DPoP proof
  made for its URL, ``Mcp-Session-Id`` and ``Last-Event-ID``; httpx drops only
  ``Authorization`` there.
* Only the requests a transport marked as its own (the ``MARK`` request extension) are
  judged, so a caller's client shared with other code is left alone.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncIterator, Mapping
from typing import Final

import httpx

from mcp_elicit.errors import TransportError
from mcp_elicit.url_redaction import hidden_parts, redact_uri

__all__ = [
    "MARK",
    "MAX_REDIRECT_BODY",
    "check_server_url",
    "compressed",
    "keep_home",
    "origin",
    "refuse_leaving",
    "written_out",
]

#: A request extension naming the transport that sent the request.
MARK: Final = "mcp_elicit.transport"
#: What is read of a redirect's body (httpx reads it all before following): a page at most.
MAX_REDIRECT_BODY: Final = 64 * 1024
#: Meant for the configured server alone: a DPoP proof made for its URL, its session id, and
#: the id of the event a stream of its resumes after.
_HOME_ONLY: Final = ("dpop", "mcp-session-id", "last-event-id")
#: Redirected to another origin, these are refused: a POST's body is the message itself, a
#: DELETE ends the session (with its id) wherever it lands.
_HOME_METHODS: Final = frozenset({"POST", "DELETE"})
_OURS: Final = frozenset({"accept", "content-type"})  # the protocol's own, whoever set them


def check_server_url(url: object) -> str:
    """``url``, the configured server's URL, when requests can go there: an absolute
    ``http(s)`` URL with a host; ``TypeError`` or ``ValueError`` (its secrets redacted)
    when the transport is made, not a failed first request."""
    if not isinstance(url, str):
        raise TypeError(f"the server URL must be a string, not {type(url).__name__}")
    try:
        parts = urllib.parse.urlsplit(url)
        fits = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an unbalanced IPv6 bracket, a port that is no number
        fits = False
    if not fits:
        raise ValueError(
            "the server URL must be an absolute http(s) URL such as http://127.0.0.1:8000/mcp, "
            f"not {redact_uri(url)!r}"
        )
    return url


def refuse_leaving(response: httpx.Response, home: str, shown: str) -> None:
    """Raise ``TransportError`` rather than let httpx follow a redirect of ``response`` from
    https to http, or of a POST or DELETE away from ``home``'s origin (``shown``: how the
    server is named); cap the body of one that is followed, and refuse it compressed."""
    if not response.has_redirect_location:
        return
    request = response.request
    try:  # where httpx goes: a relative Location is resolved against the response's URL
        target = response.url.join(response.headers["location"])
    except httpx.InvalidURL:
        return  # httpx refuses to follow it itself
    if response.url.scheme == "https" and target.scheme != "https":
        why = f"plain {target.scheme}: mcp-elicit does not leave https for a connection anyone can read"
    elif request.method in _HOME_METHODS and origin(target) != origin(httpx.URL(home)):
        why = (
            "another origin: mcp-elicit does not carry a request (its arguments, a person's "
            "answers) or a session to a server it was not given"
        )
    else:
        why = None
    full = str(target.copy_with(fragment=None))
    where = redact_uri(full)  # no key from its query either
    if why is not None:
        raise TransportError(
            f"{shown} redirects (HTTP {response.status_code}) to {where}, {why}; "
            f"if you trust it, use {where} directly{written_out(full)}"
        )
    redirect = f"the redirect from {shown} (HTTP {response.status_code}) to {where}"
    coding = compressed(response)
    if coding is not None:
        raise TransportError(
            f"{redirect} came compressed ({coding}), though this client asks for no compression "
            "(Accept-Encoding: identity); it was not read"
        )
    if isinstance(response.stream, httpx.AsyncByteStream):
        response.stream = _Capped(response.stream, redirect)


def written_out(url: str) -> str:
    """What to do with a redirect's address shown redacted before it can be used: which
    parts its ``REDACTED`` stands for, and where they are in full; "" when none."""
    hidden = hidden_parts(url)
    return (
        f", with {hidden} written out where it shows REDACTED (hidden here: keys travel there; "
        "the Location header the server sends has them, which curl -si -X POST with your URL prints)"
        if hidden
        else ""
    )


def keep_home(request: httpx.Request, home: str, fixed: Mapping[str, str]) -> list[str]:
    """Drop from ``request``, when it goes to another origin than ``home``'s, a DPoP proof,
    the session id, ``Last-Event-ID`` and the caller's ``fixed`` headers; the names of the
    fixed headers dropped."""
    if origin(request.url) == origin(httpx.URL(home)):
        return []
    for name in _HOME_ONLY:
        if name in request.headers:
            del request.headers[name]
    dropped = [name for name in fixed if name.lower() not in _OURS and name in request.headers]
    for name in dropped:
        del request.headers[name]
    return dropped


def compressed(response: httpx.Response) -> str | None:
    """The response's ``Content-Encoding`` when it is compressed (not ``identity``)."""
    coding = response.headers.get("content-encoding", "").strip().lower()
    return coding if coding not in ("", "identity") else None


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """Scheme, host and port (the scheme's default when none is written)."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


class _Capped(httpx.AsyncByteStream):
    """A redirect's body, which fails once past ``MAX_REDIRECT_BODY``."""

    def __init__(self, inner: httpx.AsyncByteStream, redirect: str) -> None:
        self._inner = inner
        self._redirect = redirect

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > MAX_REDIRECT_BODY:
                raise TransportError(
                    f"{self._redirect} came with a body over {MAX_REDIRECT_BODY // 1024} KiB; not read on"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
