"""What the revision negotiation (``Client.connect``) reads from a server's answers: who a
``DiscoverResult`` says it is, the modern revision a ``-32022`` names, and the error for a
server of the handshake era that the client may not speak to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp_elicit.core.client_inputs import ServerInfo
from mcp_elicit.core.era import Legacy, modern_preferences
from mcp_elicit.errors import ProtocolError, UnsupportedProtocolVersion
from mcp_elicit.wire.meta import SERVER_INFO_META_KEY
from mcp_elicit.wire.versions import LATEST_HANDSHAKE

__all__ = ["discovered_server", "modern_from", "not_modern"]


def discovered_server(discover: Mapping[str, Any], where: str) -> ServerInfo:
    """Who a ``DiscoverResult`` says the server is (``_meta``'s serverInfo; a top-level
    ``serverInfo`` as some servers send it), reached at ``where``."""
    meta = discover.get("_meta")
    info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, Mapping) else None
    if info is None:
        info = discover.get("serverInfo")
    return ServerInfo.from_json(info, where)


def modern_from(exc: ProtocolError, modern: Sequence[str]) -> str | None:
    data = exc.data if isinstance(exc.data, Mapping) else {}
    supported = data.get("supported")
    if isinstance(supported, list):
        for version in modern:
            if version in supported:
                return version
    return None


def not_modern(server: ServerInfo, verdict: Legacy, versions: Sequence[str]) -> UnsupportedProtocolVersion:
    """The error for a server that does not speak the modern revisions ``versions`` allows,
    when they allow no handshake one: a version the two cannot agree on, saying what the
    server answered (``verdict``) and how to talk to a server of the handshake era."""
    wanted = " or ".join(modern_preferences(versions))
    allowed = [*versions, LATEST_HANDSHAKE]
    return UnsupportedProtocolVersion(
        f"{server} does not speak {wanted}: {verdict.reason}. It is a server of an earlier revision "
        f"({LATEST_HANDSHAKE} or before), or not an MCP endpoint at all; this client was allowed "
        f"{', '.join(versions)} only. To talk to a {LATEST_HANDSHAKE} server, allow that revision "
        f"too (versions={allowed!r})",
        {
            "supported": [],
            "requested": modern_preferences(versions)[0],
            "answered": verdict.reason,
            "allowed": list(versions),
        },
    )
