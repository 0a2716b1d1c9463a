"""DPoP (RFC 9449), sans-IO: the key a client proves possession of, the proofs it signs
for the token endpoint and for the MCP server, and the server's check of a proof.

A DPoP-bound access token is useless to whoever steals it without the private key. The
client holds one ES256 (P-256) key; it signs a fresh proof (a JWT with its own ``jti``) for
every HTTP request that presents the token, and for every token request, so the
authorization server binds the tokens to the key's thumbprint.

The MCP profile of DPoP (the ``io.modelcontextprotocol/auth/dpop`` extension) adds one
claim to proofs sent to the MCP server: ``content_digest``, the SHA-256 of the request
body (``sha-256=:<base64>:``, RFC 9530), because every MCP request goes to one URL with
one method. Proofs for the token endpoint carry no ``content_digest`` and no ``ath``.

A server checks a proof with :func:`check_proof` (RFC 9449 §4.3 and the MCP profile): one
compact JWS of type ``dpop+jwt`` without ``crit`` extensions, signed with an asymmetric
algorithm by the public key in its header, for this method and URL, issued within five minutes, for this access token
(``ath``) and this body (``content_digest``). It returns a :class:`CheckedProof`: the
key's thumbprint, which must be the one the token is bound to (its ``cnf.jkt``), and the
proof's ``jti`` with the time until which the proof stays acceptable, which is how long a
server that refuses replays (RFC 9449 §11.1) must remember that ``jti``; remembering is
I/O, so it is the caller's. A server that hands out nonces (RFC 9449 §9) also has it check
the proof's ``nonce``.

Rules: the standard library and ``cryptography`` only; time is an argument. The private
key never leaves this module except as :meth:`DpopKey.private_pem`, for a token store
that keeps it with the tokens it binds. :func:`check_proof` raises :class:`ProofError`
and nothing else, for any input; its message says what is wrong and never echoes the
proof or the token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils

from mcp_elicit.core.jws import b64url, json_bytes, sign_compact
from mcp_elicit.errors import AuthorizationError

__all__ = [
    "ALGORITHM",
    "VERIFIED_ALGORITHMS",
    "CheckedProof",
    "DpopKey",
    "NonceError",
    "ProofError",
    "check_proof",
    "content_digest",
    "proof_target",
    "thumbprint",
]

#: The one signing algorithm this client uses for proofs.
ALGORITHM: Final = "ES256"


def content_digest(body: bytes) -> str:
    """The ``content_digest`` claim of ``body``: ``sha-256=:<standard base64>:``."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


def proof_target(url: str) -> str:
    """The ``htu`` of a request to ``url``: the URL without its query and fragment, nor a
    user and password (never part of the URI a request targets, RFC 9110, section 4.2.4)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


class DpopKey:
    """An ES256 key pair whose public half goes in every proof's header."""

    __slots__ = ("_jwk", "_private", "_thumbprint")

    def __init__(self, private: ec.EllipticCurvePrivateKey) -> None:
        if not isinstance(private, ec.EllipticCurvePrivateKey) or not isinstance(private.curve, ec.SECP256R1):
            raise AuthorizationError("a DPoP key must be an EC P-256 private key (ES256)")
        self._private = private
        numbers = private.public_key().public_numbers()
        # RFC 7638: the thumbprint hashes the required members in lexicographic order.
        self._jwk = {
            "crv": "P-256",
            "kty": "EC",
            "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big")),
        }
        self._thumbprint = thumbprint(self._jwk)

    @classmethod
    def generate(cls) -> DpopKey:
        """A fresh key."""
        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_pem(cls, pem: str) -> DpopKey:
        """The key saved by :meth:`private_pem`."""
        try:
            key = serialization.load_pem_private_key(pem.encode("ascii"), password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm, UnicodeEncodeError) as exc:
            raise AuthorizationError(f"the stored DPoP key does not load ({type(exc).__name__})") from None
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise AuthorizationError("the stored DPoP key is not an EC key")
        return cls(key)

    def private_pem(self) -> str:
        """The private key as unencrypted PKCS#8 PEM (secret: for a 0600 token store)."""
        return self._private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode("ascii")

    @property
    def jwk(self) -> dict[str, str]:
        """The public key as a JWK (RFC 7517)."""
        return dict(self._jwk)

    @property
    def thumbprint(self) -> str:
        """The JWK SHA-256 thumbprint (RFC 7638) a bound token's ``cnf.jkt`` names."""
        return self._thumbprint

    def proof(
        self,
        method: str,
        url: str,
        *,
        now: float,
        nonce: str | None = None,
        access_token: str | None = None,
        body: bytes | None = None,
    ) -> str:
        """A fresh proof for one HTTP request: ``method`` to ``url`` (query and fragment
        dropped), with the server's ``nonce`` when it asked for one. With ``access_token``
        it also carries ``ath`` (the token's SHA-256), for a request that presents it; with
        ``body`` the MCP profile's ``content_digest``."""
        header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self._jwk}
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": proof_target(url),
            "iat": int(now),
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())
        if body is not None:
            claims["content_digest"] = content_digest(body)
        return sign_compact(header, claims, self._private)

    def __repr__(self) -> str:
        return f"DpopKey(thumbprint={self._thumbprint!r})"


