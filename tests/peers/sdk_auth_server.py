"""A server built with the official Python SDK (``mcp`` 2.3.0) behind OAuth, for the
client's authorization interop test. It runs in the peer's own virtualenv:

    tests/.peers/mcp/bin/python tests/peers/sdk_auth_server.py PORT ISSUER

The SDK publishes its protected resource metadata and challenges unauthorized requests;
the tokens come from ``ISSUER`` (the test's authorization server), and this server checks
one by asking that issuer's protected API (``GET ISSUER/api/me``). Tool: ``whoami()``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import urllib.error
import urllib.request

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer


class AskTheIssuer:
    """A token is valid when the issuer's API accepts it."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    async def verify_token(self, token: str) -> AccessToken | None:
        return await asyncio.to_thread(self._ask, token)

    def _ask(self, token: str) -> AccessToken | None:
        request = urllib.request.Request(
            f"{self.issuer}/api/me", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # the issuer is on 127.0.0.1
                me = json.load(answer)
        except urllib.error.HTTPError:
            return None
        return AccessToken(token=token, client_id="unknown", scopes=me["scope"].split(), subject=me["user"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("issuer")
    args = parser.parse_args()
    mcp = MCPServer(
        "sdk-guarded",
        log_level="WARNING",
        token_verifier=AskTheIssuer(args.issuer),
        auth=AuthSettings(
            issuer_url=args.issuer,
            resource_server_url=f"http://127.0.0.1:{args.port}/mcp",
            required_scopes=["repo"],
            validate_token_resource=False,
        ),
    )

    @mcp.tool()
    async def whoami() -> str:
        """Says hello to whoever got through."""
        return "the SDK says hello"

    import uvicorn

    uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
