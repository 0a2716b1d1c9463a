"""DPoP on the client's side (core/dpop.py, transports/http_dpop.py, the DPoP parts of
core/authorization.py, core/token_endpoint.py and transports/token_store.py).

Proofs are checked with joserfc, a JOSE library nobody here wrote, so a mistake shared by
the signer and its own reading cannot hide. The whole flow runs against the official
conformance suite's DPoP authorization and MCP servers (tests/conformance: ``auth/dpop``
and ``auth/dpop-nonce``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given
from hypothesis import strategies as st
from joserfc import jws
from joserfc.jwk import ECKey, OKPKey, RSAKey

from mcp_elicit.core.authorization import AuthorizationServer, read_authorization_server, token_challenges
from mcp_elicit.core.dpop import DpopKey, NonceError, ProofError, check_proof, content_digest, proof_target
from mcp_elicit.core.jws import sign_compact
from mcp_elicit.core.token_endpoint import Tokens, read_tokens
from mcp_elicit.errors import AuthorizationError
from mcp_elicit.transports.http_dpop import DpopProver
from mcp_elicit.transports.token_store import Stored

NOW = 1_800_000_000.0
ISSUER = "https://as.example"
TOKEN = "an.access.token"


def _verified(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The proof's header and claims, once joserfc has verified its signature with the
    public key the header carries."""
    header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
    key = ECKey.import_key(header["jwk"])
    verified = jws.deserialize_compact(proof, key, algorithms=["ES256"])
    return dict(verified.headers()), json.loads(verified.payload)


def test_a_resource_proof_is_signed_and_carries_every_claim() -> None:
    key = DpopKey.generate()
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    proof = key.proof(
        "post", "https://mcp.example/mcp?x=1#frag", now=NOW + 0.9, nonce="n-1", access_token=TOKEN, body=body
    )
    header, claims = _verified(proof)
    assert header == {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.jwk}
    assert "d" not in header["jwk"]  # the public half only
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://mcp.example/mcp"  # RFC 9449 §4.2: no query, no fragment
    assert claims["iat"] == int(NOW)
    assert claims["nonce"] == "n-1"
    ath = base64.urlsafe_b64encode(hashlib.sha256(TOKEN.encode()).digest()).rstrip(b"=").decode()
    assert claims["ath"] == ath
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
    assert claims["content_digest"] == f"sha-256=:{digest}:"
    assert len(claims["jti"]) >= 16


def test_a_token_endpoint_proof_has_no_ath_nonce_or_digest() -> None:
    _, claims = _verified(DpopKey.generate().proof("POST", f"{ISSUER}/token", now=NOW))
    assert set(claims) == {"jti", "htm", "htu", "iat"}


def test_every_proof_is_fresh() -> None:
    key = DpopKey.generate()
    jtis = {_verified(key.proof("POST", "https://mcp.example/mcp", now=NOW))[1]["jti"] for _ in range(20)}
    assert len(jtis) == 20


def test_the_thumbprint_is_rfc_7638s() -> None:
    key = DpopKey.generate()
    assert key.thumbprint == ECKey.import_key(key.jwk).thumbprint()


def test_the_key_survives_a_round_trip_through_pem() -> None:
    key = DpopKey.generate()
    again = DpopKey.from_pem(key.private_pem())
    assert again.thumbprint == key.thumbprint
    assert "PRIVATE KEY" in key.private_pem()
    assert key.private_pem() not in repr(key)


@pytest.mark.parametrize(
    "pem",
    [
        "not a key",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        "ключ",
    ],
)
def test_a_damaged_stored_key_is_a_clear_error(pem: str) -> None:
    with pytest.raises(AuthorizationError, match="stored DPoP key does not load"):
        DpopKey.from_pem(pem)


def test_only_a_p256_key_signs() -> None:
    with pytest.raises(AuthorizationError, match="P-256"):
        DpopKey(ec.generate_private_key(ec.SECP384R1()))
    pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        .decode()
    )
    with pytest.raises(AuthorizationError, match="not an EC key"):
        DpopKey.from_pem(pem)


