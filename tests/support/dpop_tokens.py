"""DPoP at the test authorization server (``support.mcp_authorization``): a token endpoint
in front of the authlib provider's that checks the client's DPoP proof and binds the
tokens it issues to the proof's key (RFC 9449 §5), optionally after asking for a nonce
(§8).

Proofs are checked here with joserfc, not with mcp-elicit's own ``core.dpop``, so the
client's proofs and the server's check are each judged by code the other did not write.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message


@dataclass
class DpopTokens:
    """Serve as the ``/token`` route: ``app`` is the provider's token endpoint behind it."""

    app: ASGIApp
    enabled: bool = False  # off: the provider's endpoint as it is (proofs ignored, Bearer tokens)
    token_url: str = ""
    nonce: str | None = None  # required in proofs when set (RFC 9449 §8)
    bound: dict[str, str] = field(default_factory=dict)  # access token -> key thumbprint
    proofs: list[dict[str, Any]] = field(default_factory=list)  # the claims of every valid proof
    challenged: int = 0  # use_dpop_nonce answers given

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.enabled:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        body = await request.body()
        proof = request.headers.get("dpop")
        thumbprint = None
        if proof is not None:
            try:
                claims, thumbprint = self._check(proof)
            except (JoseError, ValueError, KeyError) as exc:
                await self._refuse("invalid_dpop_proof", str(exc))(scope, receive, send)
                return
            if self.nonce is not None and claims.get("nonce") != self.nonce:
                self.challenged += 1
                refusal = self._refuse("use_dpop_nonce", "send the nonce")
                refusal.headers["DPoP-Nonce"] = self.nonce
                await refusal(scope, receive, send)
                return
            self.proofs.append(claims)
        answer = await call_with_body(self.app, scope, body)
        if thumbprint is not None and answer.status_code == 200:
            document = json.loads(answer.body)
            document["token_type"] = "DPoP"
            self.bound[document["access_token"]] = thumbprint
            answer = JSONResponse(document, headers={"Cache-Control": "no-store"})
        await answer(scope, receive, send)

    def _check(self, proof: str) -> tuple[dict[str, Any], str]:
        header = jws.extract_compact(proof.encode()).headers()
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256":
            raise ValueError("typ must be dpop+jwt and alg ES256")
        key = ECKey.import_key(header["jwk"])
        claims = json.loads(jws.deserialize_compact(proof, key, algorithms=["ES256"]).payload)
        if claims.get("htm") != "POST" or claims.get("htu") != self.token_url:
            raise ValueError("htm/htu do not name the token endpoint")
        if not isinstance(claims.get("jti"), str) or abs(time.time() - claims["iat"]) > 300:
            raise ValueError("no jti, or iat out of range")
        return claims, key.thumbprint()

    @staticmethod
    def _refuse(error: str, description: str) -> JSONResponse:
        return JSONResponse({"error": error, "error_description": description}, status_code=400)


async def call_with_body(app: ASGIApp, scope: Any, body: bytes) -> Response:
    """Run ``app`` on a request with ``body``; its whole answer."""
    sent = False
    start: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        else:
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    headers = {k.decode(): v.decode() for k, v in start.get("headers", []) if k.lower() != b"content-length"}
    return Response(b"".join(chunks), status_code=start["status"], headers=headers)
