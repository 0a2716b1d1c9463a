"""stdio, client side: the lines a server wrote to stdout that are not JSON-RPC (a banner,
``print`` debugging, a program that is no MCP server at all, such as ``yes``).

Rules:

* The log hears of a bounded number of them, however many come: the first ``LOUD`` each
  get a warning of their own (the line quoted, the secrets its command gives shown
  REDACTED (``command_redaction.redact_secrets``: a banner repeating its ``--token``) and
  its URLs redacted (``redact_urls``: a banner's database URL keeps no password), then cut
  to ``QUOTED`` characters); the one after
  them a warning that further lines are counted, not logged; then, while they keep
  coming, a warning with the count so far, ``EVERY`` seconds after that one at the
  soonest, each next wait twice the last, up to ``EVERY_MOST``. A server writing a million
  lines costs a handful of log records, not a million, and one writing a line a second
  for a day some 150 (not 8,640).
* Every such line is counted and the first is kept (redacted, its first ``QUOTED`` characters):
  ``note`` says so as a sentence for the error of a request that then fails (the server
  exited, the request timed out, the revision probe got no answer): how many lines, the
  first one quoted inert (``repr``: control characters, a terminal's escape among them,
  are shown by their code) and cut short, and that a stdio server writes only JSON-RPC
  messages to stdout and logs to stderr.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from mcp_elicit.command_redaction import redact_secrets
from mcp_elicit.url_redaction import redact_urls

__all__ = ["EVERY", "EVERY_MOST", "LOUD", "QUOTED", "StdoutNoise", "wrote_lines"]

#: How many lines that are not JSON-RPC each get a warning of their own.
LOUD: Final = 5
#: The most seconds between two warnings counting the lines not logged.
EVERY: Final = 10.0
#: The longest wait between two counts: each one doubles the wait, from ``EVERY`` up to this.
EVERY_MOST: Final = 600.0
#: The most bytes of a line quoted (in the log and in ``note``).
QUOTED: Final = 120


class StdoutNoise:
    """Counts one server process's lines that are not JSON-RPC and warns of them, bounded."""

    def __init__(self, where: str, log: logging.Logger, clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        self.count = 0
        #: The start of the first line that was not JSON-RPC, its URLs redacted (None before one came).
        self.first: str | None = None
        self._log = log
        self._clock = clock
        self._told = 0.0
        self._wait = EVERY
        #: The secrets the server's command gives it (``command_redaction.secret_values``),
        #: hidden where a line repeats them.
        self.secrets: tuple[str, ...] = ()

    def line(self, line: bytes, why: Exception) -> None:
        """One more line that is not JSON-RPC (``why``: what was wrong with it)."""
        self.count += 1
        if self.first is None or self.count <= LOUD:
            said = line.decode("utf-8", errors="replace")
            said = redact_urls(redact_secrets(said, self.secrets))  # before any cut
            self.first = said[: QUOTED + 1] if self.first is None else self.first
        if self.count <= LOUD:
            self._log.warning(
                "%s wrote a line that is not JSON-RPC (%s); skipped: %r", self.where, why, said[:QUOTED]
            )
        elif self.count == LOUD + 1:
            self._told = self._clock()
            self._log.warning(
                "%s keeps writing lines that are not JSON-RPC to stdout; further ones are counted, not "
                "logged (a count now and then while they come)",
                self.where,
            )
        elif (now := self._clock()) - self._told >= self._wait:
            self._told = now
            self._wait = min(self._wait * 2, EVERY_MOST)
            self._log.warning("%s has written %d lines that are not JSON-RPC so far", self.where, self.count)

    def note(self) -> str:
        """A sentence about the lines, to end an error with; "" when there were none."""
        if self.first is None:
            return ""
        quoted = repr(self.first[:QUOTED]) + ("..." if len(self.first) > QUOTED else "")
        return (
            f"; the server {wrote_lines(self.count)} (the first: {quoted}): a stdio server writes only "
            "JSON-RPC messages to stdout, and its log to stderr"
        )


def wrote_lines(count: int) -> str:
    """What a server did, ``count`` lines that are not JSON-RPC on its stdout, as a message
    says it ("wrote 3 lines to stdout that are not JSON-RPC"); ``note`` and the CLI's."""
    lines = "a line" if count == 1 else f"{count} lines"
    return f"wrote {lines} to stdout that {'is' if count == 1 else 'are'} not JSON-RPC"
