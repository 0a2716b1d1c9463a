"""Tests of mcp_elicit.sealing, the requestState AEAD envelope: round trip and format,
tampering, expiry, keys and binding."""

from __future__ import annotations

import base64
import hashlib
import math
import os
from typing import Any

import pytest

from mcp_elicit import sealing
from mcp_elicit.errors import ConfigError
from mcp_elicit.sealing import Binding, KeyRing, StateSealer, arguments_digest

from support.sealing import BINDING, HEAD, NOW, RING_A, SEALER, SECRET_A, SECRET_B, SERVER, TOKEN, reason


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def unb64(body: str) -> bytearray:
    return bytearray(base64.b64decode(body, validate=True))


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 200, 4096, 32_726])
def test_round_trip(size: int) -> None:
    payload = os.urandom(size)
    token = SEALER.seal(payload, BINDING, now=NOW)
    assert SEALER.open(token, BINDING, now=NOW + 1) == payload


def test_token_format() -> None:
    token = SEALER.seal(b"hello", BINDING, now=NOW)
    assert token.startswith(f"v2.{RING_A.key_ids[0]}.")
    body = token[HEAD:]
    assert b64(unb64(body)) == body  # standard alphabet, padded
    assert len(unb64(body)) == 12 + 8 + 5 + 16  # nonce, expiry, payload, tag
    assert len(token) == HEAD + 4 * -(-(12 + 8 + 5 + 16) // 3)
    assert token.isascii()
    assert all(c.isalnum() or c in ".+/=" for c in token)


def test_fresh_nonce_per_seal() -> None:
    tokens = {SEALER.seal(b"same", BINDING, now=NOW) for _ in range(50)}
    assert len(tokens) == 50
    assert len({t[HEAD : HEAD + 16] for t in tokens}) == 50  # the nonce: 12 bytes, 16 digits


def test_nonce_counter_running_out_draws_a_new_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past 2**32 - 1 the 32-bit counter cannot be packed: seal draws a new 64-bit prefix
    and starts counting again, so no nonce repeats."""
    import itertools

    nonces = sealing._NONCES
    monkeypatch.setattr(nonces, "counter", itertools.count(0xFFFFFFFF))
    before = nonces.prefix
    last = SEALER.seal(b"x", BINDING, now=NOW)  # counter 0xFFFFFFFF: still packs
    assert nonces.prefix == before
    after = SEALER.seal(b"x", BINDING, now=NOW)  # 2**32: a new prefix, counter back at 1
    assert nonces.prefix != before
    raw_last, raw_after = unb64(last[HEAD:]), unb64(after[HEAD:])
    assert raw_last[:12] == before + b"\xff\xff\xff\xff"
    assert raw_after[:12] == nonces.prefix + b"\x00\x00\x00\x01"
    assert SEALER.open(after, BINDING, now=NOW) == b"x"


def test_golden_token_still_opens() -> None:
    """A v2 token sealed by an earlier build: derivation and format must not drift."""
    golden = "v2.a9ea6385.j5ZF+b6UljQAAAABhRqSpVbhmZSIsSSjp9xHmmAvjf/gant9jzPKok2aVa0i1Q=="
    binding = Binding.for_request("tools/call", "golden", {"x": 1}, "alice")
    assert SEALER.open(golden, binding, now=1.0) == b'{"step":1}'
    assert reason(golden, Binding.for_request("tools/call", "golden", {"x": 2}, "alice"), now=1.0) == (
        "authentication failed"
    )


def test_golden_v1_token_still_opens() -> None:
    """A v1 (hex) token, as an earlier build sealed values at rest: still readable."""
    assert RING_A.key_ids == ("a9ea6385",)
    golden = (
        "v1.a9ea6385.6c6210b3976c089d8703047c3782a90b896895a2ee70114a10306ddeb15ae0e0"
        "6d500afc7893fee4be684a3449a7"
    )
    binding = Binding.for_request("tools/call", "golden", {"x": 1}, "alice")
    assert SEALER.open(golden, binding, now=1.0) == b'{"step":1}'


def test_a_body_moves_to_neither_version() -> None:
    """The same bytes under the other version's head (hex for base64, or back) fail: the
    version is in the associated data, so accepting v1 gives no second spelling."""
    token = SEALER.seal(b"state", BINDING, now=NOW)
    raw = base64.b64decode(token[HEAD:], validate=True)
    as_v1 = "v1." + token[3:HEAD] + raw.hex()
    assert reason(as_v1, BINDING, now=NOW) == "authentication failed"
    old = (
        "v1.a9ea6385.6c6210b3976c089d8703047c3782a90b896895a2ee70114a10306ddeb15ae0e0"
        "6d500afc7893fee4be684a3449a7"
    )
    as_v2 = "v2." + old[3:HEAD] + base64.b64encode(bytes.fromhex(old[HEAD:])).decode("ascii")
    golden = Binding.for_request("tools/call", "golden", {"x": 1}, "alice")
    assert reason(as_v2, golden, now=1.0) == "authentication failed"


def test_payload_too_large_to_seal() -> None:
    small = StateSealer(RING_A, server_id=SERVER, max_token_size=1024)
    limit = (1024 - HEAD) // 4 * 3 - 36
    assert len(small.seal(b"x" * limit, BINDING, now=NOW)) <= 1024
    with pytest.raises(ValueError, match="too large"):
        small.seal(b"x" * (limit + 1), BINDING, now=NOW)


@pytest.mark.parametrize(
    ("now", "ttl"), [(NOW, 0.0), (NOW, -1.0), (NOW, math.inf), (NOW, math.nan), (math.nan, 5.0)]
)
def test_seal_rejects_bad_time(now: float, ttl: float) -> None:
    with pytest.raises(ValueError, match="ttl"):
        SEALER.seal(b"x", BINDING, now=now, ttl=ttl)


TOKEN_PADDED = SEALER.seal(b"payload!", BINDING, now=NOW)  # 36 + 8 bytes: one "="
TOKEN_PADDED2 = SEALER.seal(b"payload", BINDING, now=NOW)  # 36 + 7 bytes: "=="


# Base64 digits by the bytes they carry (4 digits per 3 bytes): nonce 0-11, expiry
# 12-19 and payload 20-28 (both encrypted), tag 29-44.
REGIONS = {
    "prefix": range(0, 3),
    "kid": range(3, 11),
    "dot": range(11, 12),
    "nonce": range(HEAD, HEAD + 16),
    "ciphertext": range(HEAD + 16, HEAD + 36),
    "tag": range(HEAD + 40, len(TOKEN)),
}
BYTES = {"nonce": range(0, 12), "ciphertext": range(12, 29), "tag": range(29, 45)}
REPLACEMENTS = "0179afAFgv.-_+/= é\x00"


# Named ids: a sealed token has a random nonce, and parallel workers must collect the same ids.
@pytest.mark.parametrize("token", [TOKEN, TOKEN_PADDED, TOKEN_PADDED2], ids=["no-pad", "pad1", "pad2"])
@pytest.mark.parametrize("region", REGIONS)
def test_any_changed_character_fails(token: str, region: str) -> None:
    for i in REGIONS[region]:
        i = min(i, len(token) - 1)
        for c in REPLACEMENTS:
            if c != token[i]:
                reason(token[:i] + c + token[i + 1 :])
        reason(token[:i] + token[i + 1 :])  # deleted
        reason(token[:i] + "0" + token[i:])  # inserted


@pytest.mark.parametrize("token", [TOKEN_PADDED, TOKEN_PADDED2], ids=["pad1", "pad2"])
def test_padding_has_one_spelling(token: str) -> None:
    """Bits after the last byte must be zero: "QR==" would decode like "QQ==" elsewhere."""
    body = token[HEAD:].rstrip("=")
    pad = token[HEAD + len(body) :]
    digit = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".index(body[-1])
    spare = 4 if pad == "==" else 2
    for low in range(1, 1 << spare):
        other = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[digit | low]
        forged = token[:HEAD] + body[:-1] + other + pad
        assert base64.b64decode(forged[HEAD:]) == base64.b64decode(token[HEAD:])  # same bytes
        assert reason(forged) == "bad base64"
    assert reason(token[:HEAD] + body) == "bad base64"  # padding dropped
    assert reason(token + "=") == "bad base64"


@pytest.mark.parametrize("region", ["nonce", "ciphertext", "tag"])
def test_any_flipped_bit_fails_authentication(region: str) -> None:
    raw = unb64(TOKEN[HEAD:])
    for i in BYTES[region]:
        for bit in range(8):
            raw[i] ^= 1 << bit
            assert reason(TOKEN[:HEAD] + b64(raw)) == "authentication failed"
            raw[i] ^= 1 << bit


def test_head_reasons() -> None:
    assert reason("v3." + TOKEN[3:]) == "unsupported version"
    assert reason("v10." + TOKEN[3:]) == "unsupported version"
    assert reason("x1." + TOKEN[3:]) == "bad prefix"
    assert reason("") == "bad prefix"
    assert reason("v2.") == "malformed"
    assert reason(TOKEN[:11] + "-" + TOKEN[12:]) == "malformed"
    assert reason("v2.00000000." + TOKEN[HEAD:]) == "unknown key id"
    assert reason(TOKEN[:HEAD] + TOKEN[HEAD:].swapcase()) == "authentication failed"
    assert reason(TOKEN[:HEAD] + "-_" + TOKEN[HEAD + 2 :]) == "bad base64"  # URL-safe alphabet
    assert reason(TOKEN[:HEAD] + "zz" + TOKEN[HEAD + 2 :]) == "authentication failed"
    assert reason(TOKEN + "A") == "bad base64"
    assert reason(TOKEN + "AAAA") == "authentication failed"


def test_v1_body_reasons() -> None:
    """v1 tokens keep their own rules: lowercase hex, one spelling."""
    raw = unb64(TOKEN[HEAD:])
    v1 = "v1" + TOKEN[2:HEAD] + raw.hex()
    assert reason(v1) == "authentication failed"  # the version is in the associated data
    assert reason(v1[:HEAD] + v1[HEAD:].upper()) == "bad hex"
    assert reason(v1[:HEAD] + "zz" + v1[HEAD + 2 :]) == "bad hex"
    assert reason(v1 + "0") == "bad hex"
    assert reason(v1[: HEAD + 2 * 36 - 2]) == "truncated"
    assert reason("v2" + TOKEN[2:HEAD] + raw.hex()) == "bad base64"  # 90 digits: not whole groups
    assert reason("v1" + TOKEN[2:] + "A" * 40) == "bad hex"


def test_every_truncation_fails() -> None:
    for n in range(len(TOKEN)):
        reason(TOKEN[:n])
    assert reason(TOKEN[: HEAD + 44]) == "truncated"  # 36 bytes take 48 digits


def test_expiry_with_injected_clock() -> None:
    token = SEALER.seal(b"x", BINDING, now=NOW)
    assert SEALER.open(token, BINDING, now=NOW + 599.999) == b"x"
    assert reason(token, now=NOW + 600.0) == "expired"
    assert reason(token, now=math.inf) == "expired"
    assert reason(token, now=math.nan) == "expired"


def test_per_call_and_per_sealer_ttl() -> None:
    token = SEALER.seal(b"x", BINDING, now=NOW, ttl=5)
    assert SEALER.open(token, BINDING, now=NOW + 4.9) == b"x"
    assert reason(token, now=NOW + 5) == "expired"
    short = StateSealer(RING_A, server_id=SERVER, ttl=30)
    assert short.ttl == 30.0
    token = short.seal(b"x", BINDING, now=NOW)
    assert SEALER.open(token, BINDING, now=NOW + 29) == b"x"  # expiry travels in the token
    assert reason(token, now=NOW + 30) == "expired"


def test_wrong_key() -> None:
    other = StateSealer(KeyRing([SECRET_B]), server_id=SERVER)
    assert reason(other.seal(b"x", BINDING, now=NOW)) == "unknown key id"
    # The other key's token relabelled with our key id: the key and the AD differ.
    forged = TOKEN[:HEAD] + other.seal(b"x", BINDING, now=NOW)[HEAD:]
    assert reason(forged) == "authentication failed"


def test_rotation() -> None:
    old, new = KeyRing([SECRET_A]), KeyRing([SECRET_B])
    rotated = KeyRing([SECRET_B, SECRET_A])
    assert rotated.key_ids == new.key_ids + old.key_ids
    old_token = StateSealer(old, server_id=SERVER).seal(b"old", BINDING, now=NOW)
    rotated_sealer = StateSealer(rotated, server_id=SERVER)
    assert rotated_sealer.open(old_token, BINDING, now=NOW) == b"old"
    new_token = rotated_sealer.seal(b"new", BINDING, now=NOW)
    assert new_token.startswith(f"v2.{new.key_ids[0]}.")
    assert reason(new_token, sealer=StateSealer(old, server_id=SERVER)) == "unknown key id"


def test_same_secret_same_key_across_instances() -> None:
    """A restarted process with the same key file opens tokens sealed before."""
    again = StateSealer(KeyRing.from_text(RING_A.export_text()), server_id=SERVER)
    assert again.open(TOKEN, BINDING, now=NOW) == b"payload!!"


def test_generate() -> None:
    a, b = KeyRing.generate(), KeyRing.generate()
    assert a.key_ids != b.key_ids
    token = StateSealer(a, server_id=SERVER).seal(b"x", BINDING, now=NOW)
    assert reason(token, sealer=StateSealer(b, server_id=SERVER)) == "unknown key id"


def test_repr_and_errors_never_show_secrets() -> None:
    assert SECRET_A.hex() not in repr(RING_A)
    assert repr(RING_A) == "KeyRing(key_ids=('a9ea6385',))"
    short = "ab" * 16 + "cd" * 8
    with pytest.raises(ConfigError) as info:
        KeyRing.from_text(short)
    assert short not in str(info.value)


@pytest.mark.parametrize(
    "wrong",
    [
        Binding.for_request("prompts/get", "book_flight", {"from": "CDG", "to": "SFO"}, "alice"),
        Binding.for_request("tools/call", "book_hotel", {"from": "CDG", "to": "SFO"}, "alice"),
        Binding.for_request("tools/call", "book_flight", {"from": "CDG", "to": "LHR"}, "alice"),
        Binding.for_request("tools/call", "book_flight", None, "alice"),
        Binding.for_request("tools/call", "book_flight", {"from": "CDG", "to": "SFO"}, "mallory"),
        Binding.for_request("tools/call", "book_flight", {"from": "CDG", "to": "SFO"}, None),
        Binding.for_request("tools/call", "book_flight", {"from": "CDG", "to": "SFO"}, ""),
        # Field boundaries are length-prefixed: moving bytes between fields changes the AD.
        Binding.for_request("tools/callb", "ook_flight", {"from": "CDG", "to": "SFO"}, "alice"),
    ],
    ids=["method", "target", "arguments", "no-arguments", "principal", "anonymous", "empty", "boundary"],
)
def test_wrong_binding_fails(wrong: Binding) -> None:
    assert reason(TOKEN, wrong) == "authentication failed"


def test_anonymous_and_empty_principal_differ() -> None:
    anonymous = Binding("tools/call", "t", arguments_digest(None))
    empty = Binding("tools/call", "t", arguments_digest(None), "")
    token = SEALER.seal(b"x", anonymous, now=NOW)
    assert SEALER.open(token, anonymous, now=NOW) == b"x"
    assert reason(token, empty) == "authentication failed"


def test_wrong_server_id() -> None:
    other = StateSealer(RING_A, server_id="https://other.example/mcp")
    assert reason(TOKEN, sealer=other) == "authentication failed"


def test_binding_equality_ignores_cache() -> None:
    assert Binding("m", "t", b"d", None) == Binding("m", "t", b"d", None)
    assert hash(Binding("m", "t", b"d", "p")) == hash(Binding("m", "t", b"d", "p"))
    assert "_data" not in repr(BINDING)


def test_lone_surrogates_in_binding() -> None:
    weird = Binding.for_request("tools/call", "\ud800", {"k": "\udfff"}, "\ud83d")
    token = SEALER.seal(b"x", weird, now=NOW)
    assert SEALER.open(token, weird, now=NOW) == b"x"
    assert reason(token, Binding.for_request("tools/call", "\ud801", {"k": "\udfff"}, "\ud83d"))


@pytest.mark.parametrize(
    "args",
    [("m", 1, b"d", None), (b"m", "t", b"d", None), ("m", "t", "d", None), ("m", "t", b"d", 7)],
)
def test_binding_types(args: tuple[Any, ...]) -> None:
    with pytest.raises(TypeError):
        Binding(*args)


def test_arguments_digest() -> None:
    assert arguments_digest(None) == arguments_digest({})
    assert arguments_digest({"a": 1, "b": [1, 2]}) == arguments_digest({"b": [1, 2], "a": 1})
    assert arguments_digest({"a": 1}) != arguments_digest({"a": "1"})
    assert arguments_digest({"a": {"x": 1, "y": 2}}) == arguments_digest({"a": {"y": 2, "x": 1}})
    # sha256 of the canonical encoding, UTF-8 and unescaped
    assert arguments_digest({"é": "ü", "a": 1}).hex() == (
        hashlib.sha256('{"a":1,"é":"ü"}'.encode()).hexdigest()
    )
