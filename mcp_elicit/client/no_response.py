"""A request that got no response (its exchange ended: ``client.transport.Ended``): the
error it raises and what that error says, for either revision's session.

Rules:

* The transport's own error (a failed authorization) is raised as it is; otherwise a
  ``TransportError`` says why there was no response (the transport's reason, or the HTTP
  status and what the body said), with that status.
* A message naming the server by a transport's reason (which says where it is) names it
  by its name only (``to_named``), so that neither is said twice.
* Only requests that read (``REISSUED``) are sent again when their response broke; a
  failed one says it was already sent again (``SENT_AGAIN``), a tool call that it was
  not, since the tool may have acted (``NOT_SENT_AGAIN``).
* ``say_more`` adds to an error's message, a ``ProtocolError``'s ``message`` and
  ``added`` too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from mcp_elicit.client.transport import Ended
from mcp_elicit.core.client_inputs import ServerInfo
from mcp_elicit.errors import MCPElicitError, ProtocolError, TransportError

__all__ = [
    "NOT_SENT_AGAIN",
    "REISSUED",
    "SENT_AGAIN",
    "describe_end",
    "end_error",
    "say_more",
    "to_named",
]

#: Requests that only read, sent again when their response stream broke (the request was
#: lost with it: this revision resumes nothing). Not a tool call, which may have acted.
NOT_SENT_AGAIN: Final = (
    "; it was not sent again, since the tool may have acted (with any answers given): "
    "check what it did before calling it again"
)
SENT_AGAIN: Final = "; it was already sent again once, after its first response or connection broke"
REISSUED: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    }
)


def end_error(ended: Ended, server: object, method: str) -> MCPElicitError:
    """What to raise for a request that got no response: the transport's own error (a
    failed authorization), else a ``TransportError`` saying why."""
    if ended.error is not None:
        return ended.error
    error = TransportError(describe_end(ended, server, method))
    error.http_status = ended.status
    return error


def say_more(error: MCPElicitError, more: str) -> None:
    """Add ``more`` to ``error``'s message (a ``ProtocolError``'s ``added`` too)."""
    if more:
        error.args = (f"{error}{more}",)
        if isinstance(error, ProtocolError):
            error.message = str(error)
            error.added += more


def to_named(server: object) -> str:
    """ " to NAME", for a message that goes on with a transport's reason, which names where
    the server is (its URL, its command): the server by its name only, so that neither
    is said twice; "" while the server has told no name (not "unknown server")."""
    if not isinstance(server, ServerInfo):
        return f" to {server}"
    if server == ServerInfo(where=server.where):
        return ""
    return f" to {replace(server, where='')}"


def describe_end(ended: Ended, server: object, method: str) -> str:
    """Why a request got no response, for a person."""
    if ended.reason:
        return f"{method}{to_named(server)} got no response: {ended.reason}"
    if ended.status is not None:
        body = f": {ended.said}" if ended.body else ""
        detail = f" ({ended.detail})" if ended.detail else ""
        return f"{method} to {server} got HTTP {ended.status}{detail} and no JSON-RPC response{body}"
    return f"{method} to {server} got no response"
