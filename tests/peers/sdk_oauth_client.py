"""The official Python SDK's client (``mcp`` 2.3.0) signing in to an mcp-elicit server
behind OAuth, for the server side's interop test. Run with the peer's own python:

    python sdk_oauth_client.py URL MODE

MODE is the SDK's ``legacy`` (2025-11-25) or ``auto``. The SDK's OAuth provider discovers
the authorization server from the server's metadata and challenge, registers and
authorizes; the test's authorization server approves at once, so the "browser" here only
fetches the authorization URL and reads the redirect. Calls ``whoami`` and prints one JSON
object with its text.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.parse

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:9/callback"


class Memory:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main(url: str, mode: str) -> None:
    came_back: list[str] = []

    async def open_browser(authorization_url: str) -> None:
        async with httpx2.AsyncClient() as http:
            answer = await http.get(authorization_url)
        came_back.append(answer.headers["location"])

    async def callback() -> AuthorizationCodeResult:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(came_back[-1]).query)
        return AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    provider = OAuthClientProvider(
        url,
        OAuthClientMetadata(
            client_name="sdk peer",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="client_secret_basic",
        ),
        Memory(),
        open_browser,
        callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        result = await client.call_tool("whoami", {})
    print(json.dumps({"text": " ".join(getattr(block, "text", "") for block in result.content)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