# ---- the server's check ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckedProof:
    """A proof that holds: the thumbprint of the key that signed it, its ``jti``, and
    ``until``, the time (``iat`` plus the accepted age) after which it is refused anyway."""

    thumbprint: str
    jti: str
    until: float


class ProofError(ValueError):
    """A DPoP proof that does not hold; the message says why (for ``error_description``)."""


class NonceError(ProofError):
    """A proof without the nonce the server asks for, or with a stale one (RFC 9449 §9):
    the server answers ``use_dpop_nonce`` with a fresh nonce."""


_HASHES: Final[dict[str, Callable[[], hashes.HashAlgorithm]]] = {
    "256": hashes.SHA256,
    "384": hashes.SHA384,
    "512": hashes.SHA512,
}
_CURVES: Final = {
    "ES256": ("P-256", ec.SECP256R1),
    "ES384": ("P-384", ec.SECP384R1),
    "ES512": ("P-521", ec.SECP521R1),
}
#: What a server accepts: RFC 9449 §11.6 asks for asymmetric algorithms only.
VERIFIED_ALGORITHMS: Final = (*_CURVES, "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
_REQUIRED_MEMBERS: Final = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}
_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_MAX_PROOF: Final = 8 * 1024
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]+")


def _unb64url(part: str, what: str) -> bytes:
    if not _BASE64URL.fullmatch(part) or len(part) % 4 == 1:
        raise ProofError(f"the proof's {what} is not base64url")
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except ValueError:
        raise ProofError(f"the proof's {what} is not base64url") from None


def _object(part: str, what: str) -> dict[str, Any]:
    raw = _unb64url(part, what)
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise ProofError(f"the proof's {what} is not JSON") from None
    if not isinstance(value, dict):
        raise ProofError(f"the proof's {what} is not a JSON object")
    return value


def _integer(jwk: dict[str, Any], name: str) -> int:
    value = jwk.get(name)
    if not isinstance(value, str):
        raise ProofError(f"the proof's jwk has no {name}")
    return int.from_bytes(_unb64url(value, f"jwk {name}"), "big")


