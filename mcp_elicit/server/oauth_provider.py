"""A third-party service the server signs in to (``Server.oauth_provider``): its
registration, checked as it is made, and the optional authlib it needs (``server.oauth``
does the sign-in).

Rules:

* A provider's name is 1 to 64 letters, digits, ``_``, ``.`` or ``-``, starting with a
  letter or digit; its ``client_id`` is not empty; its ``scopes`` are a sequence of names,
  not one string.
* Its URLs (``authorize_url``, ``token_url``, ``revocation_url``) are https, or plain http
  on loopback only.
* ``extra_params`` may not set what the authorization request sets itself
  (``response_type``, ``client_id``, ``redirect_uri``, ``scope``, ``state``, the PKCE
  challenge), nor a ``response_mode`` other than ``query``; ``leeway`` is in [0, 3600)
  seconds. Each fault is a ``ConfigError`` naming the provider and the field.
* authlib (the ``mcp-elicit[oauth]`` extra) is imported on use; missing, it is a
  ``ConfigError`` naming the extra.
"""

from __future__ import annotations

import importlib
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.options import loopback_host

__all__ = ["MISSING_AUTHLIB", "OAuthProvider", "authlib", "require_authlib"]

MISSING_AUTHLIB: Final = (
    "third-party sign-in (Server.oauth_provider, ctx.connect) needs authlib: pip install 'mcp-elicit[oauth]'"
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_RESERVED_PARAMS: Final = frozenset(
    {
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
    }
)


def authlib(module: str) -> Any:
    """The authlib module ``authlib.<module>``; ``ConfigError`` naming the extra when
    authlib is not installed. (Imported on use: it is optional, and has no type hints.)"""
    try:
        return importlib.import_module(f"authlib.{module}")
    except ImportError:
        raise ConfigError(MISSING_AUTHLIB) from None


def require_authlib() -> None:
    """Raise ``ConfigError`` naming the extra when authlib is not installed."""
    authlib("oauth2.rfc7636")


def _check_url(what: str, url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and loopback_host(parts.hostname):
        return
    raise ConfigError(f"{what} {url!r}: expected an https:// URL (plain http only on loopback)")


@dataclass(frozen=True)
class OAuthProvider:
    """A third-party authorization server (authorization code + PKCE).

    ``leeway``: an access token this many seconds from its expiry counts as expired (it is
    refreshed before use). ``extra_params`` go into the authorization URL as they are; a
    ``response_mode`` other than ``query`` is refused (``form_post`` would come back as a
    cross-site POST, without the browser's flow cookie). ``check_granted_scopes=False``
    keeps tokens whose granted ``scope`` lacks some of ``scopes`` (logged at INFO), for a
    provider that writes the scopes it grants in names that cannot be matched to the ones
    asked (``oauth_scopes``). ``revocation_url``: the provider's RFC 7009 endpoint, where
    tokens thrown away are revoked (``oauth_revoke``); None when it has none.
    """

    name: str
    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] = ()
    extra_params: Mapping[str, str] = field(default_factory=dict)
    leeway: float = 30.0
    check_granted_scopes: bool = True
    revocation_url: str | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ConfigError(
                f"OAuth provider name {self.name!r}: 1 to 64 letters, digits, '_', '.' or '-', "
                "starting with a letter or digit"
            )
        _check_url(f"OAuth provider {self.name!r}: authorize_url", self.authorize_url)
        _check_url(f"OAuth provider {self.name!r}: token_url", self.token_url)
        if self.revocation_url is not None:
            _check_url(f"OAuth provider {self.name!r}: revocation_url", self.revocation_url)
        if not self.client_id:
            raise ConfigError(f"OAuth provider {self.name!r}: client_id is empty")
        if isinstance(self.scopes, str):
            raise ConfigError(f"OAuth provider {self.name!r}: scopes is a sequence of names, not a string")
        clash = _RESERVED_PARAMS & set(self.extra_params)
        if clash:
            raise ConfigError(
                f"OAuth provider {self.name!r}: extra_params may not set {', '.join(sorted(clash))}"
            )
        mode = self.extra_params.get("response_mode", "query")
        if mode != "query":
            raise ConfigError(
                f"OAuth provider {self.name!r}: extra_params sets response_mode={mode!r}, but the "
                "callback reads the code from its query: leave response_mode out, or set it to 'query'"
            )
        if not 0 <= self.leeway < 3600:
            raise ConfigError(f"OAuth provider {self.name!r}: leeway must be in [0, 3600) seconds")
