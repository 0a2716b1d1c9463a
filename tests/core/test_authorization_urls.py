"""The sans-IO authorization core (``mcp_elicit.core.authorization``): the URLs of protected resource and
authorization server metadata, which plain HTTP servers may be signed in to, and the
resource a server may name."""

from __future__ import annotations

import pytest

from mcp_elicit.core.authorization_urls import (
    authorization_server_metadata_urls,
    check_resource,
    cleartext_refusal,
    protected_resource_urls,
    quoted_value,
    require_secure,
)

from support.authorization import SERVER_URL, _refused


@pytest.mark.parametrize(
    ("server_url", "advertised", "expected"),
    [
        (
            "https://mcp.example.com/mcp",
            None,
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example.com/mcp/",
            None,
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example.com:8443/a/b",
            None,
            [
                "https://mcp.example.com:8443/.well-known/oauth-protected-resource/a/b",
                "https://mcp.example.com:8443/.well-known/oauth-protected-resource",
            ],
        ),
        ("https://mcp.example.com", None, ["https://mcp.example.com/.well-known/oauth-protected-resource"]),
        ("https://mcp.example.com/", None, ["https://mcp.example.com/.well-known/oauth-protected-resource"]),
        (
            "https://mcp.example.com/mcp",
            "https://meta.example.com/prm",
            [
                "https://meta.example.com/prm",
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example.com/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example.com/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource",
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            ],
        ),
        (
            "http://127.0.0.1:8000/mcp",
            "http://127.0.0.1:8000/prm",
            [
                "http://127.0.0.1:8000/prm",
                "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp",
                "http://127.0.0.1:8000/.well-known/oauth-protected-resource",
            ],
        ),
        ("https://mcp.example.com/mcp", "", None),
    ],
)
def test_protected_resource_urls(server_url: str, advertised: str | None, expected: list[str] | None) -> None:
    urls = protected_resource_urls(server_url, advertised)
    if expected is None:  # an empty advertised URL is as good as none
        expected = protected_resource_urls(server_url, None)
    assert urls == expected
    assert len(urls) == len(set(urls))


@pytest.mark.parametrize(
    "advertised",
    ["http://localhost/prm", "http://LOCALHOST:9/prm", "http://127.0.0.2/prm", "http://[::1]:8080/prm"],
)
def test_plain_http_to_loopback_is_allowed(advertised: str) -> None:
    server_url = "http://127.0.0.1:3000/mcp"  # a server on this machine: its metadata may be too
    assert protected_resource_urls(server_url, advertised)[0] == advertised


@pytest.mark.parametrize(
    ("server_url", "advertised", "where"),
    [
        (SERVER_URL, "http://localhost/prm", "this machine"),
        (SERVER_URL, "https://127.0.0.1:6443/prm", "this machine"),
        (SERVER_URL, "https://[::ffff:127.0.0.1]/prm", "this machine"),
        (SERVER_URL, "https://0.0.0.0/prm", "this machine"),
        (SERVER_URL, "https://api.localhost/prm", "this machine"),
        (SERVER_URL, "https://10.0.0.8/prm", "a private network"),
        (SERVER_URL, "https://169.254.169.254/latest/meta-data", "a private network"),
        (SERVER_URL, "https://[fd00::1]/prm", "a private network"),
        # a name that says where it is: a private network's special-use name
        (SERVER_URL, "https://meta.internal/prm", "a private network"),
        (SERVER_URL, "https://printer.local/prm", "a private network"),
        (SERVER_URL, "https://nas.home.arpa./prm", "a private network"),
        (SERVER_URL, "https://META.INTERNAL/prm", "a private network"),
    ],
)
def test_a_server_elsewhere_cannot_send_the_client_home(server_url: str, advertised: str, where: str) -> None:
    """Server-side request forgery: a server on the internet that names this machine or a
    private network's address has the client make requests there (best practices: block
    them)."""
    message = _refused(protected_resource_urls, server_url, advertised, match=where)
    assert "resource_metadata" in message


@pytest.mark.parametrize(
    ("advertised", "where"),
    [
        ("https://2130706433/prm", "this machine"),  # 127.0.0.1 in decimal
        ("https://0x7f.1/prm", "this machine"),  # hex, two parts
        ("https://0177.0.0.1/prm", "this machine"),  # octal
        ("https://127.1/prm", "this machine"),
        ("https://127.0.0.1./prm", "this machine"),  # a trailing dot
        ("https://%31%32%37.0.0.1/prm", "this machine"),  # %-escapes, which a browser decodes
        ("https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/prm", "this machine"),  # full-width digits
        ("https://127\u30020\u30020\u30021/prm", "this machine"),  # ideographic full stops
        ("https://LOCALHOST./prm", "this machine"),
        ("https://[::ffff:7f00:1]/prm", "this machine"),
        ("https://0xa9fea9fe/latest/meta-data", "a private network"),  # 169.254.169.254
        ("https://10.1/prm", "a private network"),  # 10.0.0.1
        ("HTTPS://LOCALHOST./prm", "this machine"),
        ("https://[::]/prm", "this machine"),
        ("https://0/prm", "this machine"),  # 0.0.0.0
        ("https://mcp.example.com@127.0.0.1/prm", "this machine"),  # userinfo that reads as a host
        ("https://[64:ff9b::a9fe:a9fe]/prm", "a private network"),  # NAT64 of 169.254.169.254
        ("https://[fec0::1]/prm", "a private network"),  # site-local, deprecated but routed
    ],
)
def test_an_address_in_another_form_is_still_the_address(advertised: str, where: str) -> None:
    """Browsers and the system's resolver read an IPv4 address written in decimal, hex,
    octal or fewer parts (the best practices warn of these encoding tricks): each is the
    address it means, and refused as that address."""
    _refused(protected_resource_urls, SERVER_URL, advertised, match=where)


