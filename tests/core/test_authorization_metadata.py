"""The sans-IO authorization core (``mcp_elicit.core.authorization``): protected resource and authorization
server metadata documents, read and refused, and what a server says there quoted inert and cut
short."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.authorization import (
    AuthorizationServer,
    ProtectedResource,
    read_authorization_server,
    read_protected_resource,
)
from mcp_elicit.core.authorization_urls import protected_resource_urls
from mcp_elicit.core.token_endpoint import (
    read_id_jag,
    read_tokens,
)
from mcp_elicit.errors import AuthorizationError

from support.authorization import ACCESS, ISSUER, SERVER_URL, _refused, _server

WHERE = "https://where.example/doc"
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


def test_a_good_protected_resource_document() -> None:
    read = read_protected_resource(PR_DOCUMENT, SERVER_URL, WHERE)
    assert read == ProtectedResource(SERVER_URL, (ISSUER,), ("read", "write"))


def test_a_protected_resource_document_without_scopes_and_with_several_servers() -> None:
    document = _pr_document(
        resource="https://mcp.example.com/",
        scopes_supported=...,
        authorization_servers=[ISSUER, "https://auth2.example.com"],
    )
    read = read_protected_resource(document, SERVER_URL, WHERE)
    assert read.resource == "https://mcp.example.com/"
    assert read.authorization_servers == (ISSUER, "https://auth2.example.com")
    assert read.scopes_supported is None


def test_a_server_on_this_machine_may_name_an_authorization_server_on_it() -> None:
    document = _pr_document(resource="http://127.0.0.1:3000/mcp", authorization_servers=["http://[::1]:9"])
    read = read_protected_resource(document, "http://127.0.0.1:3000/mcp", WHERE)
    assert read.authorization_servers == ("http://[::1]:9",)


@pytest.mark.parametrize("issuer", ["http://[::1]:9", "https://127.0.0.1", "https://192.168.1.1"])
def test_a_server_elsewhere_naming_an_authorization_server_nearer_home_is_refused(issuer: str) -> None:
    document = _pr_document(authorization_servers=[ISSUER, issuer])
    _refused(read_protected_resource, document, SERVER_URL, WHERE, match="request forgery")


@pytest.mark.parametrize("endpoint", ["authorization_endpoint", "token_endpoint", "registration_endpoint"])
def test_an_authorization_server_elsewhere_naming_endpoints_nearer_home_is_refused(endpoint: str) -> None:
    document = _as_document(**{endpoint: "https://10.0.0.1/x"})
    _refused(read_authorization_server, document, ISSUER, WHERE, match="a private network")


def test_a_backslash_in_the_authority_is_refused() -> None:
    """A browser reads ``\\`` as ``/`` in an https URL, so the host it opens is the one
    before the backslash (127.0.0.1), where Python's split reads the one after it."""
    document = _as_document(authorization_endpoint="https://127.0.0.1\\@auth.example.com/authorize")
    _refused(read_authorization_server, document, ISSUER, WHERE, match="not a valid URL")


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
