"""The client side of MCP authorization, sans I/O (core.authorization): challenges, discovery
URLs, metadata checks, scope, PKCE, the authorization request and its answer, tokens."""

from __future__ import annotations

import base64
import hashlib
import re
import string
import urllib.parse
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.core.authorization import (
    AuthorizationServer,
    Challenge,
    Pkce,
    ProtectedResource,
    authorization_url,
    bearer_challenge,
    read_authorization_server,
    read_callback,
    read_protected_resource,
    select_scope,
    token_challenges,
)
from mcp_elicit.core.authorization_urls import (
    authorization_server_metadata_urls,
    check_resource,
    cleartext_refusal,
    protected_resource_urls,
)
from mcp_elicit.core.token_endpoint import (
    ClientCredentials,
    Tokens,
    choose_auth_method,
    client_assertion,
    client_auth,
    id_jag_request,
    read_id_jag,
    read_registration,
    read_tokens,
    registration_request,
    token_request,
)
from mcp_elicit.errors import AuthorizationError
from tests.support.deadline import within

SERVER_URL = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
WHERE = "https://where.example/doc"
REDIRECT = "http://127.0.0.1:33418/callback"
CODE = "Splx10BeZQQYbYS6WxSbIA"
STATE = "af0ifjsldkjX7sQ9"

AS_DOCUMENT: dict[str, Any] = {
    "issuer": ISSUER,
    "authorization_endpoint": f"{ISSUER}/authorize",
    "token_endpoint": f"{ISSUER}/token",
    "registration_endpoint": f"{ISSUER}/register",
    "scopes_supported": ["read", "write", "offline_access"],
    "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
    "code_challenge_methods_supported": ["plain", "S256"],
    "authorization_response_iss_parameter_supported": True,
    "client_id_metadata_document_supported": True,
}
PR_DOCUMENT: dict[str, Any] = {
    "resource": SERVER_URL,
    "authorization_servers": [ISSUER],
    "scopes_supported": ["read", "write"],
}


def _server(**overrides: Any) -> AuthorizationServer:
    base: dict[str, Any] = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
    }
    base.update(overrides)
    return AuthorizationServer(**base)


def _resource(scopes: tuple[str, ...] | None = None) -> ProtectedResource:
    return ProtectedResource(SERVER_URL, (ISSUER,), scopes)


