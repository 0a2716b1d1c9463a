"""The command line program's errors: each ends it with its ``exit_code``. Importable
from ``mcp_elicit.errors``."""

from __future__ import annotations

from mcp_elicit.errors.base import MCPElicitError

__all__ = ["CannotConnect", "CheckFailed", "CliError", "ServerBrokeProtocol", "UsageError"]


class CliError(MCPElicitError):
    """An error that ends the command line program with ``exit_code``."""

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CliError):
    """A command line that cannot work: a bad TARGET, option or argument (exit 2)."""

    exit_code = 2


class CheckFailed(CliError):
    """The server answered, but something it said is wrong: a tool definition, an error
    where a result belongs, a tool result marked ``isError`` (exit 1)."""

    exit_code = 1


class CannotConnect(CliError):
    """No conversation with the server: nothing listening, TLS, authorization, a wrong
    path, a command that does not start or exits (exit 3)."""

    exit_code = 3


class ServerBrokeProtocol(CliError):
    """The server broke the protocol: a malformed or impossible answer, something other
    than JSON-RPC on stdio's stdout, no revision in common (exit 4)."""

    exit_code = 4
