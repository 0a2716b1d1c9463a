"""The client's sign-in (transports/http_auth.py) when names resolve: a server elsewhere
may not lead the flow to a host name that resolves to this machine or a private network
(server-side request forgery by DNS, or DNS rebinding), and each connection goes to the
address that was checked (``transports.http_pinned``).

A real protected server and authorization server (``support.named_site``) speak https on
127.0.0.1 with a certificate for the test's names, trusted through ``SSL_CERT_FILE``; the
test's DNS (``Dns``) says where each name is. The MCP requests
themselves go in process (``httpx.ASGITransport``: an answer that does not say where it
came from, so the server's URL alone says where it is), or over a real connection where a
test needs the server's address known.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_pinned import PinnedBackend, PinnedTransport

from support.named_site import (
    Browser,
    Dns,
    Site,
    allow_all,
    call,
    in_process,
    named_site,
    reaching,
    trust_names,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    return trust_names(tmp_path, monkeypatch)


@pytest.fixture
async def site(certificate: tuple[str, str]) -> AsyncIterator[Site]:
    async with named_site(certificate) as site:
        yield site


async def test_a_server_elsewhere_signs_in_over_connections_to_the_addresses_checked(site: Site) -> None:
    # its own host is its authorization server: taken wherever it resolves (the user named it)
    site.auth.base = f"https://mcp.example.com:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"])
    person = Browser(dns)
    assert await call(site.url("mcp.example.com"), OAuth(person, resolver=dns), in_process(site)) == "hello"
    assert person.asked == [site.auth.base]
    # the flow's requests all came over the network, to the name the test's DNS put on 127.0.0.1
    # (the system's resolver knows no mcp.example.com), over TLS checked for that name
    assert site.hosts() == {"mcp.example.com"}
    paths = [path for _, path in site.arrived]
    assert "/.well-known/oauth-protected-resource/mcp" in paths and "/token" in paths
    assert "mcp.example.com" in dns.asked


@pytest.mark.parametrize(
    ("answers", "address", "where"),
    [
        (["127.0.0.1"], "127.0.0.1", "this machine"),
        (["169.254.169.254"], "169.254.169.254", "a private network"),  # a cloud's metadata service
        (["10.20.30.40"], "10.20.30.40", "a private network"),
        (["1.1.1.1", "127.0.0.1"], "127.0.0.1", "this machine"),  # one answer elsewhere, one home
        (["::1"], "::1", "this machine"),
    ],
)
async def test_a_server_elsewhere_cannot_name_a_host_that_resolves_home(
    site: Site, answers: list[str], address: str, where: str
) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"  # its metadata names this server
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=answers)
    person = Browser(dns)
    with pytest.raises(AuthorizationError) as refused:
        await call(site.url("mcp.example.com"), OAuth(person, resolver=dns), in_process(site))
    message = str(refused.value)
    assert f"'auth.example.net' resolves to {address}, on {where}" in message
    assert f"the MCP server 'https://mcp.example.com:{site.port}/mcp'" in message
    assert "server-side request forgery" in message
    assert "auth.example.net" not in site.hosts()  # refused before connecting
    assert person.asked == [] and site.auth.registrations == 0


async def test_the_answer_checked_is_the_one_connected_to(site: Site) -> None:
    # DNS rebinding: a second lookup would say elsewhere; there is none for the connection
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=[["127.0.0.1"], ["1.1.1.1"]])
    with pytest.raises(AuthorizationError, match=re.escape("'auth.example.net' resolves to 127.0.0.1")):
        await call(site.url("mcp.example.com"), OAuth(Browser(dns), resolver=dns), in_process(site))
    assert dns.asked.count("auth.example.net") == 1
    assert "auth.example.net" not in site.hosts()


async def test_a_server_at_home_by_its_name_may_name_hosts_that_resolve_home(site: Site) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(mcp_corp_internal=["127.0.0.1"], auth_example_net=["127.0.0.1"])
    person = Browser(dns)
    assert await call(site.url("mcp.corp.internal"), OAuth(person, resolver=dns), in_process(site)) == "hello"
    assert person.asked == [site.auth.base]
    assert "auth.example.net" in site.hosts()


async def test_a_server_at_home_by_its_address_may_name_hosts_that_resolve_home(site: Site) -> None:
    # a company's server under a public-looking name, reached at a private address (here
    # 127.0.0.1): its answer says where it is, and its authorization server is there too
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"], auth_example_net=["127.0.0.1"])
    person = Browser(dns)
    assert await call(site.url("mcp.example.com"), OAuth(person, resolver=dns), reaching(dns)) == "hello"
    assert "auth.example.net" in site.hosts()


async def test_each_connection_goes_to_the_address_judged_and_tls_checks_the_name(site: Site) -> None:
    judged: list[tuple[str, list[str]]] = []

    def judge(host: str, addresses: Sequence[str]) -> str | None:
        judged.append((host, list(addresses)))
        return None

    dns = Dns(auth_example_net=[["127.0.0.1"], ["192.0.2.1"]], other_example_org=["127.0.0.1"])
    async with httpx.AsyncClient(transport=PinnedTransport(PinnedBackend(judge, dns))) as http:
        answer = await http.get(
            f"https://auth.example.net:{site.port}/.well-known/oauth-authorization-server"
        )
        assert answer.status_code == 200
        # a name the certificate does not carry, on the same address: TLS refuses it
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await http.get(f"https://other.example.org:{site.port}/")
    assert judged == [("auth.example.net", ["127.0.0.1"]), ("other.example.org", ["127.0.0.1"])]
    assert dns.asked == ["auth.example.net", "other.example.org"]
    assert site.arrived == [(f"auth.example.net:{site.port}", "/.well-known/oauth-authorization-server")]


async def test_a_name_that_does_not_resolve_is_a_clear_error(site: Site) -> None:
    site.auth.base = f"https://auth.example.net:{site.port}"
    dns = Dns(mcp_example_com=["127.0.0.1"])  # knows no auth.example.net
    with pytest.raises(AuthorizationError, match=re.escape("cannot look up auth.example.net")):
        await call(site.url("mcp.example.com"), OAuth(Browser(dns), resolver=dns), in_process(site))


@contextlib.contextmanager
def silent(address: str, port: int) -> Iterator[None]:
    """A listener on ``address``:``port`` whose queue is full and that never accepts: a
    connection to it is never made (its SYNs are dropped, as a firewall's are)."""
    with socket.socket() as listening:
        listening.bind((address, port))
        listening.listen(0)
        queued = []
        try:
            for _ in range(3):
                waiting = socket.socket()
                waiting.setblocking(False)
                waiting.connect_ex((address, port))
                queued.append(waiting)
            yield
        finally:
            for waiting in queued:
                waiting.close()


BOUND = 20.0  # far longer than any connect below takes; far shorter than the old way's wait


async def test_an_address_that_never_answers_does_not_hold_up_the_next(site: Site) -> None:
    # the name's first address is dead (a broken IPv6 route, a host gone): the next one is
    # tried after a moment, not after the connect timeout, as httpx's own connect does
    dns = Dns(auth_example_net=["127.0.0.2", "127.0.0.1"])
    url = f"https://auth.example.net:{site.port}/.well-known/oauth-authorization-server"
    with silent("127.0.0.2", site.port):
        async with (
            httpx.AsyncClient(transport=reaching(dns), timeout=httpx.Timeout(10, connect=600)) as http,
            asyncio.timeout(BOUND),
        ):
            answer = await http.get(url)
    assert answer.status_code == 200
    assert site.arrived == [(f"auth.example.net:{site.port}", "/.well-known/oauth-authorization-server")]


class NeverAnswers:
    """A resolver whose lookup never ends."""

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@pytest.mark.parametrize("stalled", ["addresses", "lookup"])
async def test_a_host_that_never_answers_fails_at_one_connect_timeout(site: Site, stalled: str) -> None:
    # the timeout bounds the lookup and every address together (a name can have hundreds
    # of addresses), as it bounds httpx's own connect: not once per address
    resolver: Any = Dns(auth_example_net=["127.0.0.2"] * 200) if stalled == "addresses" else NeverAnswers()
    url = f"https://auth.example.net:{site.port}/"
    with silent("127.0.0.2", site.port), pytest.raises(httpx.ConnectTimeout) as failed:
        async with (
            httpx.AsyncClient(
                transport=PinnedTransport(PinnedBackend(allow_all, resolver)),
                timeout=httpx.Timeout(10, connect=0.5),
            ) as http,
            asyncio.timeout(BOUND),
        ):
            await http.get(url)
    assert "auth.example.net" in str(failed.value) and "0.5 s" in str(failed.value)
    assert site.arrived == []