def _changed(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes``; a value of ``...`` removes the key."""
    document = dict(base)
    for key, value in changes.items():
        if value is ...:
            document.pop(key, None)
        else:
            document[key] = value
    return document


def _as_document(**changes: Any) -> dict[str, Any]:
    return _changed(AS_DOCUMENT, changes)


def _pr_document(**changes: Any) -> dict[str, Any]:
    return _changed(PR_DOCUMENT, changes)


def _refused(call: Any, *args: Any, match: str | None = None, **kwargs: Any) -> str:
    with pytest.raises(AuthorizationError, match=match) as info:
        call(*args, **kwargs)
    return str(info.value)


# ---- the challenge -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "scheme", "params"),
    [
        (['Bearer scope="read write"'], "Bearer", {"scope": "read write"}),
        (["Bearer error=invalid_token"], "Bearer", {"error": "invalid_token"}),
        (["Bearer error=invalid_token,scope=read"], "Bearer", {"error": "invalid_token", "scope": "read"}),
        (['Bearer realm = "x" , scope="s"'], "Bearer", {"realm": "x", "scope": "s"}),
        (["Bearer a=b==, c=d"], "Bearer", {"a": "b==", "c": "d"}),
        (['Bearer scope="a\\"b\\\\c"'], "Bearer", {"scope": 'a"b\\c'}),
        (['Bearer scope="one, two"'], "Bearer", {"scope": "one, two"}),
        (['Bearer scope=""'], "Bearer", {"scope": ""}),
        (["Bearer"], "Bearer", {}),
        (
            ['  bEaReR   ScOpE="a", ERROR=insufficient_scope'],
            "bEaReR",
            {"scope": "a", "error": "insufficient_scope"},
        ),
        (['Basic realm="x", Bearer scope="s"'], "Bearer", {"scope": "s"}),
        (['Basic realm="x"', 'Bearer scope="s"'], "Bearer", {"scope": "s"}),
        (
            ['Basic realm="x"', "DPoP algs=ES256", 'bearer error="invalid_token"'],
            "bearer",
            {"error": "invalid_token"},
        ),
        (
            [
                'Newauth realm="apps", type=1, title="Login to \\"apps\\"", '
                'Basic realm="simple", Bearer resource_metadata="https://r.example/prm"'
            ],
            "Bearer",
            {"resource_metadata": "https://r.example/prm"},
        ),
        (['Bearer scope="first", scope="second"'], "Bearer", {"scope": "first"}),
        (['Bearer scope="first"', 'Bearer scope="second"'], "Bearer", {"scope": "first"}),
    ],
)
def test_the_bearer_challenge_is_found_and_read(
    headers: list[str], scheme: str, params: dict[str, str]
) -> None:
    challenge = bearer_challenge(headers)
    assert challenge is not None
    assert challenge.scheme == scheme
    assert dict(challenge.params) == params


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [""],
        ['Basic realm="x"'],
        ['Basic realm="x", DPoP algs="ES256"', "Negotiate"],
        ["Bearerish scope=x"],
        ["=== ,,,"],
    ],
)
def test_no_bearer_challenge_gives_none(headers: list[str]) -> None:
    assert bearer_challenge(headers) is None


@pytest.mark.parametrize(
    ("before", "count"),
    [
        ("Basic, ", 300_000),
        ("Negotiate ", 200_000),
        ('Newauth realm="x", ', 100_000),
        ("Basic YWI=, ", 200_000),
    ],
)
def test_a_header_of_many_challenges_is_read_in_linear_time(before: str, count: int) -> None:
    # A server's WWW-Authenticate naming thousands of challenges before its Bearer one:
    # each was cut off the front of the rest by copying it (quadratic, minutes at 2 MB).
    header = before * count + 'Bearer resource_metadata="https://r.example/prm", scope="a b"'
    with within(10, "reading a WWW-Authenticate header of many challenges"):
        challenge = bearer_challenge([header])
        every = token_challenges([header, "DPoP " + "algs=ES256, " * 200_000])
    assert challenge is not None
    assert dict(challenge.params) == {"resource_metadata": "https://r.example/prm", "scope": "a b"}
    assert [c.scheme for c in every] == ["Bearer", "DPoP"]
    assert every[1].params == {"algs": "ES256"}


def test_the_challenge_properties() -> None:
    challenge = bearer_challenge(
        [
            'Bearer error="insufficient_scope", scope="  files:read  files:write ", '
            'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
        ]
    )
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "files:read  files:write"
    assert challenge.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize("header", ['Bearer scope=""', 'Bearer scope="   "', "Bearer realm=x"])
def test_a_blank_or_missing_scope_is_none(header: str) -> None:
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert challenge.scope is None
    assert challenge.error is None


def test_an_empty_resource_metadata_is_none() -> None:
    challenge = bearer_challenge(['Bearer resource_metadata=""'])
    assert challenge is not None
    assert challenge.resource_metadata is None


@pytest.mark.parametrize(
    ("header", "params"),
    [
        ('Bearer scope="unterminated', {}),
        ('Bearer realm="x" scope="y"', {}),
        ("Bearer ,", {}),
        ("Bearer abc", {}),
        ('Bearer scope="ok", junk junk, error=x', {"scope": "ok"}),
    ],
)
def test_a_malformed_challenge_keeps_what_came_before(header: str, params: dict[str, str]) -> None:
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert dict(challenge.params) == params


@given(st.lists(st.text(max_size=80), max_size=4))
def test_any_header_text_gives_none_or_a_bearer_challenge(headers: list[str]) -> None:
    challenge = bearer_challenge(headers)
    assert challenge is None or isinstance(challenge, Challenge)
    if challenge is not None:
        assert challenge.scheme.lower() == "bearer"
        assert all(isinstance(k, str) and k == k.lower() for k in challenge.params)
        assert all(isinstance(v, str) for v in challenge.params.values())


_NAMES = st.text(alphabet=string.ascii_letters + "_-", min_size=1, max_size=12)
_VALUES = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)


@given(st.dictionaries(_NAMES, _VALUES, max_size=5), st.sampled_from(["Bearer", "bearer", "BEARER"]))
def test_quoted_params_round_trip(params: dict[str, str], scheme: str) -> None:
    quoted = ", ".join(
        f'{name}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for name, value in params.items()
    )
    challenge = bearer_challenge(['Basic realm="r"', f"{scheme} {quoted}"])
    assert challenge is not None
    assert challenge.scheme == scheme
    expected: dict[str, str] = {}
    for name, value in params.items():
        expected.setdefault(name.lower(), value)
    assert dict(challenge.params) == expected


@pytest.mark.parametrize(
    "header",
    [
        'Basic, Bearer scope="a"',
        'Negotiate, Bearer scope="a"',
        ', Bearer scope="a"',
        'Basic dXNlcjpwYXNz, Bearer scope="a"',
        'Negotiate dG9rZW4=, Bearer scope="a"',
        'Basic realm="x", Bearer scope="a"',
    ],
)
def test_a_bare_scheme_before_bearer_does_not_hide_it(header: str) -> None:
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert challenge.scope == "a"


# ---- URLs ------------------------------------------------------------------------------


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
    assert protected_resource_urls(SERVER_URL, advertised)[0] == advertised


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


# ---- protected resource metadata ---------------------------------------------------


def test_a_good_protected_resource_document() -> None:
    read = read_protected_resource(PR_DOCUMENT, SERVER_URL, WHERE)
    assert read == ProtectedResource(SERVER_URL, (ISSUER,), ("read", "write"))


def test_a_protected_resource_document_without_scopes_and_with_several_servers() -> None:
    document = _pr_document(
        resource="https://mcp.example.com/",
        scopes_supported=...,
        authorization_servers=[ISSUER, "http://[::1]:9"],
    )
    read = read_protected_resource(document, SERVER_URL, WHERE)
    assert read.resource == "https://mcp.example.com/"
    assert read.authorization_servers == (ISSUER, "http://[::1]:9")
    assert read.scopes_supported is None


@pytest.mark.parametrize("document", [None, [], ["resource"], "{}", 3, True])
def test_a_protected_resource_document_that_is_not_an_object_is_refused(document: object) -> None:
    message = _refused(read_protected_resource, document, SERVER_URL, WHERE, match="not a JSON object")
    assert WHERE in message


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"resource": ...}, "has no resource"),
        ({"resource": ""}, "has no resource"),
        ({"resource": 7}, "has no resource"),
        ({"resource": ["https://mcp.example.com/mcp"]}, "has no resource"),
        ({"resource": "https://mcp.example.com/mcp2"}, "not for"),
        ({"resource": "https://evil.example/mcp"}, "not for"),
        ({"resource": "https://mcp.example.com/mcp#x"}, "fragment"),
        ({"resource": "https://mcp.example.com/mcp#"}, "fragment"),
        ({"resource": "https://mcp.example.com#mcp"}, "fragment"),
        ({"authorization_servers": ...}, "names no authorization server"),
        ({"authorization_servers": []}, "names no authorization server"),
        ({"authorization_servers": ISSUER}, "authorization_servers .* not a list of strings"),
        ({"authorization_servers": [ISSUER, 3]}, "authorization_servers .* not a list of strings"),
        ({"authorization_servers": ["http://auth.example.com"]}, "plain http"),
        ({"authorization_servers": ["ftp://auth.example.com"]}, "not an http"),
        ({"authorization_servers": [ISSUER, "https://auth.example.com#x"]}, "fragment"),
        ({"scopes_supported": "read write"}, "scopes_supported .* not a list of strings"),
        ({"scopes_supported": ["read", None]}, "scopes_supported .* not a list of strings"),
    ],
)
def test_a_bad_protected_resource_document_is_refused(changes: dict[str, Any], match: str) -> None:
    _refused(read_protected_resource, _pr_document(**changes), SERVER_URL, WHERE, match=match)


@pytest.mark.parametrize(
    "changes",
    [
        {"resource": "https://mcp.example.com:bad/mcp"},
        {"resource": "https://mcp.example.com:99999/mcp"},
        {"resource": "https://[oops/mcp"},
        {"authorization_servers": ["https://[oops"]},
    ],
)
def test_a_malformed_url_in_protected_resource_metadata_is_an_authorization_error(
    changes: dict[str, Any],
) -> None:
    _refused(read_protected_resource, _pr_document(**changes), SERVER_URL, WHERE)


def test_a_malformed_advertised_url_is_an_authorization_error() -> None:
    _refused(protected_resource_urls, SERVER_URL, "https://[oops/prm")


# ---- authorization server metadata -------------------------------------------------


def test_a_good_authorization_server_document() -> None:
    read = read_authorization_server(AS_DOCUMENT, ISSUER, WHERE)
    assert read == AuthorizationServer(
        issuer=ISSUER,
        authorization_endpoint=f"{ISSUER}/authorize",
        token_endpoint=f"{ISSUER}/token",
        registration_endpoint=f"{ISSUER}/register",
        scopes_supported=("read", "write", "offline_access"),
        token_endpoint_auth_methods=("client_secret_post", "none"),
        iss_parameter_supported=True,
        client_id_metadata_documents=True,
    )


def test_a_minimal_authorization_server_document_gets_the_defaults() -> None:
    document = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ["S256"],
    }
    read = read_authorization_server(document, ISSUER, WHERE)
    assert read.registration_endpoint is None
    assert read.scopes_supported is None
    assert read.token_endpoint_auth_methods == ("client_secret_basic",)
    assert read.iss_parameter_supported is False
    assert read.client_id_metadata_documents is False


@pytest.mark.parametrize("methods", [[], None])
def test_empty_or_null_auth_methods_mean_the_default(methods: Any) -> None:
    read = read_authorization_server(
        _as_document(token_endpoint_auth_methods_supported=methods), ISSUER, WHERE
    )
    assert read.token_endpoint_auth_methods == ("client_secret_basic",)


@pytest.mark.parametrize("document", [None, [AS_DOCUMENT], "issuer", 1])
def test_an_authorization_server_document_that_is_not_an_object_is_refused(document: object) -> None:
    message = _refused(read_authorization_server, document, ISSUER, WHERE, match="not a JSON object")
    assert WHERE in message


@pytest.mark.parametrize(
    "stated",
    [
        ISSUER + "/",
        "https://AUTH.example.com",
        "http://auth.example.com",
        "https://evil.example",
        "",
        None,
        ...,
    ],
)
def test_an_issuer_mismatch_is_refused(stated: Any) -> None:
    message = _refused(
        read_authorization_server, _as_document(issuer=stated), ISSUER, WHERE, match="another issuer"
    )
    assert WHERE in message


def test_an_issuer_with_a_trailing_slash_must_match_it_too() -> None:
    issuer = ISSUER + "/"
    assert read_authorization_server(_as_document(issuer=issuer), issuer, WHERE).issuer == issuer
    _refused(read_authorization_server, AS_DOCUMENT, issuer, WHERE, match="another issuer")


@pytest.mark.parametrize("methods", [..., None, [], ["plain"], ["s256"], ["S256 "]])
def test_without_pkce_s256_the_server_is_refused(methods: Any) -> None:
    message = _refused(
        read_authorization_server, _as_document(code_challenge_methods_supported=methods), ISSUER, WHERE
    )
    assert "PKCE" in message
    assert ISSUER in message


@pytest.mark.parametrize("methods", ["S256", [["S256"]], [256]])
def test_pkce_methods_that_are_not_a_list_of_strings_are_refused(methods: Any) -> None:
    _refused(
        read_authorization_server,
        _as_document(code_challenge_methods_supported=methods),
        ISSUER,
        WHERE,
        match="code_challenge_methods_supported .* not a list of strings",
    )


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        (
            "authorization_endpoint",
            "http://auth.example.com/authorize",
            "authorization endpoint .* plain http",
        ),
        ("token_endpoint", "http://auth.example.com/token", "token endpoint .* plain http"),
        ("registration_endpoint", "http://auth.example.com/register", "registration endpoint .* plain http"),
        ("authorization_endpoint", "javascript:alert(1)", "not an http"),
        ("token_endpoint", "https://auth.example.com/token#f", "fragment"),
        ("authorization_endpoint", ..., "has no authorization_endpoint"),
        ("authorization_endpoint", "", "has no authorization_endpoint"),
        ("token_endpoint", ..., "has no token_endpoint"),
        ("token_endpoint", ["https://auth.example.com/token"], "has no token_endpoint"),
        ("registration_endpoint", 5, "registration_endpoint .* not a string"),
        ("scopes_supported", "read", "scopes_supported .* not a list of strings"),
        ("token_endpoint_auth_methods_supported", "none", "token_endpoint_auth_methods_supported"),
    ],
)
def test_bad_authorization_server_fields_are_refused(key: str, value: Any, match: str) -> None:
    _refused(read_authorization_server, _as_document(**{key: value}), ISSUER, WHERE, match=match)


def test_loopback_http_endpoints_are_accepted() -> None:
    issuer = "http://127.0.0.1:9000"
    document = _as_document(
        issuer=issuer,
        authorization_endpoint="http://127.0.0.1:9000/authorize",
        token_endpoint="http://localhost:9000/token",
        registration_endpoint="http://[::1]:9000/register",
    )
    read = read_authorization_server(document, issuer, WHERE)
    assert read.authorization_endpoint == "http://127.0.0.1:9000/authorize"
    assert read.token_endpoint == "http://localhost:9000/token"
    assert read.registration_endpoint == "http://[::1]:9000/register"


def test_an_empty_registration_endpoint_is_none() -> None:
    assert (
        read_authorization_server(_as_document(registration_endpoint=""), ISSUER, WHERE).registration_endpoint
        is None
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), ("true", False), (1, False), (None, False), (..., False)],
)
def test_the_flags_are_set_only_by_true(value: Any, expected: bool) -> None:
    document = _as_document(
        authorization_response_iss_parameter_supported=value, client_id_metadata_document_supported=value
    )
    read = read_authorization_server(document, ISSUER, WHERE)
    assert read.iss_parameter_supported is expected
    assert read.client_id_metadata_documents is expected


# ---- the client ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("methods", "secret", "registered", "expected"),
    [
        (("client_secret_basic",), None, None, "none"),
        (("client_secret_basic",), "s", None, "client_secret_basic"),
        (("client_secret_post",), "s", None, "client_secret_post"),
        (("client_secret_post", "client_secret_basic"), "s", None, "client_secret_basic"),
        (("none",), "s", None, "client_secret_basic"),
        (("private_key_jwt",), "s", None, "client_secret_basic"),
        (("client_secret_basic",), "s", "client_secret_post", "client_secret_post"),
        (("client_secret_basic",), "s", "none", "none"),
        (("client_secret_post",), None, "client_secret_basic", "client_secret_basic"),
        (("client_secret_post",), "s", "private_key_jwt", "client_secret_post"),
        (("client_secret_post",), None, "private_key_jwt", "none"),
    ],
)
def test_choose_auth_method(
    methods: tuple[str, ...], secret: str | None, registered: str | None, expected: str
) -> None:
    server = _server(token_endpoint_auth_methods=methods)
    assert choose_auth_method(server, secret, registered) == expected


@pytest.mark.parametrize(
    ("methods", "expected"),
    [
        (("client_secret_basic", "none"), "none"),
        (("client_secret_basic",), "client_secret_basic"),
        (("client_secret_post",), "client_secret_post"),
        (("private_key_jwt",), "client_secret_basic"),
    ],
)
def test_registration_asks_for_a_public_client_when_it_may(methods: tuple[str, ...], expected: str) -> None:
    body = registration_request(
        _server(token_endpoint_auth_methods=methods),
        client_name="mcp-elicit",
        redirect_uri=REDIRECT,
        application_type="native",
        refresh=True,
    )
    assert body["token_endpoint_auth_method"] == expected


@pytest.mark.parametrize(
    ("refresh", "grants"), [(True, ["authorization_code", "refresh_token"]), (False, ["authorization_code"])]
)
def test_the_registration_request_body(refresh: bool, grants: list[str]) -> None:
    body = registration_request(
        _server(), client_name="mcp-elicit", redirect_uri=REDIRECT, application_type="native", refresh=refresh
    )
    assert body == {
        "client_name": "mcp-elicit",
        "redirect_uris": [REDIRECT],
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic",
        "application_type": "native",
    }


def test_the_registration_request_carries_a_client_uri_when_given() -> None:
    common: dict[str, Any] = {
        "client_name": "c",
        "redirect_uri": REDIRECT,
        "application_type": "web",
        "refresh": False,
    }
    assert (
        registration_request(_server(), client_uri="https://c.example", **common)["client_uri"]
        == "https://c.example"
    )
    assert "client_uri" not in registration_request(_server(), client_uri="", **common)
    assert "client_uri" not in registration_request(_server(), **common)


@pytest.mark.parametrize(
    ("document", "methods", "expected"),
    [
        ({"client_id": "c1"}, ("client_secret_basic",), ClientCredentials("c1", None, "none")),
        (
            {"client_id": "c1", "client_secret": ""},
            ("client_secret_basic",),
            ClientCredentials("c1", None, "none"),
        ),
        (
            {"client_id": "c1", "client_secret": "s3"},
            ("client_secret_basic",),
            ClientCredentials("c1", "s3", "client_secret_basic"),
        ),
        (
            {"client_id": "c1", "client_secret": "s3"},
            ("client_secret_post",),
            ClientCredentials("c1", "s3", "client_secret_post"),
        ),
        (
            {"client_id": "c1", "client_secret": "s3", "token_endpoint_auth_method": "client_secret_post"},
            ("client_secret_basic",),
            ClientCredentials("c1", "s3", "client_secret_post"),
        ),
        (
            {"client_id": "c1", "client_secret": "s3", "token_endpoint_auth_method": "none"},
            ("client_secret_basic",),
            ClientCredentials("c1", "s3", "none"),
        ),
        (
            {"client_id": "c1", "client_secret": "s3", "token_endpoint_auth_method": "private_key_jwt"},
            ("client_secret_post",),
            ClientCredentials("c1", "s3", "client_secret_post"),
        ),
        (
            {"client_id": "c1", "token_endpoint_auth_method": 42},
            ("client_secret_basic",),
            ClientCredentials("c1", None, "none"),
        ),
    ],
)
def test_read_registration(
    document: dict[str, Any], methods: tuple[str, ...], expected: ClientCredentials
) -> None:
    assert read_registration(document, _server(token_endpoint_auth_methods=methods)) == expected


@pytest.mark.parametrize(
    ("document", "match"),
    [
        (None, "not a JSON object"),
        ([{"client_id": "c"}], "not a JSON object"),
        ({}, "has no client_id"),
        ({"client_id": ""}, "has no client_id"),
        ({"client_id": 12}, "has no client_id"),
        ({"client_id": "c", "client_secret": 12}, "client_secret .* not a string"),
        (
            {"client_id": "c", "token_endpoint_auth_method": "client_secret_basic"},
            "registers client_secret_basic",
        ),
        (
            {"client_id": "c", "client_secret": "", "token_endpoint_auth_method": "client_secret_post"},
            "registers client_secret_post",
        ),
    ],
)
def test_a_bad_registration_answer_is_refused(document: object, match: str) -> None:
    message = _refused(read_registration, document, _server(), match=match)
    assert ISSUER in message


def _basic(headers: dict[str, str]) -> str:
    scheme, _, value = headers["Authorization"].partition(" ")
    assert scheme == "Basic"
    return base64.b64decode(value, validate=True).decode()


def test_client_secret_basic() -> None:
    headers, form = client_auth(ClientCredentials("my client:1", "p@ss:w/rd ü", "client_secret_basic"))
    assert form == {}
    assert set(headers) == {"Authorization"}
    pair = _basic(headers)
    assert pair == "my%20client%3A1:p%40ss%3Aw%2Frd%20%C3%BC"
    client_id, secret = pair.split(":")
    assert urllib.parse.unquote(client_id) == "my client:1"
    assert urllib.parse.unquote(secret) == "p@ss:w/rd ü"


def test_client_secret_post() -> None:
    headers, form = client_auth(ClientCredentials("c", "s", "client_secret_post"))
    assert headers == {}
    assert form == {"client_id": "c", "client_secret": "s"}


@pytest.mark.parametrize(
    "credentials",
    [
        ClientCredentials("c"),
        ClientCredentials("c", "s", "none"),
        ClientCredentials("c", None, "client_secret_basic"),
        ClientCredentials("c", None, "client_secret_post"),
        ClientCredentials("c", "s", "private_key_jwt"),
    ],
)
def test_without_a_usable_secret_only_the_client_id_is_sent(credentials: ClientCredentials) -> None:
    assert client_auth(credentials) == ({}, {"client_id": "c"})


def test_token_request_with_basic_authentication() -> None:
    headers, form = token_request(
        "authorization_code",
        ClientCredentials("c", "s", "client_secret_basic"),
        resource=SERVER_URL,
        fields={"code": CODE, "redirect_uri": REDIRECT, "code_verifier": "v"},
    )
    assert headers["Accept"] == "application/json"
    assert _basic(headers) == "c:s"
    assert form == {
        "grant_type": "authorization_code",
        "code": CODE,
        "redirect_uri": REDIRECT,
        "code_verifier": "v",
        "resource": SERVER_URL,
    }


def test_token_request_for_a_public_client() -> None:
    headers, form = token_request(
        "refresh_token", ClientCredentials("c"), resource=SERVER_URL, fields={"refresh_token": "r"}
    )
    assert headers == {"Accept": "application/json"}
    assert form == {
        "grant_type": "refresh_token",
        "refresh_token": "r",
        "resource": SERVER_URL,
        "client_id": "c",
    }


def test_token_request_resource_and_authentication_win_over_fields() -> None:
    _, form = token_request(
        "refresh_token",
        ClientCredentials("real", "s", "client_secret_post"),
        resource=SERVER_URL,
        fields={"refresh_token": "r", "resource": "https://evil.example", "client_id": "fake"},
    )
    assert form["resource"] == SERVER_URL
    assert form["client_id"] == "real"
    assert form["client_secret"] == "s"


# ---- scope -----------------------------------------------------------------------------


OFFLINE = _server(scopes_supported=("read", "offline_access"))
NO_OFFLINE = _server(scopes_supported=("read", "write"))
NO_SCOPES = _server()


@pytest.mark.parametrize(
    ("challenged", "resource_scopes", "server", "previous", "refresh", "expected"),
    [
        ("a b", ("x", "y"), NO_OFFLINE, None, True, "a b"),
        ("  a   b ", None, NO_OFFLINE, None, True, "a b"),
        (None, ("x", "y"), NO_OFFLINE, None, True, "x y"),
        ("", ("x", "y"), NO_OFFLINE, None, True, "x y"),
        (None, None, NO_OFFLINE, None, True, None),
        (None, (), NO_OFFLINE, None, True, None),
        (None, ("", "x"), NO_OFFLINE, None, True, "x"),
        ("a b", None, OFFLINE, None, True, "a b offline_access"),
        (None, ("x",), OFFLINE, None, True, "x offline_access"),
        ("a b", None, OFFLINE, None, False, "a b"),
        ("a offline_access b", None, OFFLINE, None, True, "a offline_access b"),
        ("a", None, NO_SCOPES, None, True, "a"),
        (None, None, OFFLINE, None, True, None),
        (None, (), OFFLINE, None, True, None),
        ("b c", ("x",), NO_OFFLINE, "a b", True, "a b c"),
        ("c a", None, NO_OFFLINE, "b a", True, "b a c"),
        (None, ("x", "a"), NO_OFFLINE, "a b", True, "a b x"),
        (None, None, NO_OFFLINE, "a b", True, "a b"),
        ("b", None, OFFLINE, "a", True, "a b offline_access"),
        ("b", None, OFFLINE, "a offline_access", False, "a offline_access b"),
        (None, None, OFFLINE, "a", True, "a offline_access"),
        ("", None, NO_OFFLINE, "", True, None),
    ],
)
def test_select_scope(
    challenged: str | None,
    resource_scopes: tuple[str, ...] | None,
    server: AuthorizationServer,
    previous: str | None,
    refresh: bool,
    expected: str | None,
) -> None:
    assert (
        select_scope(challenged, _resource(resource_scopes), server, previous=previous, refresh=refresh)
        == expected
    )


def test_offline_access_in_the_resource_scopes_alone_does_not_count() -> None:
    resource = _resource(("x", "offline_access"))
    assert select_scope("a", resource, NO_OFFLINE) == "a"


@given(
    st.lists(st.sampled_from("abcdef"), max_size=6),
    st.lists(st.sampled_from("abcdef"), max_size=6),
)
def test_step_up_is_the_ordered_union(previous: list[str], challenged: list[str]) -> None:
    scope = select_scope(" ".join(challenged), _resource(), NO_OFFLINE, previous=" ".join(previous))
    union = list(dict.fromkeys(previous + challenged))
    assert scope == (" ".join(union) or None)


# ---- PKCE and the authorization URL -------------------------------------------------


def test_pkce_verifier_and_s256_challenge() -> None:
    pkce = Pkce.new()
    assert 43 <= len(pkce.verifier) <= 128
    assert re.fullmatch(r"[A-Za-z0-9\-._~]+", pkce.verifier)
    digest = hashlib.sha256(pkce.verifier.encode("ascii")).digest()
    assert pkce.challenge == base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")
    assert "=" not in pkce.challenge
    assert len(pkce.challenge) == 43


def test_pkce_values_are_fresh_each_time() -> None:
    made = [Pkce.new() for _ in range(20)]
    assert len({p.verifier for p in made}) == 20
    assert len({p.challenge for p in made}) == 20


def test_pkce_repr_shows_the_challenge_not_the_verifier() -> None:
    pkce = Pkce.new()
    assert pkce.verifier not in repr(pkce)  # it proves who asked for the code: never shown
    assert pkce.challenge in repr(pkce)  # sent in the authorization URL anyway


def test_pkce_matches_the_rfc_7636_example() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    assert (
        base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


def _query(url: str) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query, keep_blank_values=True)


def test_the_authorization_url_carries_every_parameter() -> None:
    pkce = Pkce("v" * 43, "chal-lenge_")
    url = authorization_url(
        _server(),
        client_id="https://client.example/meta?x=1&y=2",
        redirect_uri=REDIRECT,
        state="s t&u=v",
        pkce=pkce,
        scope="files:read offline_access",
        resource="https://mcp.example.com/mcp?a=b",
    )
    assert url.startswith(f"{ISSUER}/authorize?")
    assert _query(url) == {
        "response_type": ["code"],
        "client_id": ["https://client.example/meta?x=1&y=2"],
        "redirect_uri": [REDIRECT],
        "state": ["s t&u=v"],
        "code_challenge": ["chal-lenge_"],
        "code_challenge_method": ["S256"],
        "resource": ["https://mcp.example.com/mcp?a=b"],
        "scope": ["files:read offline_access"],
    }
    assert "v" * 43 not in url  # the verifier never leaves with the request
    assert "&y=2" not in url  # values are encoded, not spliced in


def _simple_url(server: AuthorizationServer, *, scope: str | None) -> str:
    """The authorization URL for client "c", state "s", a fresh PKCE pair."""
    return authorization_url(
        server,
        client_id="c",
        redirect_uri=REDIRECT,
        state="s",
        pkce=Pkce.new(),
        scope=scope,
        resource=SERVER_URL,
    )


@pytest.mark.parametrize("scope", [None, ""])
def test_the_authorization_url_omits_an_empty_scope(scope: str | None) -> None:
    url = _simple_url(_server(), scope=scope)
    assert "scope" not in _query(url)
    assert _query(url)["response_type"] == ["code"]


def test_an_endpoint_query_is_kept() -> None:
    server = _server(authorization_endpoint=f"{ISSUER}/authorize?tenant=t1")
    url = _simple_url(server, scope="a")
    assert url.startswith(f"{ISSUER}/authorize?tenant=t1&")
    query = _query(url)
    assert query["tenant"] == ["t1"]
    assert query["client_id"] == ["c"]
    assert query["scope"] == ["a"]


def test_an_endpoint_with_an_empty_query_gets_no_second_question_mark() -> None:
    server = _server(authorization_endpoint=f"{ISSUER}/authorize?")
    url = _simple_url(server, scope=None)
    assert _query(url)["response_type"] == ["code"]


# ---- the callback ----------------------------------------------------------------------


ISS_SERVER = _server(iss_parameter_supported=True)


def _callback(*pairs: tuple[str, str]) -> str:
    return REDIRECT + "?" + urllib.parse.urlencode(pairs)


@pytest.mark.parametrize(
    ("url", "server"),
    [
        (_callback(("code", CODE), ("state", STATE)), _server()),
        (_callback(("state", STATE), ("code", CODE), ("iss", ISSUER)), _server()),
        (_callback(("code", CODE), ("state", STATE), ("iss", ISSUER)), ISS_SERVER),
        (_callback(("code", CODE), ("state", STATE), ("extra", "x"), ("extra", "y")), _server()),
    ],
)
def test_a_good_callback_gives_the_code(url: str, server: AuthorizationServer) -> None:
    assert read_callback(url, state=STATE, server=server) == CODE


def test_a_callback_code_is_decoded() -> None:
    url = _callback(("code", "a+b/c=="), ("state", "s t"))
    assert read_callback(url, state="s t", server=_server()) == "a+b/c=="


@pytest.mark.parametrize(
    ("url", "server", "match"),
    [
        (_callback(("code", CODE), ("state", STATE + "x")), _server(), "state"),
        (_callback(("code", CODE), ("state", STATE[:-1])), _server(), "state"),
        (_callback(("code", CODE)), _server(), "state"),
        (_callback(("code", CODE), ("state", "")), _server(), "state"),
        (_callback(("code", CODE), ("state", STATE), ("state", STATE)), _server(), "state 2 times"),
        (_callback(("code", CODE), ("code", CODE), ("state", STATE)), _server(), "code 2 times"),
        (
            _callback(("code", CODE), ("state", STATE), ("iss", ISSUER), ("iss", ISSUER)),
            ISS_SERVER,
            "iss 2 times",
        ),
        (_callback(("code", CODE), ("state", STATE)), ISS_SERVER, "no iss"),
        (_callback(("code", CODE), ("state", STATE), ("iss", ISSUER + "/")), ISS_SERVER, "comes from issuer"),
        (_callback(("code", CODE), ("state", STATE), ("iss", ISSUER + "/")), _server(), "comes from issuer"),
        (
            _callback(("code", CODE), ("state", STATE), ("iss", "https://evil.example")),
            _server(),
            "comes from",
        ),
        (_callback(("code", CODE), ("state", STATE), ("iss", "")), _server(), "comes from issuer"),
        (_callback(("state", STATE)), _server(), "no code"),
        (_callback(("state", STATE), ("code", "")), _server(), "no code"),
        (_callback(("error", "access_denied"), ("state", STATE + "x")), _server(), "state"),
        (
            _callback(("error", "access_denied"), ("state", STATE), ("iss", "https://evil.example")),
            _server(),
            "comes from",
        ),
        (
            _callback(("error", "access_denied"), ("state", STATE), ("code", CODE)),
            _server(),
            r"\(access_denied\)",
        ),
    ],
)
def test_a_bad_callback_is_refused(url: str, server: AuthorizationServer, match: str) -> None:
    message = _refused(read_callback, url, state=STATE, server=server, match=match)
    assert CODE not in message
    assert STATE not in message


def test_an_error_callback_names_the_error_and_its_description() -> None:
    url = _callback(("error", "access_denied"), ("error_description", "The user said no"), ("state", STATE))
    message = _refused(read_callback, url, state=STATE, server=_server())
    assert message == f"{ISSUER} refused the authorization (access_denied: The user said no)"


def test_an_error_description_is_cut_short() -> None:
    url = _callback(("error", "server_error"), ("error_description", "x" * 1000), ("state", STATE))
    message = _refused(read_callback, url, state=STATE, server=_server(), match="server_error")
    assert "x" * 200 in message
    assert "x" * 201 not in message


def test_an_error_callback_without_a_description() -> None:
    url = _callback(("error", "invalid_scope"), ("state", STATE))
    assert _refused(read_callback, url, state=STATE, server=_server()).endswith("(invalid_scope)")


# ---- tokens ----------------------------------------------------------------------------


ACCESS = "eyJhbGciOiJSUzI1NiJ9.access-secret"
REFRESH = "refresh-secret-8xLOxBtZp8"


@pytest.mark.parametrize("kind", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_a_good_token_answer(kind: str) -> None:
    document = {
        "access_token": ACCESS,
        "token_type": kind,
        "expires_in": 3600,
        "refresh_token": REFRESH,
        "scope": "read write",
    }
    tokens = read_tokens(200, document, _server(), now=1000.0)
    assert tokens == Tokens(ACCESS, REFRESH, 4600.0, "read write")


def test_a_minimal_token_answer() -> None:
    tokens = read_tokens(200, {"access_token": ACCESS, "token_type": "Bearer"}, _server(), now=5.0)
    assert tokens == Tokens(ACCESS, None, None, None)


@pytest.mark.parametrize(
    ("expires_in", "expected"),
    [
        (3600, 1000.0 + 3600),
        (0.5, 1000.5),
        (True, None),
        (False, None),
        (0, None),
        (-10, None),
        ("3600", 4600.0),
        ("36.5", None),
        ("\xb2", None),  # "²": str.isdigit, not int()
        ("9" * 5000, None),  # past the digits int() reads at all
        ("", None),
        (None, None),
        ([3600], None),
    ],
)
def test_expires_in(expires_in: Any, expected: float | None) -> None:
    document = {"access_token": ACCESS, "token_type": "Bearer", "expires_in": expires_in}
    assert read_tokens(200, document, _server(), now=1000.0).expires_at == expected


@pytest.mark.parametrize(("refresh", "scope"), [("", ""), (12, 12), (None, ["a"]), ({"x": 1}, None)])
def test_odd_refresh_tokens_and_scopes_are_dropped(refresh: Any, scope: Any) -> None:
    document = {"access_token": ACCESS, "token_type": "Bearer", "refresh_token": refresh, "scope": scope}
    tokens = read_tokens(200, document, _server(), now=0.0)
    assert tokens.refresh_token is None
    assert tokens.scope == (scope if isinstance(scope, str) and scope else None)


@pytest.mark.parametrize(
    ("status", "document", "message"),
    [
        (
            400,
            {"error": "invalid_grant", "error_description": "code " + CODE},
            f"{ISSUER} refused: invalid_grant",
        ),
        (401, {"error": "invalid_client"}, f"{ISSUER} refused: invalid_client"),
        (200, {"error": "invalid_request"}, f"{ISSUER} refused: invalid_request"),
        (400, {"access_token": ACCESS, "token_type": "Bearer", "error": "x"}, f"{ISSUER} refused: x"),
        (500, None, "answered HTTP 500 without tokens"),
        (400, {"error": 42}, "answered HTTP 400 without tokens"),
        (400, {"error": ""}, "answered HTTP 400 without tokens"),
        (400, {"error": "x" * 65}, "answered HTTP 400 without tokens"),
        (400, {"error": "bad\nline"}, "answered HTTP 400 without tokens"),
        (400, {"error": "café"}, "answered HTTP 400 without tokens"),
        (400, [{"error": "invalid_grant"}], "answered HTTP 400 without tokens"),
        (200, None, "answered HTTP 200 without tokens"),
        (200, "access_token", "answered HTTP 200 without tokens"),
        (200, {"token_type": "Bearer"}, "answered HTTP 200 without tokens"),
        (201, {"access_token": ACCESS, "token_type": "Bearer"}, "answered HTTP 201 without tokens"),
    ],
)
def test_a_token_endpoint_refusal(status: int, document: object, message: str) -> None:
    text = _refused(read_tokens, status, document, _server(), now=0.0)
    assert text.endswith(message)
    assert CODE not in text
    assert ACCESS not in text


@pytest.mark.parametrize(
    ("document", "match"),
    [
        ({"access_token": "", "token_type": "Bearer"}, "not a string"),
        ({"access_token": None, "token_type": "Bearer"}, "not a string"),
        ({"access_token": 123, "token_type": "Bearer"}, "not a string"),
        ({"access_token": ACCESS}, "None token, not Bearer"),
        ({"access_token": ACCESS, "token_type": "DPoP"}, "'DPoP' token, not Bearer"),
        ({"access_token": ACCESS, "token_type": "mac"}, "not Bearer"),
        ({"access_token": ACCESS, "token_type": "Bearer "}, "not Bearer"),
        ({"access_token": ACCESS, "token_type": 1}, "not Bearer"),
    ],
)
def test_a_bad_token_answer_is_refused(document: dict[str, Any], match: str) -> None:
    text = _refused(read_tokens, 200, document, _server(), now=0.0, match=match)
    assert ACCESS not in text


@pytest.mark.parametrize(
    ("now", "margin", "fresh"),
    [
        (0.0, 30.0, True),
        (969.0, 30.0, True),
        (970.0, 30.0, False),
        (999.0, 30.0, False),
        (1001.0, 30.0, False),
        (999.0, 0.0, True),
        (1000.0, 0.0, False),
        (899.0, 100.0, True),
        (900.0, 100.0, False),
    ],
)
def test_tokens_fresh(now: float, margin: float, fresh: bool) -> None:
    assert Tokens(ACCESS, expires_at=1000.0).fresh(now, margin=margin) is fresh


def test_tokens_fresh_default_margin_and_unknown_expiry() -> None:
    tokens = Tokens(ACCESS, expires_at=1000.0)
    assert tokens.fresh(969.9)
    assert not tokens.fresh(970.0)
    assert Tokens(ACCESS).fresh(1e12)


def test_tokens_repr_hides_the_tokens() -> None:
    tokens = Tokens(ACCESS, REFRESH, 1234.0, "read")
    text = repr(tokens)
    assert ACCESS not in text
    assert REFRESH not in text
    assert "1234.0" in text
    assert "read" in text
    assert ACCESS not in str(tokens)


# ---- private_key_jwt -------------------------------------------------------------------


def _pem(key: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _segments(jwt: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    import json as _json

    head, body, signature = jwt.split(".")

    def decode(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    return _json.loads(decode(head)), _json.loads(decode(body)), f"{head}.{body}".encode(), decode(signature)


def test_an_es256_client_assertion_verifies_with_the_public_key() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    key = ec.generate_private_key(ec.SECP256R1())
    jwt = client_assertion("cid", ISSUER, _pem(key), now=1000.0)
    header, claims, signed, signature = _segments(jwt)
    assert header == {"alg": "ES256", "typ": "JWT"}
    assert claims["iss"] == claims["sub"] == "cid"
    assert claims["aud"] == ISSUER
    assert (claims["iat"], claims["exp"]) == (1000, 1300)
    assert len(signature) == 64
    der = utils.encode_dss_signature(
        int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    )
    key.public_key().verify(der, signed, ec.ECDSA(hashes.SHA256()))  # raises if wrong
    assert client_assertion("cid", ISSUER, _pem(key), now=1000.0) != jwt  # a fresh jti each time


def test_an_rs256_client_assertion_verifies_with_the_public_key() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    header, _, signed, signature = _segments(client_assertion("cid", ISSUER, _pem(key), now=0.0))
    assert header["alg"] == "RS256"
    key.public_key().verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())


def test_an_unusable_private_key_is_an_authorization_error() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    with pytest.raises(AuthorizationError, match="does not load"):
        client_assertion("cid", ISSUER, "not a key", now=0.0)
    with pytest.raises(AuthorizationError, match="P-256"):
        client_assertion("cid", ISSUER, _pem(ec.generate_private_key(ec.SECP384R1())), now=0.0)


def test_private_key_jwt_puts_the_assertion_in_the_form() -> None:
    credentials = ClientCredentials("cid", None, "private_key_jwt", "a.b.c")
    headers, form = client_auth(credentials)
    assert headers == {}
    assert form == {
        "client_id": "cid",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": "a.b.c",
    }
    assert "a.b.c" not in repr(credentials)


# ---- enterprise-managed authorization: the token exchange for an ID-JAG -------------------


def test_the_id_jag_request_names_the_authorization_server_and_the_resource() -> None:
    form = id_jag_request(
        ISSUER, SERVER_URL, id_token="id.tok.en", client_id="c", client_secret="s", scope="a b"
    )
    assert form == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "audience": ISSUER,
        "resource": SERVER_URL,
        "subject_token": "id.tok.en",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "client_id": "c",
        "client_secret": "s",
        "scope": "a b",
    }
    assert "client_secret" not in id_jag_request(ISSUER, SERVER_URL, id_token="x", client_id="c")


def test_an_id_jag_is_read_from_the_answer() -> None:
    answer = {"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "access_token": "h.p.s"}
    assert read_id_jag(200, {**answer, "token_type": "N_A"}, "idp") == "h.p.s"


@pytest.mark.parametrize(
    ("status", "document", "match"),
    [
        (400, {"error": "access_denied"}, "refused the token exchange: access_denied"),
        (400, {"error": "x" * 65}, "HTTP 400 without an ID-JAG"),
        (500, None, "HTTP 500 without an ID-JAG"),
        (200, {"access_token": "h.p.s"}, "issued None, not an ID-JAG"),
        (
            200,
            {"issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "access_token": "h.p.s"},
            "not an ID-JAG",
        ),
        (
            200,
            {"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "access_token": "opaque"},
            "not a JWT",
        ),
        (200, {"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}, "not a JWT"),
    ],
)
def test_a_bad_token_exchange_answer_is_refused(
    status: int, document: dict[str, Any] | None, match: str
) -> None:
    _refused(read_id_jag, status, document, "idp", match=match)


def test_a_long_token_type_is_cut_short_in_the_error() -> None:
    text = _refused(read_tokens, 200, {"access_token": ACCESS, "token_type": "x" * 5000}, _server(), now=0.0)
    assert "x" * 40 not in text and "..." in text
    text = _refused(read_id_jag, 200, {"issued_token_type": "y" * 5000, "access_token": "h.p.s"}, "idp")
    assert "y" * 40 not in text and "..." in text


@pytest.mark.parametrize(
    ("error", "description"),
    [
        ("access_denied\n\x1b[2Jmcp-elicit: signed in", None),
        ("access_denied", "no\r\nmcp-elicit: signed in at https://id.example \x1b]8;;https://evil\x07here"),
        ("x" * 5000, "\u202edesrever\u2028"),
    ],
    ids=["error", "description", "long-and-unicode"],
)
def test_an_error_callback_is_quoted_inert(error: str, description: str | None) -> None:
    """RFC 6749 §4.1.2.1: ``error`` and ``error_description`` are printable ASCII. What else a
    redirect carries (a line break that forges a line of output, a terminal escape, bidi
    controls, a code of kilobytes) is not repeated: each is shown as ``?``, and cut short."""
    pairs = [("error", error), ("state", STATE)] + (
        [("error_description", description)] if description else []
    )
    message = _refused(read_callback, _callback(*pairs), state=STATE, server=_server())
    assert message.startswith(f"{ISSUER} refused the authorization (")
    assert all(" " <= ch <= "~" for ch in message), ascii(message[:300])
    assert len(message) < 400


def test_another_issuer_in_the_callback_is_quoted_cut_short() -> None:
    callback = _callback(("code", CODE), ("state", STATE), ("iss", "https://evil.example/" + "x" * 200_000))
    message = _refused(read_callback, callback, state=STATE, server=_server())
    assert "comes from issuer 'https://evil.example/xxx" in message
    assert len(message) < 400


_HUGE = "https://evil.example/" + "x" * 200_000


@pytest.mark.parametrize(
    ("read", "document", "fault"),
    [
        (read_authorization_server, _as_document(issuer=_HUGE), "names another issuer"),
        (read_authorization_server, _as_document(issuer=["x" * 200_000]), "names another issuer"),
        (read_authorization_server, _as_document(token_endpoint="http" + _HUGE[5:]), "plain http"),
        (
            read_authorization_server,
            _as_document(authorization_endpoint="javascript:" + _HUGE),
            "not an http",
        ),
        (read_protected_resource, _pr_document(resource=_HUGE), "another resource"),
        (read_protected_resource, _pr_document(authorization_servers=["ftp" + _HUGE[5:]]), "not an http"),
    ],
    ids=["issuer", "issuer-list", "token-endpoint", "authorization-endpoint", "resource", "server"],
)
def test_a_huge_value_in_metadata_is_quoted_cut_short(read: Any, document: Any, fault: str) -> None:
    """Metadata holds what its server wants, up to the 256 KiB a document is read to: a
    refusal names the value it refuses by its first characters, not all of it."""
    where = ISSUER if read is read_authorization_server else SERVER_URL
    message = _refused(read, document, where, WHERE, match=fault)
    assert "evil.example/xxxx" in message or "'xxxx" in message
    assert "..." in message and len(message) < 600, len(message)


def _nested(depth: int) -> object:
    value: object = "Bearer"
    for _ in range(depth):
        value = [value]
    return value


def test_what_a_server_says_nested_too_deeply_to_quote_is_still_refused_by_name() -> None:
    # 1000 levels (a JSON reader takes 1024): quoting it with repr raised RecursionError
    deep = _nested(1000)
    with pytest.raises(AuthorizationError, match=r"gave a \[\[\[\[\.\.\.\]\]\]\] token"):
        read_tokens(200, {"access_token": ACCESS, "token_type": deep}, _server(), now=1.0)
    with pytest.raises(AuthorizationError, match=r"issued \[\[\[\[\.\.\.\]\]\]\], not an ID-JAG"):
        read_id_jag(200, {"access_token": "h.p.s", "issued_token_type": deep, "token_type": "N_A"}, "idp")
    with pytest.raises(AuthorizationError, match=r"for issuer \[\[\[\[\.\.\.\]\]\]\], not"):
        read_authorization_server({"issuer": deep}, "https://as.example", "https://as.example/.well-known/x")
