"""The JWT-bearer grant (RFC 7523 §2.1) at the test authorization server
(``support.mcp_authorization``): a token request whose ``assertion`` is signed by the
identity provider (``support.enterprise_idp.IDP``) gets an access token for its subject:

* a workload's JWT (workload identity federation), for this token endpoint, unexpired;
* an ID-JAG (enterprise-managed authorization, ``typ`` ``oauth-id-jag+jwt``), for this
  authorization server and ``resource``, presented by the client it names, authenticated
  with its secret (HTTP Basic).

Assertions are checked with joserfc. Every other grant goes on to the endpoint behind.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey
from starlette.responses import JSONResponse
from starlette.types import ASGIApp

from support.dpop_tokens import call_with_body
from support.enterprise_idp import IDP
from support.oauth_provider import OAuthTestProvider, Token

GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class WorkloadGrant:
    """Serve as the ``/token`` route, in front of ``app``."""

    app: ASGIApp
    provider: OAuthTestProvider
    token_url: str = ""
    key: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256"))
    requests: list[dict[str, str]] = field(default_factory=list)  # the jwt-bearer token requests
    enabled: bool = True  # off: the grant is unknown here (and not in the metadata)

    def assertion(
        self, *, subject: str = "workload-1", audience: str | None = None, ttl: float = 300.0
    ) -> str:
        """A workload JWT as the identity provider would issue it."""
        now = int(time.time())
        claims = {
            "iss": IDP,
            "sub": subject,
            "aud": audience or self.token_url,
            "iat": now,
            "exp": now + int(ttl),
            "jti": secrets.token_urlsafe(8),
        }
        return jws.serialize_compact({"alg": "ES256", "typ": "JWT"}, json.dumps(claims).encode(), self.key)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        form = dict(urllib.parse.parse_qsl(body.decode()))
        if form.get("grant_type") != GRANT or not self.enabled:
            await (await call_with_body(self.app, scope, body))(scope, receive, send)
            return
        self.requests.append(form)
        try:
            subject = self._check(
                form.get("assertion", ""), dict(scope["headers"]).get(b"authorization", b"")
            )
        except (JoseError, ValueError, KeyError) as exc:
            refusal = JSONResponse({"error": "invalid_grant", "error_description": str(exc)}, status_code=400)
            await refusal(scope, receive, send)
            return
        token = secrets.token_urlsafe(16)
        scope_asked = form.get("scope", "")
        self.provider.tokens[token] = Token(token, None, "workload", scope_asked, subject, time.time() + 3600)
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
        await JSONResponse(answer, headers={"Cache-Control": "no-store"})(scope, receive, send)

    def _check(self, assertion: str, authorization: bytes) -> str:
        verified = jws.deserialize_compact(assertion, self.key, algorithms=["ES256"])
        claims = json.loads(verified.payload)
        if claims["iss"] != IDP or claims["exp"] <= time.time():
            raise ValueError("the assertion is from another issuer, or expired")
        if verified.headers().get("typ") != "oauth-id-jag+jwt":
            if claims["aud"] != self.token_url:
                raise ValueError("the assertion is for another audience")
            return str(claims["sub"])
        issuer = self.token_url.removesuffix("/token")
        if claims["aud"] != issuer or claims["resource"] != f"{issuer}/mcp":
            raise ValueError("the ID-JAG is for another authorization server or resource")
        kind, _, credentials = authorization.decode().partition(" ")
        client_id, _, secret = base64.b64decode(credentials or "Og==").decode().partition(":")
        client = self.provider.clients.get(client_id)
        if (
            kind != "Basic"
            or client is None
            or not client.check_client_secret(secret)
            or client_id != claims["client_id"]
        ):
            raise ValueError("the ID-JAG is for another client, or the client did not authenticate")
        return str(claims["sub"])