def test_content_digest_and_proof_target() -> None:
    assert content_digest(b"") == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"
    assert proof_target("http://127.0.0.1:8000/mcp?session=1") == "http://127.0.0.1:8000/mcp"
    assert proof_target("https://ann:pw@mcp.example:8443/mcp#f") == "https://mcp.example:8443/mcp"


# ---- challenges, metadata, token answers ---------------------------------------------


def test_dpop_and_bearer_challenges_are_both_read() -> None:
    found = token_challenges(
        [
            'Basic realm="x", DPoP error="use_dpop_nonce", resource_metadata="https://r/prm"',
            'Bearer scope="a"',
        ]
    )
    assert [(c.scheme, c.error) for c in found] == [("DPoP", "use_dpop_nonce"), ("Bearer", None)]
    assert found[0].resource_metadata == "https://r/prm"
    assert token_challenges(['Basic realm="x"', "Negotiate"]) == []


def _metadata(**extra: Any) -> dict[str, Any]:
    return {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


def test_the_servers_dpop_algorithms_are_read() -> None:
    offered = read_authorization_server(
        _metadata(dpop_signing_alg_values_supported=["ES256", "RS256"]), ISSUER, "x"
    )
    assert offered.dpop_algorithms == ("ES256", "RS256")
    assert read_authorization_server(_metadata(), ISSUER, "x").dpop_algorithms is None
    with pytest.raises(AuthorizationError, match="dpop_signing_alg_values_supported"):
        read_authorization_server(_metadata(dpop_signing_alg_values_supported="ES256"), ISSUER, "x")


SERVER = AuthorizationServer(ISSUER, f"{ISSUER}/authorize", f"{ISSUER}/token")


@pytest.mark.parametrize(("kind", "expected"), [("DPoP", "DPoP"), ("dpop", "DPoP"), ("Bearer", "Bearer")])
def test_after_a_proof_a_dpop_or_bearer_token_is_taken(kind: str, expected: str) -> None:
    tokens = read_tokens(200, {"access_token": TOKEN, "token_type": kind}, SERVER, now=NOW, dpop=True)
    assert tokens.token_type == expected


def test_without_a_proof_a_dpop_token_is_refused() -> None:
    with pytest.raises(AuthorizationError, match="only in answer to a DPoP proof") as info:
        read_tokens(200, {"access_token": TOKEN, "token_type": "DPoP"}, SERVER, now=NOW)
    assert TOKEN not in str(info.value)


# ---- the store -------------------------------------------------------------------------


def test_a_dpop_token_is_stored_with_its_key() -> None:
    key = DpopKey.generate()
    stored = Stored(ISSUER, "s", Tokens(TOKEN, "r", NOW, "s", "DPoP"), {}, key.private_pem())
    back = Stored.from_record(json.loads(json.dumps(stored.to_record())))
    assert back.tokens == stored.tokens
    assert back.dpop_key is not None and DpopKey.from_pem(back.dpop_key).thumbprint == key.thumbprint
    assert key.private_pem() not in repr(back)


def test_a_record_from_before_dpop_reads_as_bearer() -> None:
    record = Stored(ISSUER, None, Tokens(TOKEN)).to_record()
    del record["tokens"]["token_type"], record["dpop_key"]
    back = Stored.from_record(record)
    assert back.tokens is not None and back.tokens.token_type == "Bearer"
    assert back.dpop_key is None


def test_a_record_with_an_unknown_token_type_is_not_trusted() -> None:
    record = Stored(ISSUER, None, Tokens(TOKEN)).to_record()
    record["tokens"]["token_type"] = "MAC"
    with pytest.raises(ValueError, match="damaged"):
        Stored.from_record(record)


# ---- nonces ----------------------------------------------------------------------------


def _nonce_of(proof: str) -> object:
    return _verified(proof)[1].get("nonce")


def test_a_servers_nonce_goes_in_later_proofs_to_its_origin_only() -> None:
    prover = DpopProver(lambda: NOW)
    assert prover.heard("https://as.example/token", httpx.Headers({"DPoP-Nonce": "abc"})) is True
    assert prover.heard("https://AS.example/other", httpx.Headers({"DPoP-Nonce": "abc"})) is False  # known
    assert _nonce_of(prover.proof("POST", "https://as.example/token")) == "abc"
    assert _nonce_of(prover.proof("POST", "https://mcp.example/mcp")) is None
    assert prover.heard("https://as.example/token", httpx.Headers({"DPoP-Nonce": "def"})) is True
    assert _nonce_of(prover.proof("POST", "https://as.example/token")) == "def"


@pytest.mark.parametrize("nonce", ["", "a b", 'quote"', "back\\slash", "x" * 513, "ümlaut"])
def test_a_nonce_that_is_not_nqchar_is_ignored(nonce: str) -> None:
    prover = DpopProver(lambda: NOW)
    headers = httpx.Headers([(b"DPoP-Nonce", nonce.encode("utf-8"))])
    assert prover.heard("https://as.example/token", headers) is False
    assert _nonce_of(prover.proof("POST", "https://as.example/token")) is None


def test_a_request_is_signed_for_its_method_url_token_and_body() -> None:
    prover = DpopProver(lambda: NOW)
    request = httpx.Request("POST", "https://mcp.example/mcp", content=b'{"a":1}')
    prover.sign(request, TOKEN)
    assert request.headers["Authorization"] == f"DPoP {TOKEN}"
    header, claims = _verified(request.headers["DPoP"])
    assert header["jwk"] == prover.key.jwk
    assert (claims["htm"], claims["htu"]) == ("POST", "https://mcp.example/mcp")
    assert claims["content_digest"] == content_digest(b'{"a":1}')


# ---- the server's check of a proof -------------------------------------------------------

URL = "https://mcp.example/mcp"
BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'


def _claims(**changes: Any) -> dict[str, Any]:
    ath = base64.urlsafe_b64encode(hashlib.sha256(TOKEN.encode()).digest()).rstrip(b"=").decode()
    claims: dict[str, Any] = {
        "jti": "j-1",
        "htm": "POST",
        "htu": URL,
        "iat": int(NOW),
        "ath": ath,
        "content_digest": content_digest(BODY),
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _signed_by(key: Any, alg: str, claims: dict[str, Any] | None = None, **header: Any) -> str:
    """A proof signed by joserfc (an independent signer), its public key in the header."""
    protected = {"typ": "dpop+jwt", "alg": alg, "jwk": key.as_dict(private=False), **header}
    payload = json.dumps(claims if claims is not None else _claims()).encode()
    return jws.serialize_compact(protected, payload, key, algorithms=[alg])


def _check(proof: str | None, **changes: Any) -> str:
    options: dict[str, Any] = {"method": "POST", "url": URL, "access_token": TOKEN, "body": BODY, "now": NOW}
    options.update(changes)
    return check_proof(proof, **options).thumbprint


@pytest.mark.parametrize(
    ("alg", "make"),
    [
        ("ES256", lambda: ECKey.generate_key("P-256")),
        ("ES384", lambda: ECKey.generate_key("P-384")),
        ("ES512", lambda: ECKey.generate_key("P-521")),
        ("RS256", lambda: RSAKey.generate_key(2048)),
        ("PS256", lambda: RSAKey.generate_key(2048)),
        ("PS512", lambda: RSAKey.generate_key(2048)),
        ("EdDSA", lambda: OKPKey.generate_key("Ed25519")),
    ],
)
@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_proofs_of_every_accepted_algorithm_verify(alg: str, make: Any) -> None:
    key = make()
    assert _check(_signed_by(key, alg)) == key.thumbprint()


def test_a_checked_proof_says_how_long_its_jti_must_be_remembered() -> None:
    key = DpopKey.generate()
    proof = key.proof("POST", URL, now=NOW - 100, access_token=TOKEN, body=BODY)
    checked = check_proof(proof, method="POST", url=URL, access_token=TOKEN, body=BODY, now=NOW, max_age=300)
    assert checked.thumbprint == key.thumbprint
    assert checked.jti == json.loads(base64.urlsafe_b64decode(proof.split(".")[1] + "=="))["jti"]
    assert checked.until == NOW - 100 + 300
    with pytest.raises(ProofError, match="iat"):  # a moment after that it is refused anyway
        check_proof(proof, method="POST", url=URL, access_token=TOKEN, body=BODY, now=checked.until + 1)


def test_our_own_proof_verifies_with_our_thumbprint() -> None:
    key = DpopKey.generate()
    proof = key.proof("POST", URL + "/", now=NOW + 100, access_token=TOKEN, body=BODY)
    assert _check(proof) == key.thumbprint  # a trailing slash and 100 s of skew are fine


@pytest.mark.parametrize(
    ("htu", "url", "same"),
    [
        ("https://mcp.example/caf%c3%a9/mcp", "https://mcp.example/caf%C3%A9/mcp", True),
        ("https://mcp.example/%7Eann/mcp", "https://mcp.example/~ann/mcp", True),
        ("https://mcp.example/~ann/mcp", "https://mcp.example/%7eann/mcp", True),
        ("https://mcp.example/a%2Db/m%63p", "https://mcp.example/a-b/mcp", True),
        ("HTTPS://MCP.example:443/a%20b/mcp/", "https://mcp.example/a%20b/mcp", True),
        ("https://mcp.example/a%3Bb/mcp", "https://mcp.example/a;b/mcp", False),  # reserved: not the same
        ("https://mcp.example/a%2Fb/mcp", "https://mcp.example/a/b/mcp", False),
        ("https://mcp.example/a%20b/mcp", "https://mcp.example/a%2520b/mcp", False),
        ("https://mcp.example/a b/mcp", "https://mcp.example/a%20b/mcp", False),  # not a URL
        ("https://mcp.example/a/../mcp", "https://mcp.example/mcp", True),  # dot segments taken out (6.2.2.3)
        ("https://[::1]:8443/mcp", "https://[::1]:8443/mcp", True),
    ],
)
def test_the_htu_is_compared_after_rfc_3986_normalization(htu: str, url: str, same: bool) -> None:
    """RFC 9449, section 4.3: syntax-based normalization (RFC 3986, section 6.2.2) before the
    comparison: an escape in either case, an unreserved character escaped or not, is the
    same URL; an escaped reserved character is not the character, nor ``%25`` a ``%``."""
    proof = DpopKey.generate().proof("POST", htu, now=NOW, access_token=TOKEN, body=BODY)
    if same:
        _check(proof, url=url)
    else:
        with pytest.raises(ProofError, match="htu"):
            _check(proof, url=url)


EC = ECKey.generate_key("P-256")


@pytest.mark.parametrize(
    "htu",
    [
        "https://mcp.example/m\tcp",  # urlsplit drops a tab...
        "https://mcp.example/m\ncp",  # ...a line break...
        " https://mcp.example/mcp",  # ...and a leading space
        "https://mcp.example/mcp\r\n",
        "https://\u212acp.example/mcp",  # the Kelvin sign, lowered, is a k
        "https://mcp.ex\u0430mple/mcp",  # a Cyrillic a
        "https://ann@mcp.example/mcp",  # a user: another URI (RFC 9110, 4.2.4: an error)
        "https://:@mcp.example/mcp",
    ],
)
def test_an_htu_that_is_not_this_uri_as_written_is_refused(htu: str) -> None:
    """What ``urlsplit`` would quietly drop or fold makes no URI of an ``htu`` (RFC 3986
    holds no space, control character or letter beyond ASCII), and a user in it makes
    another: the proof does not name this endpoint. Signed by joserfc, which leaves the
    claim as written (our own signer would have tidied it)."""
    proof = _signed_by(EC, "ES256", _claims(htu=htu))
    with pytest.raises(ProofError, match="htu"):
        _check(proof, url="https://kcp.example/mcp" if "\u212a" in htu else URL)


@pytest.mark.parametrize(
    ("proof", "changes", "reason"),
    [
        (None, {}, "no DPoP proof"),
        ("", {}, "no DPoP proof"),
        ("a.b", {}, "not one compact JWS"),
        ("a.b.c.d", {}, "not one compact JWS"),
        ("x" * 9000, {}, "not one compact JWS"),
        ("!!.e30.sig", {}, "header is not base64url"),
        ("e30=.e30.c2ln", {}, "header is not base64url"),
        ("bm90IGpzb24.e30.c2ln", {}, "header is not JSON"),
        ("WzFd.e30.c2ln", {}, "header is not a JSON object"),
        (_signed_by(EC, "ES256", typ="JWT"), {}, "typ is not dpop"),
        (_signed_by(EC, "ES256", claims=_claims(jti=None)), {}, "no jti"),
        (_signed_by(EC, "ES256"), {"method": "GET"}, "htm is not GET"),
        (_signed_by(EC, "ES256", claims=_claims(htu=URL + "?x=1")), {}, "htu"),
        (_signed_by(EC, "ES256", claims=_claims(htu="https://evil.example/mcp")), {}, "htu"),
        (_signed_by(EC, "ES256", claims=_claims(htu="https://mcp.example:8443/mcp")), {}, "htu"),
        (_signed_by(EC, "ES256", claims=_claims(htu="https://mcp.example:99999/mcp")), {}, "htu"),
        (_signed_by(EC, "ES256"), {"now": NOW + 301}, "iat is not within 300 seconds"),
        (_signed_by(EC, "ES256"), {"now": NOW - 301}, "iat is not within 300 seconds"),
        (_signed_by(EC, "ES256", claims=_claims(iat=True)), {}, "iat"),
        (_signed_by(EC, "ES256", claims=_claims(iat="now")), {}, "iat"),
        (_signed_by(EC, "ES256", claims=_claims(iat=10**400)), {}, "iat"),  # beyond any float
        (_signed_by(EC, "ES256", claims=_claims(iat=-(10**400))), {}, "iat"),
        (_signed_by(EC, "ES256"), {"access_token": "another"}, "ath is not the hash"),
        (_signed_by(EC, "ES256", claims=_claims(ath=None)), {}, "ath is not the hash"),
        (_signed_by(EC, "ES256"), {"body": BODY + b" "}, "content_digest"),
        (_signed_by(EC, "ES256", claims=_claims(content_digest=None)), {}, "content_digest"),
    ],
)
def test_a_bad_proof_is_refused_with_its_reason(
    proof: str | None, changes: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ProofError, match=reason) as info:
        _check(proof, **changes)
    assert TOKEN not in str(info.value)


def _forged(header: dict[str, Any], claims: dict[str, Any] | None = None, signature: bytes = b"sig") -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return ".".join(
        (part(json.dumps(header).encode()), part(json.dumps(claims or _claims()).encode()), part(signature))
    )


PUBLIC = EC.as_dict(private=False)
_SHORT = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key().public_numbers()
SHORT_RSA = {
    "kty": "RSA",
    "n": base64.urlsafe_b64encode(_SHORT.n.to_bytes(128, "big")).rstrip(b"=").decode(),
    "e": "AQAB",
}
HUGE_RSA = {"kty": "RSA", "n": "_" * 2000, "e": "_" * 20}  # 12000-bit modulus, 120-bit exponent


@pytest.mark.parametrize(
    ("proof", "reason"),
    [
        (_forged({"typ": "dpop+jwt", "alg": "none", "jwk": PUBLIC}), "alg is not one of"),
        (_forged({"typ": "dpop+jwt", "alg": "HS256", "jwk": PUBLIC}), "alg is not one of"),
        (_forged({"typ": "dpop+jwt", "alg": "ES256"}), "no jwk"),
        (_forged({"typ": "dpop+jwt", "alg": "ES256", "jwk": EC.as_dict(private=True)}), "private key"),
        (_forged({"typ": "dpop+jwt", "alg": "ES256", "jwk": PUBLIC}), "signature has the wrong length"),
        (_forged({"typ": "dpop+jwt", "alg": "ES256", "jwk": PUBLIC}, signature=bytes(64)), "does not verify"),
        (_forged({"typ": "dpop+jwt", "alg": "ES384", "jwk": PUBLIC}), "needs an EC key on P-384"),
        (_forged({"typ": "dpop+jwt", "alg": "RS256", "jwk": PUBLIC}), "needs an RSA key"),
        (_forged({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": PUBLIC}), "needs an Ed25519 key"),
        (
            _forged(
                {"typ": "dpop+jwt", "alg": "ES256", "jwk": {**PUBLIC, "x": PUBLIC["y"]}}, signature=bytes(64)
            ),
            "not a usable ES256 key",
        ),
        (_forged({"typ": "dpop+jwt", "alg": "RS256", "jwk": SHORT_RSA}), "not of 2048 to 8192 bits"),
        (_forged({"typ": "dpop+jwt", "alg": "RS256", "jwk": HUGE_RSA}), "not of 2048 to 8192 bits"),
        (
            _forged({"typ": "dpop+jwt", "alg": "RS256", "jwk": {**HUGE_RSA, "n": "_" * 400}}),
            "small exponent",
        ),
    ],
)
def test_a_forged_proof_is_refused(proof: str, reason: str) -> None:
    with pytest.raises(ProofError, match=reason):
        _check(proof)


def test_a_proof_signed_by_one_key_with_another_in_its_header_is_refused() -> None:
    other = ECKey.generate_key("P-256")
    protected = {"typ": "dpop+jwt", "alg": "ES256", "jwk": PUBLIC}
    proof = jws.serialize_compact(protected, json.dumps(_claims()).encode(), other, algorithms=["ES256"])
    with pytest.raises(ProofError, match="does not verify"):
        _check(proof)


def test_a_proof_with_critical_header_parameters_is_refused() -> None:
    """RFC 7515 (4.1.11): a JWS whose ``crit`` lists a parameter the recipient does not
    understand is invalid; this checker understands none, so any ``crit`` is refused."""
    private = ec.generate_private_key(ec.SECP256R1())
    key = DpopKey(private)
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.jwk}
    assert _check(sign_compact(header, _claims(), private)) == key.thumbprint
    for crit in (["bound-to-session"], [], "bound-to-session"):
        proof = sign_compact({**header, "crit": crit, "bound-to-session": True}, _claims(), private)
        with pytest.raises(ProofError, match="crit"):
            _check(proof)


@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: base64.urlsafe_b64encode(b).decode()))
def test_any_text_is_a_proof_error_and_nothing_else(text: str) -> None:
    for candidate in (
        text,
        f"{text}.{text}.{text}",
        _forged({"typ": "dpop+jwt", "alg": "ES256", "jwk": text}),
    ):
        with pytest.raises(ProofError):
            _check(candidate)


@pytest.mark.parametrize("payload", ["é", "e30é", "\u0100"])
def test_a_proof_whose_claims_are_not_ascii_is_a_proof_error(payload: str) -> None:
    # the header decodes and the signature has the right length: the claims are reached
    head = _signed_by(EC, "ES256").split(".")[0]
    with pytest.raises(ProofError, match="not one compact JWS"):
        _check(f"{head}.{payload}.{'A' * 86}")


def test_a_server_that_wants_its_nonce_checks_it_last() -> None:
    key = DpopKey.generate()
    proof = key.proof("POST", URL, now=NOW, nonce="n-1", access_token=TOKEN, body=BODY)
    assert _check(proof, nonce_ok=lambda nonce: nonce == "n-1") == key.thumbprint
    with pytest.raises(NonceError, match="lacks the server's current nonce"):
        _check(proof, nonce_ok=lambda nonce: nonce == "n-2")
    with pytest.raises(ProofError, match="content_digest") as info:  # a bad proof is bad first
        _check(proof, body=b"other", nonce_ok=lambda nonce: False)
    assert not isinstance(info.value, NonceError)
