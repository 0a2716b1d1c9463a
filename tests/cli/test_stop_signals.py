"""The signals that stop a client command as Ctrl-C does (``cli.stop_signals``)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator

import pytest

from mcp_elicit.cli import stop_signals

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no SIGHUP on Windows")


@pytest.fixture
def handlers() -> Iterator[None]:
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGHUP, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_sighup_and_sigterm_stop_a_command_and_get_their_handlers_back(handlers: None) -> None:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    with stop_signals.stopping():
        assert signal.getsignal(signal.SIGHUP) is stop_signals.interrupt
        assert signal.getsignal(signal.SIGTERM) is stop_signals.interrupt
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL


def test_an_ignored_sighup_stays_ignored(handlers: None) -> None:
    # nohup: the person asked for the command to outlive its terminal
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with stop_signals.stopping():
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_the_exit_code_and_words_follow_the_first_stop_signal() -> None:
    stop_signals.terminated.clear()
    try:
        assert (stop_signals.exit_code(), stop_signals.said()) == (130, "interrupted (Ctrl-C)")
        stop_signals.terminated.extend([signal.SIGHUP, signal.SIGTERM])
        assert (stop_signals.exit_code(), stop_signals.said()) == (129, "hung up (SIGHUP)")
    finally:
        stop_signals.terminated.clear()
