"""Request-state sealing: the AEAD envelope around a server's ``requestState``.

A server answering with ``resultType: "input_required"`` may give the client an opaque
``requestState`` that the client echoes on its retry. The string passes through the
client, so it is attacker-controlled. This module turns the server's own bytes into
such a string and back, with AES-256-GCM (see ``docs/design/request-state-sealing.md``)::

    token      = "v2." kid "." base64(nonce[12] || ciphertext || tag[16])   standard, padded
    plaintext  = expires_at (float64, big-endian, seconds) || payload
    associated = "v2." kid "." || server_id || method || target || arguments digest
                 || principal                   (each length-prefixed; None != "")

Tokens of format v1 (the same, with the body in lowercase hex) still open, so values
sealed at rest by an earlier build stay readable; new tokens are always v2.

Rules:

* Sans-IO: the standard library, ``cryptography``, ``pybase64`` (a SIMD base64 codec:
  the standard library's costs more than the AEAD itself at 4 KiB) and
  :mod:`mcp_elicit.errors` only.
  Time is an argument (``now``); keys arrive as bytes or text, never from files or env.
* Keys are derived once, when a :class:`KeyRing` is built (HKDF-SHA256 with versioned
  labels), never per call. The first key seals; every key opens (rotation).
* The binding (server, method, target, arguments digest, principal) is never in the
  token, only in the associated data: any mismatch is an authentication failure.
* The expiry is sealed in the plaintext: the client can neither read nor extend it.
* :meth:`StateSealer.open` raises :class:`InvalidRequestState` and nothing else, for any
  input. The size is checked before any decoding or cryptography. A token has exactly
  one spelling: any change to any character fails. The ``reason`` is for the server's
  log; the wire message is always the same.
* The payload is opaque bytes; the caller encodes it. Sealing bounds replay (principal,
  request, expiry) but does not make a token single-use: a server that needs that must
  record spent tokens itself.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import json
import os
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import pybase64
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mcp_elicit.errors import ConfigError, InvalidRequestState

__all__ = ["MIN_SECRET_BYTES", "Binding", "KeyRing", "StateSealer", "arguments_digest", "key_id"]

MIN_SECRET_BYTES = 32
_HKDF_SALT = b"mcp-elicit requestState"
_INFO_AEAD_KEY = b"mcp-elicit/requestState/v1/aes-256-gcm-key"
_INFO_KEY_ID = b"mcp-elicit/requestState/v1/key-id"
_KID_BYTES = 4  # 8 hex characters

_PREFIX = "v2."  # what seal writes; open also reads "v1." (hex body)
_VERSIONS = ("v2.", "v1.")
_HEAD = len(_PREFIX) + 2 * _KID_BYTES + 1  # "v2." kid "."
_NONCE = 12
_EXPIRY = struct.Struct(">d")
_EXPIRY_SIZE = _EXPIRY.size
_OVERHEAD = _NONCE + _EXPIRY_SIZE + 16  # nonce, expiry, tag


class _Nonces:
    """96-bit GCM nonces that never repeat within a process: a random 64-bit prefix drawn
    per process (again in a forked child, and when the counter runs out) and a 32-bit
    counter. Across processes sharing a key, two prefixes collide with probability about
    n²/2⁶⁵ for n processes. Cheaper than a system call per seal; ``next`` on an
    ``itertools.count`` is atomic under the GIL. :meth:`StateSealer.seal` inlines
    :meth:`next`: packing a counter past 2**32 - 1 raises ``struct.error``, which is the
    signal to draw a new prefix."""

    __slots__ = ("counter", "prefix")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.prefix = os.urandom(8)
        self.counter = itertools.count(1)

    def next(self) -> bytes:
        try:
            return _pack_nonce(self.prefix, next(self.counter))
        except struct.error:  # the counter ran out
            self.reset()
            return _pack_nonce(self.prefix, next(self.counter))


_pack_nonce = struct.Struct(">8sI").pack
_NONCES = _Nonces()
os.register_at_fork(after_in_child=_NONCES.reset)
_FIELD_LENGTHS = struct.Struct(">IIII")
_pack_lengths = _FIELD_LENGTHS.pack
_NO_PRINCIPAL = 0xFFFFFFFF  # the length slot of an absent principal: None differs from ""
_INF = float("inf")
_HEX_KEY = re.compile(r"(?:[0-9a-fA-F]{2})+")
_ODD_HEX = re.compile(r"[0-9a-fA-F](?:[0-9a-fA-F]{2})+")
_B64_KEY = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


def _utf8(text: str) -> bytes:
    # surrogatepass: strings decoded from JSON may hold lone surrogates; still injective.
    return text.encode("utf-8", "surrogatepass")


def arguments_digest(arguments: Mapping[str, Any] | None) -> bytes:
    """SHA-256 of the canonical JSON of request arguments (None digests like ``{}``).

    Canonical: sorted keys, ``,``/``:`` separators, no ASCII escaping, UTF-8. Raises
    ``ValueError`` for arguments nested deeper than the standard library's encoder follows
    (about 1000 levels; a JSON message may hold 1024).
    """
    if not arguments:
        return _EMPTY_DIGEST
    try:
        encoded = _dumps(arguments, option=_SORT_KEYS)
    except TypeError:  # not plain JSON (non-string keys), or past 255 levels: the standard library copes
        try:
            text = json.dumps(
                dict(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
            )
        except RecursionError:
            raise ValueError("the arguments are nested too deeply (some 1000 levels)") from None
        encoded = _utf8(text)
    return _sha256(encoded).digest()


_EMPTY_DIGEST = hashlib.sha256(b"{}").digest()
_dumps = orjson.dumps
_SORT_KEYS = orjson.OPT_SORT_KEYS
_sha256 = hashlib.sha256


@dataclass(frozen=True, slots=True, init=False)
class Binding:
    """What a token is bound to: the originating request and who sent it.

    ``arguments`` is a digest of the request's salient params (see
    :func:`arguments_digest`). ``principal`` None means unauthenticated, which differs
    from every string, ``""`` included. The associated-data encoding is computed once,
    here, so the same binding can open one token and seal the next cheaply.
    """

    method: str
    target: str
    arguments: bytes
    principal: str | None = None
    _data: bytes = field(init=False, repr=False, compare=False)

    def __init__(self, method: str, target: str, arguments: bytes, principal: str | None = None) -> None:
        # Written out rather than generated: a binding is made twice per multi round-trip
        # round, and the generated frozen __init__ (object.__setattr__ per field) cost as
        # much as the rest of this. The slots are set through their descriptors.
        if not (isinstance(method, str) and isinstance(target, str)):
            raise TypeError("Binding.method and Binding.target must be str")
        if not isinstance(arguments, bytes):
            raise TypeError("Binding.arguments must be bytes (a digest); see arguments_digest()")
        if principal is None:
            encoded_principal, principal_len = b"", _NO_PRINCIPAL
        elif isinstance(principal, str):
            encoded_principal = _utf8(principal)
            principal_len = len(encoded_principal)
        else:
            raise TypeError("Binding.principal must be str or None")
        # _utf8, inline
        encoded_method = method.encode("utf-8", "surrogatepass")
        encoded_target = target.encode("utf-8", "surrogatepass")
        lengths = _pack_lengths(len(encoded_method), len(encoded_target), len(arguments), principal_len)
        _set_method(self, method)
        _set_target(self, target)
        _set_arguments(self, arguments)
        _set_principal(self, principal)
        _set_data(self, b"".join((lengths, encoded_method, encoded_target, arguments, encoded_principal)))

    @classmethod
    def for_request(
        cls, method: str, target: str, arguments: Mapping[str, Any] | None, principal: str | None = None
    ) -> Binding:
        """The binding of a request, digesting its arguments."""
        return cls(method, target, arguments_digest(arguments), principal)


_set_method, _set_target, _set_arguments, _set_principal, _set_data = (
    vars(Binding)[name].__set__ for name in ("method", "target", "arguments", "principal", "_data")
)


def _derive(secret: bytes, info: bytes, length: int) -> bytes:
    return HKDF(algorithm=SHA256(), length=length, salt=_HKDF_SALT, info=info).derive(secret)


def _parse_secret(entry: str, where: str) -> bytes:
    """One key of a key text (see ``KeyRing.from_text``); its errors name ``where``, never
    the key. A text base64 could read that is no encoding of random bytes is refused: hex
    with an odd number of digits (a digit lost or added: as base64 it is another key), and
    letters all of one case (a password or words: base64 of 32 random bytes, 43 characters,
    has both cases but with a chance under 1e-9), whose key a guess would open."""
    if _HEX_KEY.fullmatch(entry):
        secret = bytes.fromhex(entry)
    elif _ODD_HEX.fullmatch(entry):
        raise ConfigError(
            f"{where}: {len(entry)} hex digits, an odd number: one is missing or extra (keygen writes "
            f"{2 * MIN_SECRET_BYTES})"
        )
    elif _B64_KEY.fullmatch(entry) and len(body := entry.rstrip("=")) % 4 != 1:
        std = body.replace("-", "+").replace("_", "/")
        secret = base64.b64decode(std + "=" * (-len(std) % 4), validate=True)
        if len(secret) < MIN_SECRET_BYTES:
            raise ConfigError(
                f"{where}: key is {len(secret)} bytes; need at least {MIN_SECRET_BYTES} random bytes "
                "(a password is no key)"
            )
        if entry.lower() == entry or entry.upper() == entry:
            raise ConfigError(
                f"{where}: reads as a password or words, not as base64 of random bytes (its letters "
                "are all of one case); an earlier version took it as base64: to go on opening what it "
                "sealed, write the bytes it decodes to in hex below a new key from 'mcp-elicit keygen' "
                "(docs/rough-edges.md, 'A key's text')"
            )
    else:
        raise ConfigError(f"{where}: not a hex or base64 key (bad character or length)")
    if len(secret) < MIN_SECRET_BYTES:
        raise ConfigError(f"{where}: key is {len(secret)} bytes; need at least {MIN_SECRET_BYTES}")
    return secret


class KeyRing:
    """Master secrets for sealing: the first seals, all open.

    To rotate, put the new secret first and keep the old ones until the tokens they
    sealed have expired. Each secret yields an AES-256 key and a public key id.
    """

    __slots__ = ("_entries", "_secrets")

    def __init__(self, secrets: Sequence[bytes]) -> None:
        if isinstance(secrets, bytes | bytearray | memoryview | str):
            raise ConfigError("KeyRing takes a sequence of secrets: KeyRing([secret])")
        self._secrets = tuple(bytes(s) if isinstance(s, bytearray) else s for s in secrets)
        if not self._secrets:
            raise ConfigError("a key ring needs at least one secret")
        entries: dict[str, AESGCM] = {}
        for i, secret in enumerate(self._secrets, 1):
            if not isinstance(secret, bytes):
                raise ConfigError(f"key {i}: expected bytes, got {type(secret).__name__}")
            if len(secret) < MIN_SECRET_BYTES:
                raise ConfigError(f"key {i} is {len(secret)} bytes; need at least {MIN_SECRET_BYTES}")
            if secret.count(secret[:1]) == len(secret):
                raise ConfigError(f"key {i} is one byte repeated; use random bytes")
            kid = _derive(secret, _INFO_KEY_ID, _KID_BYTES).hex()
            if kid in entries:
                raise ConfigError(f"key {i} repeats an earlier key")
            entries[kid] = AESGCM(_derive(secret, _INFO_AEAD_KEY, 32))
        self._entries = entries  # in ring order: the first entry seals

    @classmethod
    def generate(cls) -> KeyRing:
        """A ring of one fresh random secret: its tokens die with the process."""
        return cls([os.urandom(MIN_SECRET_BYTES)])

    @classmethod
    def from_text(cls, text: str) -> KeyRing:
        """Parse a key file or environment value: keys in hex or base64, one per line.

        Commas and spaces also separate keys; ``#`` starts a comment. An even-length
        all-hex entry is hex; anything else is base64 (standard or URL-safe alphabet,
        padding optional). Errors name the line, never the key.
        """
        if not isinstance(text, str):
            raise ConfigError("key text must be a str")
        secrets = [
            _parse_secret(entry, f"key text line {n}")
            for n, line in enumerate(text.splitlines(), 1)
            for entry in line.split("#", 1)[0].replace(",", " ").split()
        ]
        if not secrets:
            raise ConfigError("no keys found: expected one hex or base64 key per line")
        return cls(secrets)

    def export_text(self) -> str:
        """The text of a key file holding this ring (secret!), as :meth:`from_text` reads it."""
        lines = ["# mcp-elicit requestState keys: the first seals, all open. Keep this secret."]
        lines += [f"{s.hex()}  # kid {kid}" for s, kid in zip(self._secrets, self._entries, strict=True)]
        return "\n".join(lines) + "\n"

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The public key ids, sealing key first (they appear in tokens and logs)."""
        return tuple(self._entries)

    def __repr__(self) -> str:
        return f"KeyRing(key_ids={self.key_ids!r})"


