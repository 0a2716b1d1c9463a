"""Tests of mcp_elicit.sealing, the requestState AEAD envelope: hostile input (only ever an
invalid request state) and configuration (key text, key rings, sealer options)."""

from __future__ import annotations

import base64
import binascii
import math
import os
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_elicit import sealing
from mcp_elicit.errors import ConfigError
from mcp_elicit.sealing import KeyRing, StateSealer

from support.sealing import BINDING, HEAD, NOW, RING_A, SEALER, SECRET_A, SECRET_B, SERVER, TOKEN, reason


@pytest.mark.parametrize("token", [None, 123, 1.5, b"v1.", bytearray(b"x"), {"a": 1}, ["v1."], object()])
def test_non_string_rejected(token: object) -> None:
    assert reason(token) == "not a string"


def test_oversized_rejected_before_any_decoding_or_crypto(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> bytes:
        raise AssertionError("decoded or decrypted an oversized token")

    class Spy:
        encrypt = decrypt = staticmethod(boom)

    sealer = StateSealer(RING_A, server_id=SERVER, max_token_size=1024)
    monkeypatch.setattr(binascii, "a2b_hex", boom)
    monkeypatch.setattr(sealing, "_b64decode", boom)
    sealer._open = {head: (Spy(), ad, codec) for head, (_, ad, codec) in sealer._open.items()}  # type: ignore[misc]
    assert reason(TOKEN[:HEAD] + "0" * (1024 - HEAD + 1), sealer=sealer) == "too large"
    assert reason(TOKEN[:HEAD] + "0" * 10_000_000) == "too large"
    assert reason("é" * 70_000) == "too large"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_only_invalid_request_state(text: str) -> None:
    reason(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789abcdefABCDEFQR+/=v.xé\x00", max_size=200))
def test_arbitrary_body_only_invalid_request_state(text: str) -> None:
    reason(TOKEN[:HEAD] + text)
    reason(TOKEN[: len(TOKEN) // 2] + text)
    reason("v1" + TOKEN[2:HEAD] + text)


@settings(max_examples=100, deadline=None)
@given(st.none() | st.integers() | st.binary() | st.lists(st.text()) | st.dictionaries(st.text(), st.text()))
def test_arbitrary_values_only_invalid_request_state(value: object) -> None:
    reason(value)


def test_from_text_accepts_hex_and_base64_with_comments() -> None:
    text = f"""
        # rotation: newest first
        {SECRET_B.hex().upper()}   # kid whatever

        {base64.b64encode(SECRET_A).decode()}
    """
    ring = KeyRing.from_text(text)
    assert ring.key_ids == KeyRing([SECRET_B, SECRET_A]).key_ids
    urlsafe = base64.urlsafe_b64encode(SECRET_B).decode().rstrip("=")
    assert KeyRing.from_text(f"{SECRET_A.hex()},{urlsafe}").key_ids == ring.key_ids[::-1]


def test_export_text_round_trip() -> None:
    ring = KeyRing([SECRET_B, SECRET_A])
    text = ring.export_text()
    assert text.startswith("#")
    assert SECRET_B.hex() in text
    assert KeyRing.from_text(text).key_ids == ring.key_ids


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no keys found"),
        ("# only a comment\n\n", "no keys found"),
        ("00" * 16, "line 1: key is 16 bytes; need at least 32"),
        ("\n" + base64.b64encode(b"k" * 31).decode(), "line 2: key is 31 bytes"),
        ("00" * 32 + "!", "line 1: not a hex or base64 key"),
        ("@" + "A" * 44, "not a hex or base64 key"),
        ("Z" * 45, "not a hex or base64 key"),  # 45 % 4 == 1: no base64 has that length
        ("0" * 65, "65 hex digits, an odd number"),
    ],
)
def test_from_text_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KeyRing.from_text(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # a key from keygen that lost a digit was read as base64: another key, taken
        # without a word, which opens nothing the full one sealed
        (
            SECRET_A.hex()[:-1],
            r"line 1: 63 hex digits, an odd number: one is missing or extra \(keygen writes 64\)",
        ),
        (SECRET_A.hex() + "0", r"line 1: 65 hex digits, an odd number"),
        # a password was read as base64 and taken as a key, which opens to a guess
        ("correcthorsebatterystaplecorrecthorsebatterystaple", r"line 1: reads as a password or words"),
        ("hunter2" * 8, r"line 1: reads as a password or words"),
        ("MYPRODUCTIONSTATEKEYFORMCPELICIT2024SERVERS", r"line 1: reads as a password or words"),
        # too short, it was told to be longer, not to be random
        ("hunter2hunter2hunter2hunter2hunter2", r"line 1: key is 26 bytes; need at least 32 random bytes"),
        ("Hunter2Hunter2Hunter2Hunter2Hunter2", r"random bytes \(a password is no key\)"),
    ],
)
def test_key_text_that_is_no_random_key_is_refused_saying_so(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        KeyRing.from_text(text)
    assert text[:12] not in str(caught.value)  # the line, never the key


def test_random_keys_in_any_spelling_are_taken() -> None:
    rng = random.Random(20261207)
    for size in (32, 33, 48, 64):
        for _ in range(200):
            secret = rng.randbytes(size)
            spellings = [
                secret.hex(),
                secret.hex().upper(),
                base64.b64encode(secret).decode(),
                base64.urlsafe_b64encode(secret).decode().rstrip("="),
            ]
            for text in spellings:
                assert KeyRing.from_text(text).key_ids == KeyRing([secret]).key_ids


@pytest.mark.parametrize(
    ("secrets", "message"),
    [
        ([], "at least one"),
        (SECRET_A, "sequence of secrets"),
        ("x" * 40, "sequence of secrets"),
        (["x" * 40], "expected bytes"),
        ([b"k" * 31], "31 bytes"),
        ([b"\x00" * 32], "one byte repeated"),
        ([SECRET_A, SECRET_B, SECRET_A], "key 3 repeats"),
    ],
)
def test_key_ring_errors(secrets: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KeyRing(secrets)


def test_from_text_needs_str() -> None:
    with pytest.raises(ConfigError, match="str"):
        KeyRing.from_text(SECRET_A.hex().encode())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"server_id": ""},
        {"server_id": SERVER, "ttl": 0},
        {"server_id": SERVER, "ttl": -5},
        {"server_id": SERVER, "ttl": math.inf},
        {"server_id": SERVER, "ttl": math.nan},
        {"server_id": SERVER, "max_token_size": 100},
        {"server_id": SERVER, "max_token_size": 2**31},
    ],
)
def test_sealer_config_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        StateSealer(RING_A, **kwargs)
    with pytest.raises(ConfigError, match="KeyRing"):
        StateSealer([SECRET_A], server_id=SERVER)  # type: ignore[arg-type]


