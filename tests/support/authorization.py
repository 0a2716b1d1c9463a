"""What the tests of the sans-IO authorization core share: example URLs and values, and
builders of authorization server and protected resource documents."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.core.authorization import AuthorizationServer
from mcp_elicit.errors import AuthorizationError

SERVER_URL = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
REDIRECT = "http://127.0.0.1:33418/callback"
CODE = "Splx10BeZQQYbYS6WxSbIA"


def _server(**overrides: Any) -> AuthorizationServer:
    base: dict[str, Any] = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
    }
    base.update(overrides)
    return AuthorizationServer(**base)


def _refused(call: Any, *args: Any, match: str | None = None, **kwargs: Any) -> str:
    with pytest.raises(AuthorizationError, match=match) as info:
        call(*args, **kwargs)
    return str(info.value)


ACCESS = "eyJhbGciOiJSUzI1NiJ9.access-secret"
