"""A stdio server ended by a signal (killed by the OOM killer, a ``kill -9``): the request in
flight fails naming the signal, not as "exited with code -9", which reads like an exit
status the server chose. A server started through a shell (``sh -c '...; exit $?'``)
is reported by it as 128 + the signal: that code is said to be how a signal is
reported, not taken for the server's own choice."""

from __future__ import annotations

import shlex
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


# A shell that runs the server as its child, as `sh -c '...; exit $?'` or a launcher does: the
# server is killed, the shell exits 128 + 9.
SHELL_AROUND_IT = ["sh", "-c", f"{shlex.join(KILLS_ITSELF)}; exit $?"]


async def test_a_server_killed_under_a_shell_is_said_to_be_128_plus_the_signal() -> None:
    with pytest.raises(TransportError) as caught:
        async with connect_stdio(SHELL_AROUND_IT, timeout=20, probe_timeout=20):
            pass
    said = str(caught.value)
    assert "exited with code 137 (128 + 9: how a shell or launcher reports SIGKILL" in said, said