def _verify(alg: str, jwk: dict[str, Any], signature: bytes, signed: bytes) -> None:
    """Verify ``signature`` over ``signed`` with the public ``jwk`` under ``alg``."""
    try:
        if alg in _CURVES:
            crv, curve_type = _CURVES[alg]
            if jwk.get("kty") != "EC" or jwk.get("crv") != crv:
                raise ProofError(f"{alg} needs an EC key on {crv}")
            curve = curve_type()
            size = (curve.key_size + 7) // 8
            if len(signature) != 2 * size:
                raise ProofError("the proof's signature has the wrong length")
            key = ec.EllipticCurvePublicNumbers(_integer(jwk, "x"), _integer(jwk, "y"), curve).public_key()
            r, s = int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
            key.verify(utils.encode_dss_signature(r, s), signed, ec.ECDSA(_HASHES[alg[2:]]()))
        elif alg == "EdDSA":
            if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
                raise ProofError("EdDSA needs an Ed25519 key")
            raw = _unb64url(str(jwk.get("x", "")), "jwk x")
            ed25519.Ed25519PublicKey.from_public_bytes(raw).verify(signature, signed)
        else:
            if jwk.get("kty") != "RSA":
                raise ProofError(f"{alg} needs an RSA key")
            exponent, modulus = _integer(jwk, "e"), _integer(jwk, "n")
            if not 2048 <= modulus.bit_length() <= 8192 or exponent.bit_length() > 64:
                # a weak key, or one costly to verify with (a proof must be cheap to refuse)
                raise ProofError("the proof's RSA key is not of 2048 to 8192 bits with a small exponent")
            public = rsa.RSAPublicNumbers(exponent, modulus).public_key()
            digest = _HASHES[alg[2:]]()
            pad: padding.AsymmetricPadding = (
                padding.PKCS1v15()
                if alg.startswith("RS")
                else padding.PSS(padding.MGF1(digest), salt_length=digest.digest_size)
            )
            public.verify(signature, signed, pad, digest)
    except InvalidSignature:
        raise ProofError("the proof's signature does not verify") from None
    except ProofError:
        raise
    except (ValueError, TypeError, UnsupportedAlgorithm):  # not a point on the curve, ...
        raise ProofError(f"the proof's jwk is not a usable {alg} key") from None


def thumbprint(jwk: dict[str, Any]) -> str:
    """The JWK SHA-256 thumbprint (RFC 7638) of a public key."""
    members = _REQUIRED_MEMBERS.get(str(jwk.get("kty")))
    if members is None or not all(isinstance(jwk.get(m), str) for m in members):
        raise ProofError("the proof's jwk is not an EC, RSA or OKP public key")
    return b64url(hashlib.sha256(json_bytes({m: jwk[m] for m in members})).digest())


#: A %-escape in a URL's path (RFC 3986, section 2.1).
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
#: What a URI may hold (RFC 3986, section 2): nothing else is ever part of an ``htu``.
_URI: Final = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
#: RFC 3986's unreserved characters: %-escaped or not, the same URL (section 2.3).
_UNRESERVED: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _normal_escapes(path: str) -> str:
    """``path`` after RFC 3986's percent-encoding normalization (section 6.2.2): an escaped
    unreserved character as itself, every other escape in upper case."""

    def one(match: re.Match[str]) -> str:
        byte = int(match.group(1), 16)
        return chr(byte) if byte in _UNRESERVED else match.group(0).upper()

    return _ESCAPE.sub(one, path)


def _without_dot_segments(path: str) -> str:
    """``path`` after RFC 3986's path segment normalization (section 6.2.2.3, the
    ``remove_dot_segments`` of section 5.2.4): each ``.`` segment dropped, each ``..``
    dropped with the segment before it (none above the root). Only whole segments count:
    ``...`` or ``..;x`` is a name, and an escaped ``/`` (``%2F``) no boundary."""
    kept: list[str] = []
    segments = path.split("/")
    for segment in segments[1:] if path.startswith("/") else segments:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    ended_on_dots = segments[-1] in (".", "..")  # "/a/." names the directory "/a/"
    joined = ("/" if path.startswith("/") else "") + "/".join(kept)
    return joined + "/" if ended_on_dots and not joined.endswith("/") else joined


