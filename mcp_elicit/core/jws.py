"""Compact JWS (RFC 7515) signing, the little the client needs: ``private_key_jwt``
assertions (RFC 7523) and DPoP proofs (RFC 9449). Sans-IO, ``cryptography`` only.

ES256 signatures are the raw ``r || s`` (32 bytes each) JWS asks for, not DER.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils

__all__ = ["b64url", "json_bytes", "sign_compact"]


def b64url(data: bytes) -> str:
    """Base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def json_bytes(value: Any) -> bytes:
    """Compact JSON, UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign_compact(
    header: dict[str, Any], claims: dict[str, Any], key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
) -> str:
    """``header.claims.signature``, signed ES256 (a P-256 key) or RS256 (an RSA key), as
    ``header["alg"]`` says."""
    signing_input = f"{b64url(json_bytes(header))}.{b64url(json_bytes(claims))}".encode("ascii")
    if isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        r, s = utils.decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return f"{signing_input.decode('ascii')}.{b64url(signature)}"
