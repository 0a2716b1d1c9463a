"""DPoP (RFC 9449) on the client's side, sans-IO: the key a client proves possession of,
and the proofs it signs for the token endpoint and for the MCP server.

A DPoP-bound access token is useless to whoever steals it without the private key. The
client holds one ES256 (P-256) key; it signs a fresh proof (a JWT with its own ``jti``) for
every HTTP request that presents the token, and for every token request, so the
authorization server binds the tokens to the key's thumbprint.

The MCP profile of DPoP (the ``io.modelcontextprotocol/auth/dpop`` extension) adds one
claim to proofs sent to the MCP server: ``content_digest``, the SHA-256 of the request
body (``sha-256=:<base64>:``, RFC 9530), because every MCP request goes to one URL with
one method. Proofs for the token endpoint carry no ``content_digest`` and no ``ath``.

Rules: the standard library and ``cryptography`` only; time is an argument. The private
key never leaves this module except as :meth:`DpopKey.private_pem`, for a token store
that keeps it with the tokens it binds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import urllib.parse
from typing import Any, Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

from mcp_elicit.errors import AuthorizationError

__all__ = ["ALGORITHM", "DpopKey", "content_digest", "proof_target"]

#: The one signing algorithm this client uses for proofs.
ALGORITHM: Final = "ES256"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def content_digest(body: bytes) -> str:
    """The ``content_digest`` claim of ``body``: ``sha-256=:<standard base64>:``."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


def proof_target(url: str) -> str:
    """The ``htu`` of a request to ``url``: the URL without its query and fragment."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


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
            "x": _b64url(numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.y.to_bytes(32, "big")),
        }
        self._thumbprint = _b64url(hashlib.sha256(_json(self._jwk)).digest())

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
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())
        if body is not None:
            claims["content_digest"] = content_digest(body)
        signing_input = f"{_b64url(_json(header))}.{_b64url(_json(claims))}"
        r, s = utils.decode_dss_signature(
            self._private.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
        )
        return f"{signing_input}.{_b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def __repr__(self) -> str:
        return f"DpopKey(thumbprint={self._thumbprint!r})"
