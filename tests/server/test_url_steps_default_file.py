"""``complete_elicitation`` with no store configured, in a process that never opened the
default file itself (a payment webhook's worker): the completion goes into the default
file when it exists. A default file that cannot be looked at is said in the log, never
raised into the webhook."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from mcp_elicit import KeyRing, Server

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])


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