def test_sealer_properties() -> None:
    assert SEALER.server_id == SERVER
    assert SEALER.ttl == 600.0


def test_binascii_error_is_a_value_error() -> None:
    """open() catches ValueError around a2b_hex and b64decode; binascii.Error must stay one."""
    assert issubclass(binascii.Error, ValueError)


def test_a_sibling_sealer_takes_larger_tokens_with_the_same_keys() -> None:
    big = SEALER.with_max_token_size(1 << 20)
    assert big.server_id == SEALER.server_id and big.ttl == SEALER.ttl
    payload = os.urandom(200_000)  # well over the default 64 KiB token
    with pytest.raises(ValueError, match="too large"):
        SEALER.seal(payload, BINDING, now=NOW)
    token = big.seal(payload, BINDING, now=NOW)
    assert big.open(token, BINDING, now=NOW + 1) == payload
    assert reason(token, sealer=SEALER) == "too large"  # each keeps its own bound
    small = SEALER.seal(b"state", BINDING, now=NOW)
    assert big.open(small, BINDING, now=NOW + 1) == b"state"  # the same keys and server
    other = StateSealer(KeyRing([SECRET_B]), server_id=SERVER).with_max_token_size(1 << 20)
    assert reason(token, sealer=other) == "unknown key id"


def test_a_one_case_key_an_earlier_version_took_still_opens_its_states_as_hex() -> None:
    """An upgrade refuses a one-case key that earlier versions read as base64; its message
    says how to keep opening what that key sealed, and that way works: the bytes it
    decoded to, in hex, below a new key."""
    old_text = "correcthorsebatterystaplecorrecthorsebatterystaple"
    body = old_text.rstrip("=").replace("-", "+").replace("_", "/")
    old_secret = base64.b64decode(body + "=" * (-len(body) % 4))  # as an earlier version read it
    token = StateSealer(KeyRing([old_secret]), server_id=SERVER).seal(b"kept", BINDING, now=NOW)
    with pytest.raises(ConfigError, match=r"write the bytes it decodes to in hex below a new key") as caught:
        KeyRing.from_text(old_text)
    assert old_text[:12] not in str(caught.value)
    upgraded = KeyRing.from_text(f"{SECRET_B.hex()}\n{old_secret.hex()}\n")
    assert StateSealer(upgraded, server_id=SERVER).open(token, BINDING, now=NOW) == b"kept"
