"""The sans-IO authorization core (``mcp_elicit.core.authorization``): token answers and refusals, tokens'
freshness, private_key_jwt client assertions, and the token exchange for an ID-JAG."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcp_elicit.core.token_endpoint import (
    ClientCredentials,
    Tokens,
    client_assertion,
    client_auth,
    id_jag_request,
    read_id_jag,
    read_tokens,
)
from mcp_elicit.errors import AuthorizationError

from support.authorization import ACCESS, CODE, ISSUER, SERVER_URL, _refused, _server

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
