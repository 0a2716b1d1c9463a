"""Where a name resolves, judged in the sans-IO core (``core.authorization_urls``): whether
an MCP server is elsewhere (``far_server``: its URL, and the address its answer came from),
and which resolved addresses the sign-in of a server elsewhere may connect to
(``resolution_refusal``). The transport resolves and connects
(``tests/transports/test_http_auth_resolved.py``)."""

from __future__ import annotations

import pytest

from mcp_elicit.core.authorization_urls import far_server, resolution_refusal

SERVER_URL = "https://mcp.example.com/mcp"


@pytest.mark.parametrize(
    ("server_url", "peer", "far"),
    [
        (SERVER_URL, None, True),  # a public name, its answer's address unknown
        (SERVER_URL, "1.1.1.1", True),
        (SERVER_URL, "10.20.0.5", False),  # a company's server under a public-looking name
        (SERVER_URL, "127.0.0.1", False),  # on this machine (or through a proxy here)
        (SERVER_URL, "::ffff:192.168.1.4", False),
        ("https://mcp.corp.internal/mcp", None, False),  # its name says where it is
        ("https://mcp.corp.internal/mcp", "1.1.1.1", False),
        ("http://localhost:3000/mcp", None, False),
        ("https://10.1.2.3/mcp", None, False),
        ("https://198.51.100.7/mcp", None, False),  # TEST-NET-2 is reserved for documentation
        ("https://8.8.8.8/mcp", None, True),
        ("https://8.8.8.8/mcp", "8.8.8.8", True),
    ],
)
def test_a_server_is_elsewhere_by_its_url_and_where_its_answer_came_from(
    server_url: str, peer: str | None, far: bool
) -> None:
    assert far_server(server_url, peer) is far


@pytest.mark.parametrize(
    ("addresses", "where"),
    [
        (["127.0.0.1"], "this machine"),
        (["::1"], "this machine"),
        (["0.0.0.0"], "this machine"),
        (["169.254.169.254"], "a private network"),  # a cloud's metadata service
        (["10.0.0.7"], "a private network"),
        (["fd00::7"], "a private network"),
        (["fe80::1%eth0"], "a private network"),  # link-local, with its interface
        (["::ffff:127.0.0.1"], "this machine"),
        (["100.64.0.1"], "a private network"),
        (["1.1.1.1", "127.0.0.1"], "this machine"),  # any answer near refuses the name
        (["127.0.0.1", "1.1.1.1"], "this machine"),
    ],
)
def test_a_name_resolving_home_is_refused_to_a_server_elsewhere(addresses: list[str], where: str) -> None:
    refusal = resolution_refusal("metadata.attacker.example", addresses, server_url=SERVER_URL)
    assert refusal is not None
    near = next(a for a in addresses if a != "1.1.1.1")
    assert f"'metadata.attacker.example' resolves to {near}, on {where}" in refusal
    assert "'https://mcp.example.com/mcp'" in refusal and "server-side request forgery" in refusal


@pytest.mark.parametrize("addresses", [["8.8.8.8"], ["2001:4860:4860::8888", "8.8.4.4"]])
def test_a_name_resolving_elsewhere_is_taken(addresses: list[str]) -> None:
    assert resolution_refusal("auth.example.org", addresses, server_url=SERVER_URL) is None


@pytest.mark.parametrize("host", ["mcp.example.com", "MCP.EXAMPLE.COM", "mcp.example.com."])
def test_the_servers_own_host_is_taken_wherever_it_resolves(host: str) -> None:
    # the user named it and the client talks to it already; TLS proves the name
    assert resolution_refusal(host, ["10.0.0.7"], server_url=SERVER_URL) is None


def test_an_international_server_name_is_its_own_host_in_ascii() -> None:
    server_url = "https://b\u00fccher.example/mcp"
    assert resolution_refusal("xn--bcher-kva.example", ["10.0.0.7"], server_url=server_url) is None
    assert resolution_refusal("xn--bcher-kva.example.org", ["10.0.0.7"], server_url=server_url)


def test_an_international_server_name_is_its_own_host_as_httpx_writes_it() -> None:
    # httpx connects to IDNA 2008's form (\u00df kept: xn--fa-hia), not IDNA 2003's (fass)
    server_url = "https://fa\u00df.example/mcp"
    assert resolution_refusal("xn--fa-hia.example", ["10.0.0.7"], server_url=server_url) is None
    assert resolution_refusal("fass.example", ["10.0.0.7"], server_url=server_url)  # another name


@pytest.mark.parametrize(
    ("address", "where"),
    [
        ("64:ff9b::7f00:1", "this machine"),  # NAT64 (RFC 6052) of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "a private network"),  # of 169.254.169.254
        ("2002:7f00:1::1", "this machine"),  # 6to4 (RFC 3056) of 127.0.0.1
        ("2002:c0a8:101::1", "a private network"),  # of 192.168.1.1
    ],
)
def test_an_ipv4_address_inside_an_ipv6_one_is_judged_as_that_ipv4_address(address: str, where: str) -> None:
    refusal = resolution_refusal("metadata.attacker.example", [address], server_url=SERVER_URL)
    assert refusal is not None and f"resolves to {address}, on {where}" in refusal


def test_a_network_that_translates_to_ipv4_reaches_servers_elsewhere() -> None:
    # an IPv6-only network with DNS64 answers an IPv4-only name with 64:ff9b::<its address>,
    # and getaddrinfo gives the IPv4 address too: both are 8.8.8.8, elsewhere
    assert (
        resolution_refusal("auth.example.org", ["64:ff9b::808:808", "8.8.8.8"], server_url=SERVER_URL) is None
    )
    # a server reached that way is elsewhere still: its guard stays on
    assert far_server(SERVER_URL, "64:ff9b::808:808") is True
    assert far_server(SERVER_URL, "2002:808:808::1") is True
