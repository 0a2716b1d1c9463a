"""A server whose question the client could not follow, and what a caller passes so it can:
the words added, in parentheses, to the error ``Client``'s calls raise.

Some servers keep 2025-11-25's ways whatever revision was agreed: the official Python SDK
answers a call with -32042 (URL elicitation required, which 2026-07-28 has no place for),
and its servers and FastMCP's, asking with ``elicitation/create``, fail the request saying
their 2026-07-28 transport cannot send server-initiated requests. A caller who offered
every revision (``Client``'s default) meets them at 2026-07-28 and is told only the
server's words. No call is sent again: the tool may have acted.

Rules:

* At a modern revision (``wire.versions.is_modern``): a -32042, and an error whose words
  say the server cannot send its requests ("cannot send 'elicitation/create'" and "no
  back-channel", the SDK's; "server-initiated requests are unavailable / not supported",
  FastMCP's) get ``versions=['2025-11-25']``, and, for a -32042 to an answerer without URL
  mode, that one; the words name the request refused (the SDK's name sampling and roots
  too), and a client that declared nothing to answer it is told what would (an answerer,
  a sampling or roots callback). Words that merely name those requests (a query echoed back,
  "'elicitation/create' is not a tool") are the server's own failure: no hint.
* At a handshake revision, a -32042 reaches the caller unfollowed only when the session
  declared no URL mode (else the person declined it, or its URL was refused, as its
  message says already): the hint names an answerer whose modes include url.
* A hint is added once, in parentheses with none inside, after the server's words (the
  error's ``added``): ``unhinted`` takes it out again. ``cli.era_hints`` says the same in
  the command line's words, and drops these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from mcp_elicit.client.declared import declared_modes
from mcp_elicit.client.no_response import say_more
from mcp_elicit.client.options import say_what_to_pass
from mcp_elicit.errors import MissingClientCapability, ProtocolError, URLElicitationRequired
from mcp_elicit.wire.versions import LATEST_HANDSHAKE, is_modern

__all__ = ["CANNOT_SEND_REQUESTS", "follow_hint", "say_what_follows", "unhinted"]

_METHODS: Final = "elicitation/create|sampling/createMessage|roots/list"
#: What a server's error says when its transport cannot send a request of its own.
CANNOT_SEND_REQUESTS: Final = re.compile(
    rf"(?i)cannot send '?(?:{_METHODS})\b|no back-channel"
    r"|server[- ]initiated requests? (?:is|are) (?:unavailable|not (?:available|supported))"
)
#: The request such words name, and the ``Client`` option that answers it.
_ANSWERED_BY: Final = {
    "elicitation/create": "an answerer=",
    "sampling/createMessage": "a sampling= callback",
    "roots/list": "a roots= callback",
}
_NAMED: Final = re.compile(rf"(?i)cannot send '?({_METHODS})\b")
_ELICITATION: Final = re.compile(r"(?i)\belicitation\b")
#: A hint as ``say_what_follows`` adds it: in parentheses, none inside, what to pass last.
_HINT: Final = re.compile(r" \([^()]*; pass Client [^()]*\)")
_VERSIONS: Final = f"pass Client versions=[{LATEST_HANDSHAKE!r}]"
_URL_ANSWERER: Final = "an answerer= whose modes include url"


def say_what_follows(error: ProtocolError, revision: str | None, capabilities: Mapping[str, Any]) -> None:
    """Add to ``error``, a server's at ``revision`` to a session that declared
    ``capabilities``, the ``Client`` option that would follow it: for a -32021,
    ``options.say_what_to_pass``; else ``follow_hint``'s words, once."""
    if isinstance(error, MissingClientCapability):
        say_what_to_pass(error)
        return
    if revision is None:
        return
    callbacks = frozenset(name for name in ("sampling", "roots") if name in capabilities)
    hint = follow_hint(error, revision, declared_modes(capabilities, revision), callbacks=callbacks)
    if hint and f"({hint})" not in error.message:
        say_more(error, f" ({hint})")


def unhinted(text: str) -> str:
    """``text`` (an error's words) without the hints ``say_what_follows`` added, for a front
    end that says what to do in its own words."""
    return _HINT.sub("", text)


def follow_hint(
    error: ProtocolError,
    revision: str | None,
    modes: frozenset[str],
    *,
    callbacks: frozenset[str] = frozenset(),
) -> str:
    """The words to add to ``error``, a server's at ``revision`` to a session that declared
    the elicitation ``modes`` and the ``callbacks`` (sampling, roots) (see the rules); ""
    when no option would follow it."""
    url_required = isinstance(error, URLElicitationRequired)
    if not is_modern(revision):
        if not url_required or "url" in modes:
            return ""
        return (
            "this client declared no url-mode elicitation, so it could not follow the server's "
            f"URL steps; pass Client {_URL_ANSWERER}"
        )
    if url_required:
        answerer = "" if "url" in modes else f" and {_URL_ANSWERER}"
        return (
            f"the server asks for URL steps in {LATEST_HANDSHAKE}'s way, -32042, which {revision} "
            f"has no place for; {_VERSIONS}{answerer} to follow them"
        )
    if CANNOT_SEND_REQUESTS.search(error.message):
        method = _method_named(error.message)
        answers = {
            "elicitation/create": bool(modes),
            "sampling/createMessage": "sampling" in callbacks,
            "roots/list": "roots" in callbacks,
        }
        named = f", {method}," if method else ","
        option = f" and {_ANSWERED_BY[method]}" if method and not answers[method] else ""
        return (
            f"the server asks with requests of its own{named} which a {revision} connection does "
            f"not carry; {_VERSIONS}{option} to answer them"
        )
    return ""


def _method_named(words: str) -> str | None:
    """The request ``words`` (a server's, saying it cannot send one) name: the SDK's name
    it, FastMCP's say "elicitation"; None when they name none of the three."""
    found = _NAMED.search(words)
    if found is not None:
        return next(m for m in _ANSWERED_BY if m.lower() == found[1].lower())
    return "elicitation/create" if _ELICITATION.search(words) else None
