"""The sans-IO authorization core (``mcp_elicit.core.authorization``): the client: its authentication method,
dynamic registration, client secrets and token requests."""

from __future__ import annotations

import base64
import urllib.parse
from typing import Any

import pytest

from mcp_elicit.core.token_endpoint import (
    ClientCredentials,
    choose_auth_method,
    client_auth,
    read_registration,
    registration_request,
    token_request,
)

from support.authorization import CODE, ISSUER, REDIRECT, SERVER_URL, _refused, _server


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
