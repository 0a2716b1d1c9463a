"""``serve --http HOST:PORT`` binds its address before the server starts: an address that
cannot be bound (a port another program holds, a host that is not this machine's, a name
that does not resolve) stops it with one line saying why and what to do (exit 2), and
nothing of the server's has run: its lifespan (a database pool, say) was never entered.
Real ``mcp-elicit serve`` processes, on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.procs import ROOT, free_port, refused_at_start

SERVER = ROOT / "tests" / "transports" / "lifespan_server.py"


@pytest.fixture
def events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the server's lifespan writes its entry to (tests/transports/lifespan_server.py)."""
    path = tmp_path / "events"
    monkeypatch.setenv("LIFESPAN_EVENTS", str(path))
    for name in ("LIFESPAN_FAIL", "LIFESPAN_HANG"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def held_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield int(other.getsockname()[1])


def serve(address: str) -> str:
    """``serve`` at ``address``, refused at start (exit 2): what it said."""
    done = refused_at_start(["serve", str(SERVER), "--http", address, "--store", "memory://"], address)
    return done.stderr


def test_a_port_in_use_is_said_and_the_lifespan_never_entered(events: Path, held_port: int) -> None:
    said = serve(f"127.0.0.1:{held_port}")
    assert (
        f"mcp-elicit: 127.0.0.1:{held_port} is in use by another program: give another port "
        "(--http 127.0.0.1:PORT), or stop what listens there"
    ) in said, said
    assert not events.exists()  # the pool was not opened, not even for a moment


def test_a_host_that_does_not_resolve_is_named(events: Path) -> None:
    said = serve(f"no-such-host.invalid:{free_port()}")
    assert "mcp-elicit: cannot listen on no-such-host.invalid:" in said, said
    assert "the host 'no-such-host.invalid' is not found" in said, said
    assert "cleartext" not in said  # no warning about links to a server that does not serve
    assert not events.exists()


def test_an_address_of_another_machine_is_said_to_be_one(events: Path) -> None:
    said = serve(f"192.0.2.1:{free_port()}")  # TEST-NET-1: no machine's own
    assert "mcp-elicit: cannot listen on 192.0.2.1:" in said, said
    assert "192.0.2.1 is not an address of this machine" in said, said
    assert not events.exists()