def _same_target(htu: str, url: str) -> bool:
    """Whether ``htu`` names ``url`` (RFC 9449, section 4.3): compared after syntax-based
    and scheme-based normalization (RFC 3986, sections 6.2.2 and 6.2.3): scheme and host
    in any case, the default port or none, escapes in any case or unreserved ones not
    escaped, dot segments taken out of the ``htu`` (after the escapes: ``%2E%2E`` is ``..``),
    a trailing ``/`` or none. Other escapes are kept: ``%3B`` is not ``;``, ``%2F`` not
    ``/``. Taking the dots out accepts only another spelling of the same URI, one an HTTP
    client resolves before it sends a request (section 5.2). A ``url`` that has dot
    segments was not resolved: the server was reached there and took them as names (a
    ``Mount("/{tenant}")`` reached at ``/%2E%2E/mcp``), so an ``htu`` must spell them too;
    taking them out would make it another resource's URL (``/mcp``) and take that
    resource's proofs. An ``htu`` that
    is not a URI (a space, a tab or line break, which ``urlsplit`` would silently drop,
    letters beyond ASCII) or that names a user (``https://user@host/``: another URI, and an
    error in an http(s) one, RFC 9110, section 4.2.4) names nothing."""
    if not _URI.fullmatch(htu):
        return False

    def canonical(value: str, *, resolved: bool) -> tuple[str, str, int | None, str]:
        parts = urllib.parse.urlsplit(value)
        if "@" in parts.netloc:
            raise ValueError("a user in the URL")
        scheme = parts.scheme.lower()
        port = parts.port if parts.port is not None else _DEFAULT_PORTS.get(scheme)
        path = _normal_escapes(parts.path)
        if resolved:
            path = _without_dot_segments(path)
        return scheme, (parts.hostname or "").lower(), port, path.rstrip("/") or "/"

    try:
        served = canonical(url, resolved=False)
        dotted = any(segment in (".", "..") for segment in served[3].split("/"))
        return canonical(htu, resolved=not dotted) == served
    except ValueError:  # a bad port, a user
        return False


def check_proof(
    proof: str | None,
    *,
    method: str,
    url: str,
    access_token: str,
    body: bytes,
    now: float,
    max_age: float = 300.0,
    nonce_ok: Callable[[object], bool] | None = None,
) -> CheckedProof:
    """Check the DPoP proof sent with a request presenting ``access_token`` (see the module
    docstring); return who signed it and until when it holds. ``nonce_ok``: the server
    wants its nonce in proofs, and this says whether the proof's ``nonce`` claim is one
    (:class:`NonceError` when not, once everything else holds)."""
    if not proof:
        raise ProofError("the request has no DPoP proof")
    if len(proof) > _MAX_PROOF or proof.count(".") != 2 or not proof.isascii():
        raise ProofError("the DPoP proof is not one compact JWS")
    head, payload, signature = proof.split(".")
    header = _object(head, "header")
    if header.get("typ") != "dpop+jwt":
        raise ProofError("the proof's typ is not dpop+jwt")
    alg = header.get("alg")
    if alg not in VERIFIED_ALGORITHMS:
        raise ProofError(f"the proof's alg is not one of {' '.join(VERIFIED_ALGORITHMS)}")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict):
        raise ProofError("the proof's header has no jwk")
    if _PRIVATE_MEMBERS & jwk.keys():
        raise ProofError("the proof's jwk holds a private key")
    if "crit" in header:  # RFC 7515 §4.1.11: extensions not understood make the JWS invalid
        raise ProofError("the proof's header has crit, and this server understands no extension")
    _verify(str(alg), jwk, _unb64url(signature, "signature"), f"{head}.{payload}".encode("ascii"))
    claims = _object(payload, "claims")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > 256:
        raise ProofError("the proof has no jti")
    if claims.get("htm") != method:
        raise ProofError(f"the proof's htm is not {method}")
    htu = claims.get("htu")
    if not isinstance(htu, str) or "?" in htu or "#" in htu or not _same_target(htu, url):
        raise ProofError("the proof's htu is not this endpoint's URL")
    iat = claims.get("iat")
    # compared before any arithmetic: an integer beyond a float's range cannot be subtracted
    if not isinstance(iat, int | float) or isinstance(iat, bool) or not now - max_age <= iat <= now + max_age:
        raise ProofError(f"the proof's iat is not within {int(max_age)} seconds of the server's time")
    expected = b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())
    if claims.get("ath") != expected:
        raise ProofError("the proof's ath is not the hash of the access token presented")
    if claims.get("content_digest") != content_digest(body):
        raise ProofError("the proof's content_digest is not the SHA-256 of the request body")
    if nonce_ok is not None and not nonce_ok(claims.get("nonce")):
        raise NonceError("the proof lacks the server's current nonce")
    return CheckedProof(thumbprint(jwk), jti, iat + max_age)
