"""``complete_elicitation`` with no store configured, in a process that never opened the
default file itself (a payment webhook's worker): the completion goes into the default
file when it exists. A burst of webhook calls shares one connection to it rather than
opening the file once per call (a process's file handles are few), and a default file
that cannot be looked at is said in the log, never raised into the webhook."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import default_store_url, open_store

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])
BURST = 200

# A webhook's worker allowed 64 open files, completing BURST steps at once.
WEBHOOK = """
import asyncio, resource, sys
from mcp_elicit import KeyRing, Server

resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

async def main() -> None:
    app = Server("shop", state_keys=KeyRing([bytes(range(40, 72))]))
    for n in range(int(sys.argv[1])):
        app.complete_elicitation(f"pay-{n}", "alice")
    await app.url_mode.close()

asyncio.run(main())
"""


@pytest.mark.skipif(sys.platform.startswith("win"), reason="RLIMIT_NOFILE is POSIX")
async def test_a_burst_of_completions_reaches_the_file_another_process_has_open() -> None:
    """This process holds the default file open (it asked the steps); the webhook's
    process records every completion, whatever the number of calls at once."""
    holder = open_store(default_store_url())
    steps = StepCompletions(holder, ttl=600.0)
    try:
        assert await steps.marker("pay-0", "alice") == "", "the file is made, nothing completed yet"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        webhook = await asyncio.create_subprocess_exec(
            sys.executable, "-c", WEBHOOK, str(BURST), env=env, stderr=asyncio.subprocess.PIPE
        )
        _, errors = await asyncio.wait_for(webhook.communicate(), 120)
        said = errors.decode(errors="replace")
        assert webhook.returncode == 0, said
        assert "could not be recorded" not in said, said
        missing = [n for n in range(BURST) if not await steps.marker(f"pay-{n}", "alice")]
        assert missing == [], f"{len(missing)} completions of {BURST} were lost"
    finally:
        await holder.close()


@pytest.mark.skipif(sys.platform.startswith("win"), reason="the data directory is moved by XDG_DATA_HOME")
async def test_a_default_file_that_cannot_be_looked_at_is_logged_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The data directory's path cannot be looked at (here a name longer than the system
    allows; another user's directory is the same for everyone but root): the webhook's
    call returns, and the log says the completion was not recorded, and why."""
    unreachable = tmp_path / ("d" * 300)
    monkeypatch.setenv("HOME", str(unreachable))
    monkeypatch.setenv("XDG_DATA_HOME", str(unreachable))
    app = Server("shop", state_keys=KEYS)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        assert app.complete_elicitation("pay-1", "alice") is False, "no session here asked it"
        await app.url_mode.close()
    assert "'pay-1' could not be recorded" in caplog.text
    assert "mcp-elicit" in caplog.text, "the message names the file"
