"""A library caller of ``connect_stdio`` gets the secrets a server's command gives it
(``--token T``, ``API_KEY=K``) REDACTED where the server repeats them: in the tail of its
stderr that the exit message quotes, in the warnings about its stdout's lines that are
not JSON-RPC, and in the note that ends the error. The command line does the same
(``cli.targets``); both use ``command_redaction.redact_secrets``."""

from __future__ import annotations

import logging
import sys

import pytest

from mcp_elicit.errors import TransportError
from mcp_elicit.transports.stdio_client import connect_stdio

pytestmark = pytest.mark.anyio

SECRET = "sk-Lib7hidden9kept"
#: Says its command line on stderr and on stdout (a banner), then exits before answering.
_TELLS = (
    "import sys\n"
    "print('refused token', sys.argv[2], file=sys.stderr, flush=True)\n"
    "print('starting with', *sys.argv[1:], flush=True)\n"
    "sys.exit(3)\n"
)


async def test_a_token_the_server_repeats_stays_out_of_the_exit_message_and_the_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit.stdio_client")
    command = [sys.executable, "-c", _TELLS, "--token", SECRET, "--name", "name"]
    with pytest.raises(TransportError) as caught:
        async with connect_stdio(command, timeout=10, probe_timeout=10):
            pass
    said = str(caught.value)
    assert "exited with code 3" in said, said
    assert "refused token REDACTED" in said, said  # the stderr tail
    assert "starting with --token REDACTED --name name" in said, said  # the note on stdout's line
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "starting with --token REDACTED" in logged, logged
    assert SECRET not in said + logged


async def test_a_short_value_is_hidden_as_a_word_of_the_servers_not_inside_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``--key name``: the server's "name" is hidden, its "names" and "renamed" kept."""
    caplog.set_level(logging.WARNING, "mcp_elicit.stdio_client")
    tells = "import sys; print('names', 'renamed;', 'no', 'name', file=sys.stderr); sys.exit(2)"
    with pytest.raises(TransportError) as caught:
        async with connect_stdio(
            [sys.executable, "-c", tells, "--key", "name"], timeout=10, probe_timeout=10
        ):
            pass
    said = str(caught.value)
    assert "--key REDACTED" in said, said
    tail = said.rpartition("the end of its stderr:")[2]
    assert tail.strip() == "names renamed; no REDACTED", said
