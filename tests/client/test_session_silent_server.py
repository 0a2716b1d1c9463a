"""A stdio server that never answers: the client asks ``server/discover``, waits its probe
timeout, falls back to ``initialize`` and waits its timeout again; the error names both
waits, so the time the person saw pass matches what they are told."""

from __future__ import annotations

import sys

import pytest

from mcp_elicit.errors import RequestTimeout
from mcp_elicit.transports.stdio_client import connect_stdio

pytestmark = pytest.mark.anyio

SILENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]


async def test_a_silent_server_is_told_to_have_missed_both_the_probe_and_initialize() -> None:
    with pytest.raises(RequestTimeout) as caught:
        async with connect_stdio(SILENT, timeout=0.75, probe_timeout=0.5):
            pass
    said = str(caught.value)
    assert "to server/discover within 0.5 s" in said, said
    assert "nor to initialize within 0.75 s" in said, said


async def test_a_silent_server_offered_only_handshake_revisions_is_told_of_initialize_only() -> None:
    with pytest.raises(RequestTimeout) as caught:
        async with connect_stdio(SILENT, timeout=0.5, versions=["2025-11-25"]):
            pass
    assert "server/discover" not in str(caught.value)
