"""``stores.closed_loops.shut_down`` on a connection whose event loop is closed, on
asyncio's own loop and on uvloop's (the one ``mcp-elicit serve`` runs): it never raises,
and the peer sees the connection end (on uvloop, whose socket is out of reach once its
loop is closed, when the collector frees it). uvloop's transport gives a stand-in socket
that refuses ``shutdown``: the ``TypeError`` it raised escaped, so a Redis store used on
a new loop after a uvloop loop closed failed every call, and its close raised."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Callable

import pytest

from mcp_elicit.stores.closed_loops import shut_down

from support.waiting import HANG_GUARD

uvloop = pytest.importorskip("uvloop")

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}


@pytest.mark.parametrize("make_loop", LOOPS.values(), ids=LOOPS.keys())
@pytest.mark.filterwarnings("ignore::ResourceWarning")  # uvloop's close names the transport it left
def test_a_connection_of_a_closed_loop_is_shut_down_quietly(
    make_loop: Callable[[], asyncio.AbstractEventLoop],
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(HANG_GUARD)
        loop = make_loop()
        try:
            _, writer = loop.run_until_complete(asyncio.open_connection(*listener.getsockname()[:2]))
            peer, _ = listener.accept()
            assert writer.get_extra_info("socket") is not None  # read while open, as redis-py does
        finally:
            loop.close()  # the connection left open on it
        with peer:
            peer.settimeout(HANG_GUARD)
            shut_down(writer)  # raised TypeError on uvloop
            del writer
            gc.collect()
            assert peer.recv(16) == b"", "the peer still sees the connection open"
