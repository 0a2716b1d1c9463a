"""Where ``mcp-elicit`` (the console script) and ``python -m mcp_elicit`` start: the
command line's module (``cli.main``) is imported here, inside the ``try`` that takes a
Ctrl-C meanwhile.

Rules: importing ``cli.main`` takes a moment (asyncio, argparse, logging); a Ctrl-C then
ends the command as one a moment later does (``cli.main``): exit 130 and no traceback, and
with ``--json`` among the words before ``--``, the JSON object saying so. This module
imports nothing but ``sys`` before that ``try``, and ``mcp_elicit/__init__.py`` nothing
Python has not loaded already, so the moments no code of ours can catch a Ctrl-C in are as
few as Python allows.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

#: The exit code of a command stopped by Ctrl-C: 128 + SIGINT.
_INTERRUPTED = 130


def main() -> int:
    """Run the command line (``sys.argv``); its exit code."""
    try:
        from mcp_elicit.cli.main import main as run
    except KeyboardInterrupt:
        return _stopped_at_import(sys.argv[1:])
    return run()


def _stopped_at_import(argv: list[str]) -> int:
    """The end of a command stopped while ``cli.main`` was imported; for ``--json``, that
    module is imported again to print the object a later Ctrl-C prints (a second Ctrl-C
    meanwhile just stops)."""
    if "--json" not in argv:  # nothing to print: nothing more to import
        return _INTERRUPTED
    try:
        from mcp_elicit.cli.main import stopped_at_start

        return stopped_at_start(argv)
    except KeyboardInterrupt:
        return _INTERRUPTED
