"""``serve --http HOST:PORT`` binds its address before the server starts: an address that
cannot be bound (a port another program holds, a host that is not this machine's, a name
that does not resolve) stops it with one line saying why and what to do (exit 2), and
nothing of the server's has run: its lifespan (a database pool, say) was never entered.
An address it can bind is bound as uvicorn would bind it: a restart right after a stop
binds over the last run's connections, a name giving an address this machine lacks is
served on its others, and the port is not shared on Windows. Real ``mcp-elicit serve``
processes on 127.0.0.1, and ``listen_on`` in process (real binds; a name's addresses given)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcp_elicit.cli import address as addresses
from mcp_elicit.errors import CliError

from support.procs import ROOT, STOP_TIMEOUT, cli, free_port, http_process, refused_at_start, wait_listening

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


def test_a_restart_right_after_a_stop_binds_the_same_port(events: Path, tmp_path: Path) -> None:
    # the stop closes a client's keep-alive connection from the server's side, which leaves
    # that connection in TIME_WAIT on the server's port: the next run binds over it
    with http_process(SERVER, log_dir=tmp_path) as served:
        client = socket.create_connection(("127.0.0.1", served.port))
        client.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode())
        client.settimeout(STOP_TIMEOUT)
        assert client.recv(9) == b"HTTP/1.1 ", served.stderr()
        port = served.port
    while client.recv(4096):  # to the end the server's stop gave it: the server closed first
        pass
    client.close()
    with (tmp_path / "again.stderr").open("wb") as err:
        again = subprocess.Popen(
            [*cli(), "serve", str(SERVER), "--http", f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        listening = wait_listening(again, port)
    finally:
        again.terminate()
        again.wait(STOP_TIMEOUT)
    said = (tmp_path / "again.stderr").read_text()
    assert listening and "in use" not in said, said


# ---- listen_on itself, in process: the sockets it gives uvicorn --------------------------


def resolving(monkeypatch: pytest.MonkeyPatch, *given: tuple[socket.AddressFamily, str]) -> None:
    """The name given to ``listen_on`` resolves to ``given`` (the binds stay real)."""

    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list[Any]:
        found: list[Any] = []
        for family, where in given:
            sockaddr = (where, port, 0, 0) if family == socket.AF_INET6 else (where, port)
            found.append((family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr))
        return found

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_name_with_an_address_this_machine_lacks_is_served_on_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # localhost in a container without IPv6: /etc/hosts gives ::1 too, which cannot be bound;
    # asyncio (uvicorn's own bind, from Python 3.12) serves on 127.0.0.1 alone, as serve does
    # (2001:db8::1, a documentation address, stands for the ::1 this machine lacks)
    resolving(monkeypatch, (socket.AF_INET6, "2001:db8::1"), (socket.AF_INET, "127.0.0.1"))
    port = free_port()
    sockets = addresses.listen_on("localhost", port)
    try:
        assert [sock.getsockname() for sock in sockets] == [("127.0.0.1", port)]
    finally:
        for sock in sockets:
            sock.close()


def test_a_name_whose_addresses_are_all_another_machines_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    resolving(monkeypatch, (socket.AF_INET6, "2001:db8::1"), (socket.AF_INET, "192.0.2.1"))
    with pytest.raises(CliError, match=r"gone\.invalid is not an address of this machine") as refused:
        addresses.listen_on("gone.invalid", free_port())
    assert refused.value.exit_code == 2


def test_on_windows_the_port_is_not_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    # SO_REUSEADDR on Windows lets another program bind the same port while this one
    # listens (and hides that it is in use): asyncio sets it on POSIX only, as serve does
    for platform, reused in (("posix", True), ("nt", False)):
        monkeypatch.setattr(addresses, "os", SimpleNamespace(name=platform))
        sockets = addresses.listen_on("127.0.0.1", free_port())
        try:
            assert bool(sockets[0].getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)) is reused, platform
        finally:
            for sock in sockets:
                sock.close()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            "http://127.0.0.1:8030/mcp",
            "--http takes HOST:PORT, not a URL or a path: give 127.0.0.1:8030 "
            "(the server answers at http://127.0.0.1:8030/mcp)",
        ),
        ("127.0.0.1:8030/mcp", "give 127.0.0.1:8030 (the server answers at http://127.0.0.1:8030/mcp)"),
        ("http://[::1]:8030/tools/mcp", "give [::1]:8030, and --path /tools/mcp"),
        ("https://mcp.example.com/mcp", "give the address to listen on, such as 127.0.0.1:8000"),
        ("8001", "give 127.0.0.1:8001 (this machine only) or 0.0.0.0:8001 (every interface)"),
        ("localhost", "--http needs HOST:PORT, not 'localhost': give localhost:8000, say"),
        ("a:b:8000", "'a:b' is neither a host name nor an address"),
        # a port alone out of range is refused as such, not offered back as 127.0.0.1:0
        ("0", "--http: port 0 is not in 1-65535"),
        ("70000", "--http: port 70000 is not in 1-65535"),
        # an IPv6 address alone: its last group is no port (::1 once read as host ':')
        ("::1", "not '::1', an IPv6 address alone: give [::1]:8000, say"),
        ("[::1]", "not '[::1]', an IPv6 address alone: give [::1]:8000, say"),
        ("fe80::1", "not 'fe80::1', an IPv6 address alone: give [fe80::1]:8000, say"),
        ("::", "not '::', an IPv6 address alone: give [::]:8000, say"),
    ],
)
def test_an_address_given_as_a_url_a_port_or_a_host_says_what_to_give(value: str, said: str) -> None:
    with pytest.raises(CliError) as refused:
        addresses.split_address(value)
    assert refused.value.exit_code == 2
    assert said in str(refused.value), str(refused.value)


@pytest.mark.parametrize(
    ("value", "address"),
    [("127.0.0.1:8000", ("127.0.0.1", 8000)), ("[::1]:8000", ("::1", 8000)), ("::1:8000", ("::1", 8000))],
)
def test_an_address_is_split_as_before(value: str, address: tuple[str, int]) -> None:
    assert addresses.split_address(value) == address
    assert addresses.split_address(f":{address[1]}") == ("127.0.0.1", address[1])


def test_the_server_url_given_to_http_is_one_line_not_a_traceback(events: Path) -> None:
    """The URL ``serve`` prints is what a person pastes back: it once reached the public
    URL's check as a host and ended in a ConfigError traceback."""
    port = free_port()
    said = serve(f"http://127.0.0.1:{port}")
    assert said.strip() == (
        f"mcp-elicit: --http takes HOST:PORT, not a URL or a path: give 127.0.0.1:{port} "
        f"(the server answers at http://127.0.0.1:{port}/mcp)"
    ), said
    assert not events.exists()


@pytest.mark.parametrize("host", ["[fe80::1%lo]", "bücher.example"])
def test_a_host_no_page_link_can_name_is_one_line_not_a_traceback(events: Path, host: str) -> None:
    """The public URL is derived from the address before it is bound: a host it cannot be
    written with (an IPv6 zone id, a non-ASCII name) once ended in a ConfigError traceback."""
    said = serve(f"{host}:{free_port()}")
    assert "Traceback" not in said, said
    assert f"mcp-elicit: --http {host}:" in said, said
    assert "give the URL clients reach this server at with --public-url" in said, said
    assert len(said.strip().splitlines()) == 1, said
    assert not events.exists()