class StateSealer:
    """Seals payloads into ``requestState`` tokens bound to a request, and opens them."""

    __slots__ = ("_keys", "_max", "_max_payload", "_open", "_sealing", "_server_id", "_ttl")

    def __init__(
        self, keys: KeyRing, *, server_id: str, ttl: float = 600.0, max_token_size: int = 64 * 1024
    ) -> None:
        if not isinstance(keys, KeyRing):
            raise ConfigError("keys must be a KeyRing")
        if not isinstance(server_id, str) or not server_id:
            raise ConfigError("server_id must be a non-empty string")
        if not 0.0 < ttl < _INF:
            raise ConfigError(f"ttl must be a positive number of seconds, not {ttl!r}")
        if not isinstance(max_token_size, int) or not 256 <= max_token_size <= 1 << 30:
            raise ConfigError("max_token_size must be an int from 256 to 2**30")
        self._keys = keys
        self._server_id = server_id
        self._ttl = float(ttl)
        self._max = max_token_size
        self._max_payload = (max_token_size - _HEAD) // 4 * 3 - _OVERHEAD
        server = _utf8(server_id)
        server = struct.pack(">I", len(server)) + server
        # Token head "v<n>.<kid>." -> that key's AEAD, associated-data head, and whether
        # the body is v1's hex.
        self._open = {
            f"{version}{kid}.": (aead, f"{version}{kid}.".encode("ascii") + server, version == "v1.")
            for kid, aead in keys._entries.items()
            for version in _VERSIONS
        }
        head = f"{_PREFIX}{next(iter(keys._entries))}."
        self._sealing = (head, *self._open[head][:2])

    def with_max_token_size(self, max_token_size: int) -> StateSealer:
        """A sealer like this one (keys, server id, ttl) for tokens up to another size:
        each opens what the other seals, within its own size bound."""
        return StateSealer(
            self._keys, server_id=self._server_id, ttl=self._ttl, max_token_size=max_token_size
        )

    @property
    def server_id(self) -> str:
        """Who this sealer seals for: tokens sealed under another server id never open."""
        return self._server_id

    @property
    def max_payload(self) -> int:
        """The largest payload, in bytes, that :meth:`seal` fits in a token."""
        return self._max_payload

    @property
    def ttl(self) -> float:
        """The default lifetime of a token, in seconds."""
        return self._ttl

    def sealed_now(self, token: str) -> bool:
        """True when ``token`` is in the current format under the key that seals now, so
        that a value kept at rest under an older key (or format) can be sealed again."""
        return token.startswith(self._sealing[0])

    def seal(self, payload: bytes, binding: Binding, *, now: float, ttl: float | None = None) -> str:
        """Seal ``payload`` for ``binding``, valid until ``now + ttl`` (default: the sealer's).

        Raises ValueError for a bad ``ttl``/``now`` or a payload too large for a token.
        """
        if ttl is None:
            expires = now + self._ttl
            if not -_INF < expires < _INF:
                raise ValueError(f"now must be finite, not {now!r}")
        else:
            expires = now + ttl
            if not (0.0 < ttl < _INF and -_INF < expires < _INF):
                raise ValueError(f"ttl must be positive and now finite (ttl={ttl!r}, now={now!r})")
        if len(payload) > self._max_payload:
            raise ValueError(f"payload of {len(payload)} bytes is too large for max_token_size={self._max}")
        head, aead, ad = self._sealing
        nonces = _NONCES
        try:  # _NONCES.next(), inline
            nonce = _pack_nonce(nonces.prefix, next(nonces.counter))
        except struct.error:
            nonce = nonces.next()
        return head + _b64encode(
            nonce + aead.encrypt(nonce, _pack_expiry(expires) + payload, ad + binding._data)
        )

    def open(self, token: object, binding: Binding, *, now: float) -> bytes:
        """The payload sealed in ``token``, if intact, bound to ``binding`` and unexpired.

        Raises :class:`InvalidRequestState`, and nothing else, with a private reason:
        "not a string", "too large", "bad prefix", "unsupported version", "malformed",
        "unknown key id", "truncated", "bad base64" (v1: "bad hex"), "authentication failed",
        "expired".
        """
        if not isinstance(token, str):
            raise InvalidRequestState("not a string")
        if len(token) > self._max:
            raise InvalidRequestState("too large")
        entry = self._open.get(token[:_HEAD])
        if entry is None:
            raise InvalidRequestState(_head_problem(token))
        aead, head, legacy = entry
        body = token[_HEAD:]
        if legacy:
            raw = _from_hex(body)
        else:  # v2, inline: this is the hot path
            if len(body) < _SHORTEST_BASE64:
                raise InvalidRequestState("truncated")
            # b64decode(validate=True) refuses other characters and bad padding, but not
            # set bits after the last byte ("QR==" decodes like "QQ=="): check that digit.
            if body[-1] == "=" and (
                body[-3] not in _ZERO_LOW4 if body[-2] == "=" else body[-2] not in _ZERO_LOW2
            ):
                raise InvalidRequestState("bad base64")
            try:  # validate=True, passed by position: pybase64 parses keywords slowly
                raw = _b64decode(body, None, True)
            except ValueError:  # binascii.Error, or a non-ASCII str
                raise InvalidRequestState("bad base64") from None
        try:
            plain = aead.decrypt(raw[:_NONCE], raw[_NONCE:], head + binding._data)
        except InvalidTag:
            raise InvalidRequestState("authentication failed") from None
        if not now < _unpack_expiry(plain)[0]:
            raise InvalidRequestState("expired")
        return plain[_EXPIRY_SIZE:]


