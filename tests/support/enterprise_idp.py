"""A company's identity provider for enterprise-managed authorization tests: its token
endpoint (``/idp/token`` on the test site, ``support.mcp_authorization``) trades a person's
ID token for an ID-JAG (a token exchange, RFC 8693) when the company's policy lets that
client reach that MCP server. Tokens are made and checked with joserfc.
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
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

IDP = "https://idp.example"
CLIENT_AT_IDP = "mcp-client-at-the-idp"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass
class EnterpriseIdpServer:
    """Serve ``token`` as the IdP's token endpoint. ``allowed``: the MCP server URLs policy
    allows; ``client_id``: the client's id at the MCP server's authorization server, which
    the ID-JAG names."""

    key: ECKey
    client_id: str = "client-1"
    allowed: set[str] = field(default_factory=set)
    exchanges: list[dict[str, str]] = field(default_factory=list)

    def id_token(self, subject: str = "ann@example.com", *, audience: str = CLIENT_AT_IDP) -> str:
        """The ID token the person's sign-in to the client gave it."""
        now = int(time.time())
        claims = {"iss": IDP, "sub": subject, "aud": audience, "iat": now, "exp": now + 600}
        return jws.serialize_compact({"alg": "ES256", "typ": "JWT"}, json.dumps(claims).encode(), self.key)

    async def token(self, request: Request) -> Response:
        form = dict(urllib.parse.parse_qsl((await request.body()).decode()))
        self.exchanges.append(form)
        expected = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": ID_JAG,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "client_id": CLIENT_AT_IDP,
        }
        if any(form.get(k) != v for k, v in expected.items()) or not form.get("audience"):
            return _error("invalid_request")
        try:
            claims = json.loads(jws.deserialize_compact(form.get("subject_token", ""), self.key).payload)
        except (JoseError, ValueError):
            return _error("invalid_grant")
        if claims.get("aud") != CLIENT_AT_IDP or claims.get("exp", 0) <= time.time():
            return _error("invalid_grant")
        if form.get("resource") not in self.allowed:
            return _error("access_denied")  # the company's policy says no
        now = int(time.time())
        grant: dict[str, Any] = {
            "iss": IDP,
            "sub": claims["sub"],
            "aud": form["audience"],
            "resource": form["resource"],
            "client_id": self.client_id,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_urlsafe(8),
        }
        if form.get("scope"):
            grant["scope"] = form["scope"]
        jag = jws.serialize_compact(
            {"alg": "ES256", "typ": "oauth-id-jag+jwt"}, json.dumps(grant).encode(), self.key
        )
        return JSONResponse(
            {"issued_token_type": ID_JAG, "access_token": jag, "token_type": "N_A", "expires_in": 300},
            headers={"Cache-Control": "no-store"},
        )


def _error(code: str) -> JSONResponse:
    return JSONResponse({"error": code}, status_code=400)
