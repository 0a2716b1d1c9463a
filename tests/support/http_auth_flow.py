"""What the tests of the client's MCP authorization over real HTTP share."""

from __future__ import annotations

import urllib.parse

from mcp_elicit.transports.http_auth import OAuth
from mcp_elicit.transports.http_client import connect_http

from support.mcp_authorization import FollowRedirect, McpAuthorization

REVISIONS = ["2026-07-28", "2025-11-25"]


def oauth(authorizer: FollowRedirect | None = None, **options: object) -> OAuth:
    return OAuth(authorizer or FollowRedirect(), **options)  # type: ignore[arg-type]


async def call(site: McpAuthorization, auth: OAuth, revision: str = "2026-07-28") -> str:
    async with connect_http(site.url, auth=auth, versions=[revision], timeout=10) as client:
        result = await client.call_tool("whoami", {})
    return str(result["content"][0]["text"])


class Recording(FollowRedirect):
    """The person's part without a person; ``scopes`` lists the scope of each authorization."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[str | None] = []

    async def authorize(self, url: str, *, issuer: str) -> str:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        self.scopes.append(query["scope"][0] if "scope" in query else None)
        return await super().authorize(url, issuer=issuer)