def _from_hex(body: str) -> bytes:
    """Decode a v1 body: lowercase hex only."""
    if len(body) < 2 * _OVERHEAD:
        raise InvalidRequestState("truncated")
    # One spelling per token: a2b_hex would also take upper case.
    if "A" in body or "B" in body or "C" in body or "D" in body or "E" in body or "F" in body:
        raise InvalidRequestState("bad hex")
    try:
        return binascii.a2b_hex(body)
    except ValueError:  # binascii.Error, or a non-ASCII str
        raise InvalidRequestState("bad hex") from None


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_ZERO_LOW4 = frozenset(_B64[::16])  # the last digit before "==" carries 2 bits
_ZERO_LOW2 = frozenset(_B64[::4])  # the last digit before "=" carries 4 bits
_SHORTEST_BASE64 = 4 * -(-_OVERHEAD // 3)  # nonce, expiry and tag, no payload
_b64encode = pybase64.b64encode_as_string
_b64decode = pybase64.b64decode
_pack_expiry = _EXPIRY.pack
_unpack_expiry = _EXPIRY.unpack_from


def key_id(token: str) -> str | None:
    """The id of the key a token names in its head (None: it names none we could read),
    for a log line saying which key a refused token needs."""
    if not token.startswith(_VERSIONS) or token[_HEAD - 1 : _HEAD] != ".":
        return None
    kid = token[len(_PREFIX) : _HEAD - 1]
    return kid if all(c in "0123456789abcdef" for c in kid) else None


def _head_problem(token: str) -> str:
    """Why a token's head ("v<n>.<kid>.") is not one of ours."""
    if not token.startswith(_VERSIONS):
        version = token[: max(token.find(".", 0, 12), 0)]
        ok = version[1:].isascii() and version[1:].isdigit() and version[:1] == "v"
        return "unsupported version" if ok else "bad prefix"
    kid = token[len(_PREFIX) : _HEAD - 1]
    if token[_HEAD - 1 : _HEAD] != "." or len(kid) != 2 * _KID_BYTES:
        return "malformed"
    return "unknown key id"
