"""What the tests of ``mcp-elicit call`` share: the revisions they run at, and the command that
serves the conformance server over stdio."""

from __future__ import annotations

from cli.helpers import demo_stdio

from support.procs import ROOT

REVISIONS = ["2026-07-28", "2025-11-25"]
CONFORMANCE_STDIO = [*demo_stdio()[:-1], str(ROOT / "examples" / "conformance_server.py")]
