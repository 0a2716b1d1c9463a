"""``complete_elicitation`` in a process that never started the server (a payment
webhook's), configured with a store URL that cannot be used: the call returns, and the
log says the completion was not recorded, naming the step and why. A webhook's code calls
it as a plain function, and a store is opened only for the write, on the event loop."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit import KeyRing, Server

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("bogus://x", "expected memory://"),
        ("sqlite://", "no database file"),
        ("redis://u:hunter2@:6379/0", "no host"),
    ],
)
async def test_a_store_url_that_cannot_be_used_is_logged_not_raised(
    url: str, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = Server("shop", state_keys=KEYS, store=url)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.server"):
        assert app.complete_elicitation("pay-1", "alice") is False, "no session here asked it"
        await app.url_mode.close()  # the write under way ends first
    assert "'pay-1' could not be recorded" in caplog.text
    assert why in caplog.text, caplog.text
    assert "hunter2" not in caplog.text
