"""A server that asks in 2025-11-25's ways on a 2026-07-28 connection, in the CLI's words:
what it asked, and the ``--protocol`` with which the CLI can follow it.

Some servers keep their handshake-era habits whatever revision was agreed: the official
Python SDK answers a call with -32042 (URL elicitation required, which 2026-07-28 has no
place for), and its servers and FastMCP's, asking with ``elicitation/create``, fail the
request saying their 2026-07-28 transport cannot send server-initiated requests. The
client cannot follow either at 2026-07-28; at 2025-11-25 it follows both.

Rules:

* Only at a modern revision (``wire.versions.is_modern``): at 2025-11-25 the client follows
  these itself, and a failure there has other causes.
* -32042: each step of ``data.elicitations`` is shown as ``url_steps`` shows them
  (bounded, inert, each URL judged); nothing is opened.
* Server-initiated requests: only an error (or a tool's error result) whose words say
  the server cannot send them gets the hint, whatever its code: "cannot send
  'elicitation/create'" and "no back-channel" (the SDK's), "server-initiated requests is
  (are) unavailable / not supported" (FastMCP's). Words that merely name them (a query
  echoed back, "'elicitation/create' is not a tool") are the server's own failure, as is
  another -32600 or -32603. A tool's error text that is not a string is not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_elicit.cli.url_steps import step_lines, unfollowable
from mcp_elicit.client.era_habits import CANNOT_SEND_REQUESTS
from mcp_elicit.client.options import client_hint, required_revision
from mcp_elicit.errors import MissingClientCapability, ProtocolError, URLElicitationRequired
from mcp_elicit.wire.versions import LATEST_HANDSHAKE, is_modern

__all__ = ["capability_words", "era_hint", "tool_error_note"]

_FOLLOW: Final = f"--protocol {LATEST_HANDSHAKE}"


def era_hint(exc: ProtocolError, where: str, revision: str | None) -> str:
    """What to add to the message of ``exc``, a server's error at ``revision`` ("" when
    nothing): the steps of a -32042, or the hint for a refused server-initiated request.
    ``where``: the TARGET, as the URL's judge reads where the server runs."""
    if not is_modern(revision):
        return ""
    if isinstance(exc, URLElicitationRequired):
        return _url_required(exc, where, revision)
    if CANNOT_SEND_REQUESTS.search(exc.message):
        return "\n" + _server_requests(revision)
    return ""


def capability_words(exc: MissingClientCapability, text: str, nobody_answers: str | None) -> str:
    """``text``, the message for a server's -32021, with what to do in the command's own words
    rather than the client library's (``Client``'s ``versions=`` or ``answerer=``, which the
    command line has no way to pass): the ``--protocol`` to offer when the revision agreed
    cannot carry the request, ``--root`` for roots, and ``nobody_answers`` (why nothing could
    answer, and what to give) when the call declared no elicitation."""
    if hint := client_hint(exc):
        text = text.replace(f" ({hint})", "", 1)
    required = exc.required
    if since := required_revision(exc):  # what it lacks beside (roots, sampling: gathered) is said too
        text += (
            f"\nIt needs MCP {since} or later, which this connection did not agree on: offer it "
            f"(--protocol {since}, or no --protocol to offer every revision)."
        )
    if "roots" in required:
        text += "\nGive --root DIR (repeatable) to declare roots and name the directories."
    if "sampling" in required:
        text += "\nmcp-elicit call declares no sampling: call it from a client that does."
    if nobody_answers and not since and ("elicitation" in required or not required):
        text += "\n" + nobody_answers
    return text


def tool_error_note(result: Mapping[str, Any], revision: str | None) -> str:
    """The note for a tool's error result at ``revision`` whose text says the server cannot
    send its requests (FastMCP's, for one); "" otherwise."""
    if not is_modern(revision) or result.get("isError") is not True:
        return ""
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    texts = (b.get("text") for b in blocks if isinstance(b, Mapping))
    text = " ".join(t for t in texts if isinstance(t, str))
    return _server_requests(revision) if CANNOT_SEND_REQUESTS.search(text) else ""


def _server_requests(revision: str | None) -> str:
    return (
        f"The server asks with server-initiated requests (elicitation/create), which a {revision} "
        f"connection does not carry; {LATEST_HANDSHAKE} does. To answer it, run the command again with {_FOLLOW}."
    )


def _url_required(exc: URLElicitationRequired, where: str, revision: str | None) -> str:
    lines = [
        f"The server asked for URL-mode steps in {LATEST_HANDSHAKE}'s way (-32042), which {revision} "
        f"has no place for, so the client cannot follow them; their pages were not opened.",
        *step_lines(exc, where),
    ]
    lines.append(
        unfollowable(exc, where)
        or f"To let mcp-elicit follow them (each page shown to you first, to open or not), run the command again with {_FOLLOW}."
    )
    return "\n" + "\n".join(lines)
