"""mcp-elicit: MCP servers that ask the user for more information mid-request.

Build a server with ``Server``; handlers that take a ``Context`` can ``await
ctx.elicit(message, Schema)`` and get an ``Answer`` (accept, decline or cancel). The same
handler serves MCP 2026-07-28 (multi round-trip requests with a sealed ``requestState``)
and 2025-11-25 clients.
"""

from __future__ import annotations

from mcp_elicit.errors import ToolError
from mcp_elicit.forms import Boolean, Choice, Field, Form, FormSchema, Integer, MultiChoice, Number, String
from mcp_elicit.sealing import KeyRing
from mcp_elicit.server.app import Server
from mcp_elicit.server.auth import Principal, StaticTokens, TokenVerifier
from mcp_elicit.server.context import Answer, Context
from mcp_elicit.server.results import Audio, Blob, Image

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Audio",
    "Blob",
    "Boolean",
    "Choice",
    "Context",
    "Field",
    "Form",
    "FormSchema",
    "Image",
    "Integer",
    "KeyRing",
    "MultiChoice",
    "Number",
    "Principal",
    "Server",
    "StaticTokens",
    "String",
    "TokenVerifier",
    "ToolError",
    "__version__",
]
