"""The root of mcp-elicit's exception tree, and the errors of a server's own code or
configuration: a tool's failure reported on purpose, a handler that asked something else
on replay, a configuration that cannot work. Importable from ``mcp_elicit.errors``."""

from __future__ import annotations

__all__ = ["ConfigError", "MCPElicitError", "ReplayMismatchError", "ToolError"]


class MCPElicitError(Exception):
    """Base class of every error mcp-elicit raises."""


class ReplayMismatchError(MCPElicitError):
    """On replay, a handler asked something other than what the recorded round asked: a
    bug in the handler (its questions must not depend on anything but its arguments and
    earlier answers); the request fails instead of mixing up answers."""


class ToolError(MCPElicitError):
    """Raise inside a tool to fail it with this message as an ``isError`` result."""


class ConfigError(MCPElicitError):
    """Invalid configuration: a key file, an address, an option."""
