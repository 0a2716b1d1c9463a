"""The revision negotiation (``Client.connect``, and again after a stdio server restarted):
the ``server/discover`` probe, the fall back to ``initialize``, and what it reads from a
server's answers: who a ``DiscoverResult`` says it is, the modern revision a ``-32022``
names, and the error for a server of the handshake era that the client may not speak to.

Rules (the era itself is judged by ``core.era``; the module docstring of
``client.session`` says what the client does):

* At most ``_PROBES`` (2) probes: the first at the most preferred modern revision, a
  second at the one a ``-32022`` (from the probe, or from ``initialize``) names.
* On stdio a probe unanswered within ``probe_timeout`` means legacy; over HTTP it is a
  ``RequestTimeout`` (an HTTP server answers something).
* The handshake's session is the client's from the moment ``initialize`` is sent
  (``began``): the server may ask it questions before it answers.
* A silent server that does not answer ``initialize`` either is one ``RequestTimeout``
  naming both waits; the client's own refusal of the version an ``InitializeResult``
  chose ends the negotiation, never a reprobe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from mcp_elicit.client.connection import Connection
from mcp_elicit.client.rev_2025_11_25 import HandshakeSession
from mcp_elicit.client.rev_2026_07_28 import ModernSession
from mcp_elicit.client.subscriptions import Subscription
from mcp_elicit.client.transport import Ended, Transport
from mcp_elicit.core.client import request_headers
from mcp_elicit.core.client_inputs import ServerInfo
from mcp_elicit.core.era import Legacy, Modern, Reprobe, Verdict, judge_probe, modern_preferences
from mcp_elicit.core.rounds import RoundLimits
from mcp_elicit.errors import (
    ProtocolError,
    ProtocolViolation,
    RequestTimeout,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcp_elicit.wire.jsonrpc import Message, RequestId
from mcp_elicit.wire.meta import SERVER_INFO_META_KEY
from mcp_elicit.wire.versions import LATEST_HANDSHAKE, is_handshake

__all__ = ["discovered_server", "modern_from", "negotiate", "not_modern"]

log = logging.getLogger("mcp_elicit.client")

_PROBES: Final = 2


def discovered_server(discover: Mapping[str, Any], where: str, secrets: tuple[str, ...] = ()) -> ServerInfo:
    """Who a ``DiscoverResult`` says the server is (``_meta``'s serverInfo; a top-level
    ``serverInfo`` as some servers send it), reached at ``where`` and given ``secrets``."""
    meta = discover.get("_meta")
    info = meta.get(SERVER_INFO_META_KEY) if isinstance(meta, Mapping) else None
    if info is None:
        info = discover.get("serverInfo")
    return ServerInfo.from_json(info, where, secrets)


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


async def negotiate(
    conn: Connection,
    transport: Transport,
    *,
    versions: Sequence[str],
    limits: RoundLimits,
    probe_timeout: float,
    routes: dict[RequestId, Subscription],
    began: Callable[[HandshakeSession], None],
) -> ModernSession | HandshakeSession:
    """The session of the revision the client and the server settle on (``transport``
    open): a ``ModernSession`` after a probe that means modern, else a
    ``HandshakeSession`` once ``initialize`` is answered (given to ``began`` as it starts)."""
    handshake: HandshakeSession | None = None

    async def shake() -> HandshakeSession:
        nonlocal handshake
        handshake = HandshakeSession(conn, preferred=versions, limits=limits)
        began(handshake)
        await handshake.initialize()
        return handshake

    modern = modern_preferences(versions)
    if not modern:
        return await shake()
    version = modern[0]
    for _ in range(_PROBES):
        verdict = await _probe(conn, transport, version, versions, probe_timeout)
        if isinstance(verdict, Reprobe):
            version = verdict.version
            continue
        if isinstance(verdict, Modern):
            session = ModernSession(
                conn,
                verdict.version,
                preferred=versions,
                limits=limits,
                discover=verdict.discover,
                routes=routes,
            )
            if verdict.discover is not None:
                conn.server = discovered_server(verdict.discover, transport.where, conn.server.secrets)
            # x-mcp-header applies to modern requests over HTTP only.
            conn.tools.check_headers = transport.http
            return session
        if not any(is_handshake(v) for v in versions):
            raise not_modern(conn.server, verdict, versions)
        log.info("%s looks legacy (%s); falling back to initialize", conn.server, verdict.reason)
        try:
            return await shake()
        except RequestTimeout:
            if not verdict.silent or (handshake is not None and bool(handshake.initialized)):
                raise
            # both waits passed: say so, not only the last one's length
            raise RequestTimeout(
                f"no answer from {conn.server} to server/discover within {probe_timeout:g} s, "
                f"nor to initialize within {conn.timeout:g} s"
            ) from None
        except ProtocolError as exc:
            refused = handshake is not None and handshake.refused
            if exc.code != -32022 or refused:  # the client's own refusal says nothing modern
                raise
            # The server is modern after all (a slow start, or a dual-era server that
            # refuses the handshake): its error names the versions; probe once more.
            version = modern_from(exc, modern) or version
    raise ProtocolViolation(f"could not settle a protocol revision with {conn.server}")


async def _probe(
    conn: Connection, transport: Transport, version: str, versions: Sequence[str], probe_timeout: float
) -> Modern | Reprobe | Legacy:
    _, message = conn.builder.request("server/discover", None, version)
    headers = request_headers(message, version)
    timeout = conn.timeout if transport.http else probe_timeout
    try:
        reply, exchange = await conn.request(message, headers, budget=conn.budget(timeout), cancellable=False)
    except RequestTimeout:
        if transport.http:
            raise
        return Legacy(f"no answer to server/discover within {timeout:g} s", silent=True)
    await exchange.aclose()
    if isinstance(reply, Ended):
        if reply.error is not None:
            raise reply.error
        if reply.reason is not None and reply.status is None:
            raise TransportError(f"server/discover got no response: {reply.reason}")  # names where
        verdict = _judged(conn, None, version, versions, reply.status, reply.said)
        if isinstance(verdict, Legacy) and (reply.detail or reply.body):  # a 202, a page; its words
            detail = f" ({reply.detail})" if reply.detail else ""
            return Legacy(f"{verdict.reason}{detail}{f': {reply.said}' if reply.body else ''}")
        return verdict
    status = (getattr(exchange, "status", None) or 200) if transport.http else None  # a JSON-RPC error's 503
    return _judged(conn, reply, version, versions, status, "")


def _judged(
    conn: Connection,
    answer: Message | None,
    version: str,
    versions: Sequence[str],
    status: int | None,
    body: str,
) -> Verdict:
    """``judge_probe``'s verdict; its refusals (401, 403, 429, 5xx) name the server."""
    try:
        return judge_probe(answer, requested=version, preferred=versions, status=status, body=body)
    except TransportError as exc:
        named = TransportError(f"server/discover to {conn.server}: {exc}")
        named.http_status = status
        raise named from None
