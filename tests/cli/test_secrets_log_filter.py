"""While ``cli.targets.connect`` is connected, the log's handlers show each record without
the secrets the TARGET gave (``_Unechoed``): a record logging cannot format is still only
reported by logging, never raised at the code that logged it, and the filter is gone from
the handlers once the connection ends, however it ends. A real stdio server."""

from __future__ import annotations

import asyncio
import io
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_elicit.cli.targets import Observed, Target, connect

pytestmark = pytest.mark.anyio

SECRET = "sk-Filt7hidden9kept"
DEMO = str(Path(__file__).resolve().parents[2] / "examples" / "demo_server.py")
#: The demo server, started with a secret in its environment (``env API_KEY=...``).
TARGET = Target(command=("env", f"API_KEY={SECRET}", sys.executable, "-m", "mcp_elicit", "serve", DEMO))


@pytest.fixture
def handler() -> Iterator[logging.StreamHandler[io.StringIO]]:
    """A handler of the root logger, as the command line's own (``main._client_logging``)."""
    shown = logging.StreamHandler(io.StringIO())
    root = logging.getLogger()
    root.addHandler(shown)
    try:
        yield shown
    finally:
        root.removeHandler(shown)


async def test_a_record_logging_cannot_format_is_reported_not_raised(
    handler: logging.StreamHandler[io.StringIO], monkeypatch: pytest.MonkeyPatch
) -> None:
    reported: list[logging.LogRecord] = []
    monkeypatch.setattr(handler, "handleError", reported.append)
    log = logging.getLogger("tests.secrets_log_filter")

    def said(msg: str, *args: object) -> logging.LogRecord:
        return log.makeRecord(log.name, logging.WARNING, __file__, 0, msg, args, None)

    async with connect(TARGET, answerer=None, observed=Observed(), timeout=30):
        handler.handle(said("one %s, two %s", 1))  # logging's own: "--- Logging error ---", then on
        handler.handle(said("the token %s", SECRET))
    assert [record.msg for record in reported] == ["one %s, two %s"]
    assert handler.stream.getvalue() == "the token REDACTED\n"


@pytest.mark.parametrize("how", ["raised", "cancelled"])
async def test_the_filter_is_gone_once_the_connection_ends(
    handler: logging.StreamHandler[io.StringIO], how: str
) -> None:
    before = list(handler.filters)
    inside = asyncio.Event()

    async def connected() -> None:
        async with connect(TARGET, answerer=None, observed=Observed(), timeout=30):
            assert len(handler.filters) == len(before) + 1
            if how == "raised":
                raise LookupError("the body failed")
            inside.set()
            await asyncio.Event().wait()  # until cancelled

    task = asyncio.ensure_future(connected())
    if how == "cancelled":
        async with asyncio.timeout(60):  # not forever, should the connection fail first
            await inside.wait()
        task.cancel()
    with pytest.raises(LookupError if how == "raised" else asyncio.CancelledError):
        await task
    assert handler.filters == before
    logging.getLogger("tests.secrets_log_filter").warning("the token %s", SECRET)
    assert handler.stream.getvalue().endswith(f"the token {SECRET}\n")  # no longer connected: as said