@pytest.mark.parametrize("host", ["1" * 5000, "1" + "0" * 5000, "0x" + "f" * 5000, "1.2.3." + "9" * 5000])
def test_a_host_of_endless_digits_is_judged_without_a_crash(host: str) -> None:
    """No IPv4 address (too large for any place, so a name to the resolver, which finds
    none); Python's int() refuses over 4,300 digits, which must not escape as a crash."""
    assert protected_resource_urls(SERVER_URL, f"https://{host}/prm")[0] == f"https://{host}/prm"


def test_leading_zeros_are_read_as_a_browser_reads_them() -> None:
    _refused(
        protected_resource_urls, SERVER_URL, "https://" + "0" * 5000 + "177.0.0.1/prm", match="this machine"
    )


@pytest.mark.parametrize(
    ("server_url", "advertised"),
    [
        ("http://10.1.2.3/mcp", "https://10.9.9.9/prm"),  # a private network's server, its network
        ("https://mcp.corp.internal/mcp", "https://10.9.9.9/prm"),
        ("http://localhost:3000/mcp", "https://10.9.9.9/prm"),  # this machine reaches anywhere
        ("http://10.1.2.3/mcp", "http://127.0.0.1:8080/prm"),  # a container's server, the host's
        ("https://mcp.corp.internal/mcp", "http://localhost:81/prm"),
        ("https://mcp.corp.internal/mcp", "https://sso.corp.internal/prm"),
        (SERVER_URL, "https://meta.example.org/prm"),  # where it resolves: the transport's to check
    ],
)
def test_a_server_at_home_may_send_the_client_anywhere_at_home(server_url: str, advertised: str) -> None:
    assert protected_resource_urls(server_url, advertised)[0] == advertised


@pytest.mark.parametrize(
    "advertised",
    [
        "http://meta.example.com/prm",
        "http://localhost.evil.example/prm",
        "http://10.0.0.1/prm",
        "ftp://meta.example.com/prm",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "https:///nohost",
        "/relative/prm",
        "https://meta.example.com/prm#frag",
    ],
)
def test_an_unsafe_advertised_url_is_refused(advertised: str) -> None:
    message = _refused(protected_resource_urls, SERVER_URL, advertised)
    assert "resource_metadata" in message


def test_a_plain_http_servers_own_origin_may_publish_its_metadata() -> None:
    # signing in to http://10.1.2.3 at all is allowed or not by the client's plain_http;
    # the metadata on the server's own origin exposes nothing more than the server does
    assert (
        protected_resource_urls("http://10.1.2.3:80/mcp", "http://10.1.2.3/prm")[0] == "http://10.1.2.3/prm"
    )
    _refused(protected_resource_urls, "http://10.1.2.3/mcp", "http://10.1.2.4/prm", match="plain http")
    _refused(protected_resource_urls, "http://10.1.2.3/mcp", "http://10.1.2.3:81/prm", match="plain http")
    _refused(protected_resource_urls, "http://10.1.2.3/mcp", "http://10.1.2.3/prm#x", match="fragment")


@pytest.mark.parametrize(
    ("url", "loopback", "private"),
    [
        ("https://mcp.example.com/mcp", True, True),
        ("http://127.0.0.1:8000/mcp", True, True),
        ("http://[::1]/mcp", True, True),
        ("http://LocalHost/mcp", True, True),
        ("http://10.1.2.3/mcp", False, True),
        ("http://172.31.0.9/mcp", False, True),
        ("http://192.168.1.20:8080/mcp", False, True),
        ("http://100.100.1.1/mcp", False, True),
        ("http://169.254.1.1/mcp", False, True),
        ("http://[fd12:3456::1]/mcp", False, True),
        ("http://[fe80::1]/mcp", False, True),
        ("http://[::ffff:10.0.0.1]/mcp", False, True),
        ("http://nas.local/mcp", False, True),
        ("http://nas.home.arpa./mcp", False, True),
        ("http://mcp.corp.internal/mcp", False, True),
        ("http://172.32.0.1/mcp", False, False),
        ("http://198.51.100.7/mcp", False, False),
        ("http://8.8.8.8/mcp", False, False),
        ("http://[2001:db8::1]/mcp", False, False),
        ("http://mcp.example.com/mcp", False, False),
        ("http://local/mcp", False, False),
        ("http://evil-local/mcp", False, False),
        ("http://localhost.evil.example/mcp", False, False),
    ],
)
def test_which_plain_http_servers_are_signed_in_to(url: str, loopback: bool, private: bool) -> None:
    for plain_http, allowed in (("loopback", loopback), ("private", private)):
        refusal = cleartext_refusal(url, plain_http)
        assert (refusal is None) is allowed, (url, plain_http, refusal)
        if refusal is not None:
            assert url in refusal and "https://" in refusal
            assert ('plain_http="private"' in refusal) is (plain_http == "loopback")


