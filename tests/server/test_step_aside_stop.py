"""The completions set aside (``server/step_aside.py``: a user's own store failing for one
key) when the server stops with the store down: two of them failing in a row say the store
is down, and the others are given up at once, in one warning, rather than each waiting on
a store that does not answer (a Redis that went silent: up to its socket timeout each, so
a stop that took hours with many set aside)."""

from __future__ import annotations

import functools
import logging

import pytest

from mcp_elicit import KeyRing, Server
from mcp_elicit.server import step_records, url_steps
from mcp_elicit.server.url_steps import StepCompletions
from mcp_elicit.stores import MemoryStore

from support.waiting import HOURS, eventually, hang_guard

pytestmark = pytest.mark.anyio

KEYS = KeyRing([bytes(range(40, 72))])
ASIDE = 12
SET_ASIDE = "though the store takes the completions behind it"


class ShardsFail(MemoryStore):
    """A user's own store whose disk refuses the markers of some steps (``refusing``), or of
    every step once ``down``; counting the markers' writes tried."""

    def __init__(self, refusing: set[str]) -> None:
        super().__init__()
        self.refusing = refusing
        self.down = False
        self.tries = 0

    async def put(self, namespace: str, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if namespace == url_steps.NAMESPACE:
            self.tries += 1
            if self.down or key in self.refusing:
                raise OSError(5, "Input/output error")
        await super().put(namespace, key, value, ttl=ttl)


async def test_a_stop_with_the_store_down_gives_up_those_set_aside_without_trying_each(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_records, "RETRY_FIRST", HOURS)  # no retry of theirs before the stop
    bad = [f"bad-{n}" for n in range(ASIDE)]
    good = [f"pay-{n}" for n in range(ASIDE)]
    store = ShardsFail({url_steps._key(step, "alice") for step in bad})
    reader = StepCompletions(store, ttl=600.0)
    app = Server("shop", state_keys=KEYS, store=store)
    await app.start()
    try:
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit.server"):
            for failing, written in zip(bad, good, strict=True):
                app.complete_elicitation(failing, "alice")
                app.complete_elicitation(written, "alice")

            async def all_written() -> bool:
                return all([await reader.marker(step, "alice") for step in good])

            await eventually(all_written, "the completions behind the failing ones written")
            await eventually(
                lambda: len([r for r in caplog.records if SET_ASIDE in r.getMessage()]) == ASIDE,
                "every failing one set aside",
            )
            store.down, store.tries = True, 0  # the whole store fails now
            async with hang_guard("the stop"):
                await app.stop()
        assert store.tries == 2, f"{store.tries} writes tried at the stop, the store being down"
        given_up = "\n".join(
            r.getMessage()
            for r in caplog.records
            if r.levelno == logging.WARNING and "given up: the server is stopping" in r.getMessage()
        )
        assert all(f"'{step}'" in given_up for step in bad), caplog.text
        assert len(given_up.splitlines()) == 3, given_up  # the two tried, then the rest at once
    finally:
        await app.stop()


async def test_the_retries_of_one_set_aside_write_no_store_outage_each(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its further failures are said at DEBUG only: the server's view of its store
    (``Guarded``) said each as an outage begun (ERROR) and ended by the next write of
    another completion (INFO), a pair a retry, some twenty-five in its ten minutes."""
    monkeypatch.setattr(step_records, "RETRY_FIRST", 0.01)
    monkeypatch.setattr(step_records, "RETRY_MOST", 0.02)
    monkeypatch.setattr(step_records, "RETRY_FOR", 0.5)  # its bound, made short
    store = ShardsFail({url_steps._key("bad", "alice")})
    reader = StepCompletions(store, ttl=600.0)
    app = Server("shop", state_keys=KEYS, store=store)
    await app.start()
    try:
        with caplog.at_level(logging.DEBUG, logger="mcp_elicit"):
            app.complete_elicitation("bad", "alice")
            made = 0
            async with hang_guard("the failing one given up at its bound"):
                while "given up: tried for 0.5 s" not in caplog.text:  # others made meanwhile
                    made += 1
                    step = f"pay-{made}"
                    app.complete_elicitation(step, "alice")
                    await eventually(functools.partial(reader.marker, step, "alice"), "a later one written")
            retries = [r for r in caplog.records if "'bad' still fails" in r.getMessage()]
            assert len(retries) >= 2, "not tried again on its own"
            outages = [
                r for r in caplog.records if r.name == "mcp_elicit.stores" and r.levelno >= logging.ERROR
            ]
            assert len(outages) == 1, "\n".join(r.getMessage() for r in outages)  # its first failure only
    finally:
        await app.stop()
