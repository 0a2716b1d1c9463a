"""mcp-elicit: MCP servers that ask the user for more information mid-request.

Build a server with ``Server``; handlers that take a ``Context`` can ``await
ctx.elicit(message, Schema)`` and get an ``Answer`` (accept, decline or cancel: an
``Accepted``, ``Declined`` or ``Cancelled``, together a ``FormAnswer``). The same
handler serves MCP 2026-07-28 (multi round-trip requests with a sealed ``requestState``)
and 2025-11-25 clients.

The names below are imported on first use, so a command that needs only part of the
package (``mcp-elicit check``) does not pay for the rest. This module itself imports
nothing Python has not loaded at start-up (not even ``typing``): every command imports it
before ``cli.entry`` can take a Ctrl-C.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (type checkers know the name)
if TYPE_CHECKING:
    from typing import Any

    from mcp_elicit.errors import RateLimited, ToolError
    from mcp_elicit.forms import (
        Boolean,
        Choice,
        Field,
        Form,
        FormSchema,
        Integer,
        MultiChoice,
        Number,
        String,
    )
    from mcp_elicit.sealing import KeyRing
    from mcp_elicit.server.app import Server
    from mcp_elicit.server.auth import Principal, StaticTokens, TokenVerifier
    from mcp_elicit.server.context import Context
    from mcp_elicit.server.questions import Accepted, Answer, Cancelled, Declined, FormAnswer
    from mcp_elicit.server.results import Audio, Blob, Image

__version__ = "0.1.0"

_WHERE = {
    "Accepted": "mcp_elicit.server.questions",
    "Answer": "mcp_elicit.server.questions",
    "Audio": "mcp_elicit.server.results",
    "Blob": "mcp_elicit.server.results",
    "Boolean": "mcp_elicit.forms",
    "Cancelled": "mcp_elicit.server.questions",
    "Choice": "mcp_elicit.forms",
    "Context": "mcp_elicit.server.context",
    "Declined": "mcp_elicit.server.questions",
    "Field": "mcp_elicit.forms",
    "Form": "mcp_elicit.forms",
    "FormAnswer": "mcp_elicit.server.questions",
    "FormSchema": "mcp_elicit.forms",
    "Image": "mcp_elicit.server.results",
    "Integer": "mcp_elicit.forms",
    "KeyRing": "mcp_elicit.sealing",
    "MultiChoice": "mcp_elicit.forms",
    "Number": "mcp_elicit.forms",
    "Principal": "mcp_elicit.server.auth",
    "RateLimited": "mcp_elicit.errors",
    "Server": "mcp_elicit.server.app",
    "StaticTokens": "mcp_elicit.server.auth",
    "String": "mcp_elicit.forms",
    "TokenVerifier": "mcp_elicit.server.auth",
    "ToolError": "mcp_elicit.errors",
}

__all__ = [
    "Accepted",
    "Answer",
    "Audio",
    "Blob",
    "Boolean",
    "Cancelled",
    "Choice",
    "Context",
    "Declined",
    "Field",
    "Form",
    "FormAnswer",
    "FormSchema",
    "Image",
    "Integer",
    "KeyRing",
    "MultiChoice",
    "Number",
    "Principal",
    "RateLimited",
    "Server",
    "StaticTokens",
    "String",
    "TokenVerifier",
    "ToolError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_elicit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