@pytest.mark.parametrize("server_url", ["ftp://mcp.example.com/mcp", "mcp.example.com/mcp", "https://"])
def test_a_server_url_that_is_not_http_is_refused(server_url: str) -> None:
    _refused(protected_resource_urls, server_url, None, match="MCP server URL")


@pytest.mark.parametrize(
    ("issuer", "expected"),
    [
        (
            "https://auth.example.com",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/tenant1",
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ],
        ),
        (
            "http://localhost:9000/realms/a/",
            [
                "http://localhost:9000/.well-known/oauth-authorization-server/realms/a",
                "http://localhost:9000/.well-known/openid-configuration/realms/a",
                "http://localhost:9000/realms/a/.well-known/openid-configuration",
            ],
        ),
    ],
)
def test_authorization_server_metadata_urls(issuer: str, expected: list[str]) -> None:
    assert authorization_server_metadata_urls(issuer) == expected


@pytest.mark.parametrize("issuer", ["ftp://auth.example.com", "auth.example.com", ""])
def test_an_issuer_that_is_not_http_is_refused(issuer: str) -> None:
    _refused(authorization_server_metadata_urls, issuer, match="authorization server")


@pytest.mark.parametrize(
    ("server_url", "resource"),
    [
        ("https://h.example/mcp", "https://h.example/mcp"),
        ("https://h.example/mcp", "https://h.example/mcp/"),
        ("https://h.example/mcp/", "https://h.example/mcp"),
        ("https://h.example/mcp", "https://h.example/"),
        ("https://h.example/mcp", "https://h.example"),
        ("https://h.example", "https://h.example/"),
        ("https://h.example/a/b/mcp", "https://h.example/a"),
        ("https://h.example/a/b/mcp", "https://h.example/a/b/"),
        ("https://H.Example/mcp", "https://h.example/mcp"),
        ("HTTPS://h.example/mcp", "https://h.example/mcp"),
        ("http://h.example:80/mcp", "http://h.example/mcp"),
        ("http://h.example/mcp", "http://h.example:80/mcp"),
        ("https://h.example:443/mcp", "https://h.example/mcp"),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/"),
    ],
)
def test_check_resource_accepts_the_server_or_a_parent(server_url: str, resource: str) -> None:
    check_resource(server_url, resource)


@pytest.mark.parametrize(
    ("server_url", "resource"),
    [
        ("https://h.example/mcp", "https://h.example/mcp2"),
        ("https://h.example/mcp2", "https://h.example/mcp"),
        ("https://h.example/mcp", "https://h.example/mcp/sub"),
        ("https://h.example/mcp", "https://h.example/other"),
        ("https://h.example/mcp", "https://h.example/MCP"),
        ("https://h.example/mcp", "https://h.example:8443/mcp"),
        ("https://h.example/mcp", "https://other.example/mcp"),
        ("https://h.example/mcp", "https://evil-h.example/mcp"),
        ("https://h.example/mcp", "http://h.example/mcp"),
        ("http://h.example/mcp", "https://h.example/mcp"),
        ("https://h.example/mcp", "https://h.example:80/mcp"),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001/mcp"),
        ("http://127.0.0.1:8000/mcp", "http://localhost:8000/mcp"),
    ],
)
def test_check_resource_refuses_another_resource(server_url: str, resource: str) -> None:
    message = _refused(check_resource, server_url, resource)
    assert repr(resource) in message
    assert repr(server_url) in message


def test_a_url_cut_inside_its_password_names_none_of_it() -> None:
    """An error quotes a URL to 120 characters, its secrets redacted before the cut: cut
    first, a cut inside its user information would take away the "@" that marks a password
    as one, and nothing after could find it. The host stays named."""
    said = _refused(require_secure, "http://me:" + "Q" * 200 + "@far.example/", "the issuer")
    assert "Q" not in said and "'http://REDACTED:REDACTED@far.example/'" in said
    assert "Q" not in quoted_value("https:me:" + "Q" * 200 + "@h/")  # no slashes
    assert "Q" not in quoted_value("https://me:" + "Q\x01" * 100 + "@h/")  # repr's escapes
    assert quoted_value("https://h.example/" + "p" * 200) == "'https://h.example/" + "p" * 98 + "..."
    assert quoted_value("https://me@h.example/" + "p" * 200).startswith("'https://REDACTED@h.example/ppp")
    assert quoted_value("https://h.example/cb?code=" + "c" * 200) == "'https://h.example/cb?REDACTED'"
