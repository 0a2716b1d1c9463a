"""``StreamableHTTP(allowed_hosts=...)`` as an operator writes it: an entry that could never
match a ``Host`` (a URL, a path, a wildcard, several names in one, a bare string for the
list) is refused when the app is made, saying what to give instead, rather than accepted
to answer every request 421; the names a client may send are still accepted as before."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.host_check import HostCheck, allowed_host
from mcp_elicit.transports.http_server import StreamableHTTP


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("https://mcp.example.com", "'mcp.example.com'"),
        ("http://mcp.example.com:8443/mcp", "'mcp.example.com:8443'"),
        ("mcp.example.com/", "without a path"),
        ("mcp.example.com/mcp", "without a path"),
        ("*.example.com", "wildcard"),
        ("mcp.example.com,api.example.com", "one name per entry"),
        ("mcp.example.com api.example.com", "one name per entry"),
        ("mcp.example.com:http", "not a host name"),
        ("user@mcp.example.com", "not a host name"),
        ("", "empty"),
    ],
)
def test_an_entry_that_could_never_match_a_host_is_refused(entry: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        allowed_host(entry)
    assert says in str(caught.value), caught.value
    with pytest.raises(ConfigError, match="allowed_hosts"):
        StreamableHTTP(Server("hosts"), allowed_hosts=["127.0.0.1", entry])


@pytest.mark.parametrize(
    ("entry", "kept"),
    [
        ("mcp.example.com", "mcp.example.com"),
        ("MCP.Example.com", "mcp.example.com"),
        ("mcp.example.com:8443", "mcp.example.com"),
        ("mcp.example.com.", "mcp.example.com."),
        ("my_service", "my_service"),
        ("10.0.0.11", "10.0.0.11"),
        ("[::1]", "[::1]"),
        ("*", "*"),
    ],
)
def test_a_host_name_with_or_without_its_port_is_accepted(entry: str, kept: str) -> None:
    assert allowed_host(entry) == kept


@pytest.mark.parametrize(
    ("entry", "form"),
    [
        ("bücher.example", "'xn--bcher-kva.example'"),
        ("Bücher.Example:8443", "'xn--bcher-kva.example'"),
        # browsers map names as UTS 46 (non-transitional) says: ß and ς are kept, not
        # turned into "ss" and a medial sigma as the older IDNA 2003 did
        ("faß.de", "'xn--fa-hia.de'"),
        ("ς.gr", "'xn--3xa.gr'"),
    ],
)
def test_an_internationalised_name_is_refused_with_the_form_clients_send(entry: str, form: str) -> None:
    with pytest.raises(ConfigError) as caught:
        allowed_host(entry)
    assert f"give the name as clients send it, {form}" in str(caught.value), caught.value


@pytest.mark.parametrize(
    ("entry", "form"),
    [("::1", "'[::1]'"), ("2001:DB8::5", "'[2001:db8::5]'"), ("fe80::1:8000", "'[fe80::1:8000]'")],
)
def test_an_ipv6_address_without_brackets_is_refused_with_them(entry: str, form: str) -> None:
    """Clients send an IPv6 address in brackets (``Host: [::1]:8000``); without them the
    entry matches nothing, and 'not a host name' would not say why."""
    with pytest.raises(ConfigError) as caught:
        allowed_host(entry)
    assert f"in brackets, as clients send it, {form}" in str(caught.value), caught.value


def test_a_string_for_the_list_is_refused() -> None:
    """``tuple("mcp.example.com")`` is its letters, each a name no client sends."""
    with pytest.raises(ConfigError, match="a list of host names"):
        StreamableHTTP(Server("hosts"), allowed_hosts="mcp.example.com")


def test_a_refused_host_is_logged_once_and_never_longer_than_a_name(caplog: pytest.LogCaptureFixture) -> None:
    """A Host is as long as the HTTP parser lets it be (a megabyte passes uvicorn's): one of
    letters alone looks like a name, yet no DNS name is over 253 characters, so its warning
    quotes its start only, rather than a line as long as the header per name refused."""
    check = HostCheck(["mcp.example.com"])
    huge = "a" * 100_000
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.http"):
        for _ in range(2):
            assert check.refusal({"host": huge}) is not None
            assert check.refusal({"host": "b" + huge[1:]}) is not None
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 2, said  # once per name
    assert all(len(line) < 1_000 for line in said), [len(line) for line in said]
    assert all("--allow-host" not in line for line in said), "no name to allow"


def test_past_the_names_logged_one_line_says_the_rest_are_not(caplog: pytest.LogCaptureFixture) -> None:
    """Scanners try many names: each is said once, up to a bound, and then one line says
    that further refusals are not logged, so that the silence is not read as none."""
    check = HostCheck(["mcp.example.com"])
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.http"):
        for n in range(50):
            assert check.refusal({"host": f"scan{n}.example"}) == (
                421,
                f"Misdirected request: host 'scan{n}.example' is not allowed (DNS-rebinding protection)",
            )
    said = [record.getMessage() for record in caplog.records]
    named = [line for line in said if "scan" in line]
    assert 0 < len(named) < 50, len(named)
    assert len(said) == len(named) + 1
    assert said[-1].startswith(f"refused requests naming {len(named)} different hosts"), said[-1]
