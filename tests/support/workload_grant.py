"""The JWT-bearer grant (RFC 7523 §2.1) at the test authorization server
(``support.mcp_authorization``), for workload identity federation: a token request whose
``assertion`` is a JWT signed by the workload's identity provider (``issuer``), for this
token endpoint, unexpired, gets an access token for the JWT's subject. The assertion is
checked with joserfc. Every other grant goes on to the endpoint behind.
"""

from __future__ import annotations

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
from support.oauth_provider import OAuthTestProvider, Token

GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
IDP = "https://idp.example"


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
            subject = self._check(form.get("assertion", ""))
        except (JoseError, ValueError, KeyError) as exc:
            refusal = JSONResponse({"error": "invalid_grant", "error_description": str(exc)}, status_code=400)
            await refusal(scope, receive, send)
            return
        token = secrets.token_urlsafe(16)
        scope_asked = form.get("scope", "")
        self.provider.tokens[token] = Token(token, None, "workload", scope_asked, subject, time.time() + 3600)
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
        await JSONResponse(answer, headers={"Cache-Control": "no-store"})(scope, receive, send)

    def _check(self, assertion: str) -> str:
        claims = json.loads(jws.deserialize_compact(assertion, self.key, algorithms=["ES256"]).payload)
        if claims["iss"] != IDP or claims["aud"] != self.token_url or claims["exp"] <= time.time():
            raise ValueError("the assertion is for another audience, from another issuer, or expired")
        return str(claims["sub"])
