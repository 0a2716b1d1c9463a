"""DPoP over HTTP for :class:`~mcp_elicit.transports.http_auth.OAuth`: the client's key,
the nonces servers hand out (RFC 9449 §8 and §9), and the ``DPoP`` header of a request.

Rules:

* One key per ``OAuth`` (generated on first use, or the one stored with its tokens).
* A server's nonce is kept per origin (scheme, host, port) and put in every later proof to
  that origin, until the server sends another. A nonce that is not RFC 9449's
  ``1*NQCHAR`` (or is longer than 512 characters) is ignored, never echoed.
* Proofs are signed just before a request is sent, so each has its own ``jti`` and a
  current ``iat``, also when a request is sent again.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from typing import Final

import httpx

from mcp_elicit.core.dpop import DpopKey

__all__ = ["DpopProver"]

_NONCE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,512}")


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class DpopProver:
    """Signs the ``DPoP`` proofs of one client and remembers the servers' nonces."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._key: DpopKey | None = None
        self._nonces: dict[str, str] = {}

    @property
    def key(self) -> DpopKey:
        """The key proofs are signed with (made on first use)."""
        if self._key is None:
            self._key = DpopKey.generate()
        return self._key

    @property
    def has_key(self) -> bool:
        return self._key is not None

    def use(self, key: DpopKey) -> None:
        """Sign with ``key`` from now on (the one stored with the tokens it binds)."""
        self._key = key

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, body: bytes | None = None
    ) -> str:
        """A fresh proof for ``method`` to ``url``, with the origin's nonce if it gave one."""
        return self.key.proof(
            method,
            url,
            now=self._clock(),
            nonce=self._nonces.get(_origin(url)),
            access_token=access_token,
            body=body,
        )

    def sign(self, request: httpx.Request, access_token: str) -> None:
        """Present ``access_token`` on ``request`` as a DPoP-bound token, with a fresh
        proof that binds it and the request's body (the MCP profile's ``content_digest``)."""
        url = str(request.url)
        request.headers["Authorization"] = f"DPoP {access_token}"
        request.headers["DPoP"] = self.proof(
            request.method, url, access_token=access_token, body=request.content
        )

    def heard(self, url: str, headers: httpx.Headers) -> bool:
        """Record the ``DPoP-Nonce`` an answer from ``url`` carries; True if it is new."""
        nonce = headers.get("dpop-nonce")
        if nonce is None or not _NONCE.fullmatch(nonce):
            return False
        origin = _origin(url)
        if self._nonces.get(origin) == nonce:
            return False
        self._nonces[origin] = nonce
        return True
