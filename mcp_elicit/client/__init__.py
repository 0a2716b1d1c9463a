"""The MCP client: era detection, the multi round-trip loop, answerers.

``Client`` speaks 2026-07-28 and the handshake revisions over any ``Transport``; an
``Answerer`` (``Scripted`` for CI and tests) answers the server's questions. Transports and
the ``connect_*`` helpers live in ``mcp_elicit.transports``; ``ClientOptions`` types the
``Client`` options they pass on.
"""

from __future__ import annotations

from mcp_elicit.client.answerers import (
    Answerer,
    ElicitAnswer,
    NoAnswerer,
    RootsCallback,
    SamplingCallback,
    Scripted,
    ScriptEntry,
)
from mcp_elicit.client.options import ClientOptions
from mcp_elicit.client.session import Client
from mcp_elicit.client.subscriptions import Subscription
from mcp_elicit.client.transport import Ended, Exchange, Transport
from mcp_elicit.core.client import ClientInfo
from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo
from mcp_elicit.core.rounds import RoundLimits

__all__ = [
    "Answerer",
    "Client",
    "ClientInfo",
    "ClientOptions",
    "ElicitAnswer",
    "ElicitationRequest",
    "Ended",
    "Exchange",
    "NoAnswerer",
    "Origin",
    "RootsCallback",
    "RoundLimits",
    "SamplingCallback",
    "ScriptEntry",
    "Scripted",
    "ServerInfo",
    "Subscription",
    "Transport",
]
