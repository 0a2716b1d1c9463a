"""A stdio server ended by a signal (killed by the OOM killer, a ``kill -9``): the request in
flight fails naming the signal, not as "exited with code -9", which reads like an exit
status the server chose."""

from __future__ import annotations

import sys

import pytest

from mcp_elicit.errors import TransportError
from mcp_elicit.transports.stdio_client import connect_stdio

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]

KILLS_ITSELF = [
    sys.executable,
    "-c",
    "import os, signal, sys; sys.stdin.readline(); os.kill(os.getpid(), signal.SIGKILL)",
]


async def test_a_server_killed_by_a_signal_is_said_to_be_killed_by_it() -> None:
    with pytest.raises(TransportError) as caught:
        async with connect_stdio(KILLS_ITSELF, timeout=20, probe_timeout=20):
            pass
    said = str(caught.value)
    assert "was killed by signal 9 (SIGKILL)" in said, said
    assert "code -9" not in said, said
