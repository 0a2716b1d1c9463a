"""What URL mode checks and says before serving: pages that take secrets need https except
on loopback, and a server with several users needs ``page_auth`` to tie a page to the
person who asked."""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
from collections.abc import Mapping

import pytest

from mcp_elicit import Server
from mcp_elicit.cli.serve import _configure_url_mode
from mcp_elicit.errors import ConfigError
from mcp_elicit.server.auth import StaticTokens
from mcp_elicit.stores.memory import MemoryStore

pytestmark = pytest.mark.anyio


async def _warnings(server: Server, caplog: pytest.LogCaptureFixture) -> list[str]:
    with caplog.at_level(logging.INFO, logger="mcp_elicit"):
        await server.start()
    await server.stop()
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# --- plain http off loopback ------------------------------------------------------------


@pytest.mark.parametrize(
    "public_url",
    ["http://mcp.example.com", "http://192.168.1.20:8000", "HTTP://10.0.0.5/tools", "http://[fd00::1]:80"],
)
def test_a_plain_http_public_url_off_loopback_is_refused(public_url: str) -> None:
    """As for an OAuth provider's URLs: the secret page, its link token and its cookie
    would cross the network in cleartext."""
    says = r"plain http.*not loopback.*https://"
    with pytest.raises(ConfigError, match=says):
        Server("s", public_url=public_url)
    with pytest.raises(ConfigError, match=says):
        Server("s").configure_url_mode(public_url=public_url)


@pytest.mark.parametrize(
    "public_url",
    [
        "https://me:PASSWORD@tools.example.com",
        "https://tools.example.com/?key=SECRET",
        "http://me:PASSWORD@tools.example.com/x?key=SECRET",
        "https://tools.example.com/x y?key=SECRET",
        "me:PASSWORD@tools.example.com/x",  # no scheme: the URL it reads as is said redacted too
    ],
)
def test_a_refused_public_url_is_quoted_without_its_password_or_key(public_url: str) -> None:
    """The refusal ends up on a terminal or in a deployment's log: the URL it quotes has
    its user name and password, query and fragment redacted."""
    with pytest.raises(ConfigError, match="the public URL") as caught:
        Server("s", public_url=public_url)
    assert "PASSWORD" not in str(caught.value) and "SECRET" not in str(caught.value), str(caught.value)
    assert "REDACTED" in str(caught.value)


def test_serve_refuses_a_plain_http_public_url_off_loopback() -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mcp_elicit", "serve", "examples/demo_server.py"),
            *("--store", "memory://", "--public-url", "http://mcp.example.com"),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert (
        "--public-url: the public URL 'http://mcp.example.com' is plain http on a host that is not loopback"
        in done.stderr
    )


@pytest.mark.parametrize(
    "public_url",
    ["http://127.0.0.1:8000", "http://localhost:9000/tools", "http://[::1]:8000", "https://mcp.example.com"],
)
async def test_https_or_loopback_is_accepted_quietly(
    public_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server("s", store=MemoryStore(), public_url=public_url)
    assert await _warnings(server, caplog) == []


async def test_a_link_from_a_bound_address_off_loopback_is_served_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``serve --http 192.168.1.20:8000`` without ``--public-url`` (a test on a LAN) still
    serves, its links on the bound address, and says at start-up what that exposes."""
    server = Server("s", store=MemoryStore())
    args = argparse.Namespace(store=None, public_url=None, allow_host=[])
    _configure_url_mode(server, args, ("192.168.1.20", 8000))
    assert server.url_mode.public_url == "http://192.168.1.20:8000"
    (warning,) = await _warnings(server, caplog)
    assert "http://192.168.1.20:8000" in warning
    assert "cleartext" in warning and "https" in warning and "--public-url" in warning


async def test_a_wildcard_bound_address_reads_as_loopback_and_is_quiet(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("s", store=MemoryStore())
    _configure_url_mode(
        server, argparse.Namespace(store=None, public_url=None, allow_host=[]), ("0.0.0.0", 8000)
    )
    assert await _warnings(server, caplog) == []


# --- several users, no page_auth ----------------------------------------------------------


class _SignedIn:
    """A page_auth: who is signed in to this site in the browser (its session cookie)."""

    async def subject(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        return cookies.get("site-session")


async def test_several_users_without_page_auth_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    """With ``auth=``, only the single-use link ties a page to the person who asked (the
    pages' loopback-only check holds nothing behind a proxy on the same host)."""
    server = Server("s", store=MemoryStore(), auth=StaticTokens({"tok-alice": "alice"}))
    (warning,) = await _warnings(server, caplog)
    assert "page_auth" in warning and "auth=" in warning
    assert "single-use link" in warning and "proxy" in warning


@pytest.mark.parametrize("auth", [False, True])
async def test_page_auth_or_a_single_user_is_quiet(auth: bool, caplog: pytest.LogCaptureFixture) -> None:
    server = Server(
        "s",
        store=MemoryStore(),
        auth=StaticTokens({"tok-alice": "alice"}) if auth else None,
        page_auth=_SignedIn() if auth else None,
    )
    assert await _warnings(server, caplog) == []


def test_serve_keeps_the_public_url_the_server_s_code_gives() -> None:
    """``Server(public_url=...)`` in the server's file is the operator's choice: ``serve
    --http`` without ``--public-url`` keeps it rather than putting the bound address in its
    place (which would send people to an address they cannot reach); ``--public-url``
    given on the command line still wins."""
    server = Server("s", store=MemoryStore(), public_url="https://tools.example.com")
    _configure_url_mode(
        server, argparse.Namespace(store=None, public_url=None, allow_host=[]), ("127.0.0.1", 8000)
    )
    assert server.url_mode.public_url == "https://tools.example.com"
    given = argparse.Namespace(store=None, public_url="https://other.example.com", allow_host=[])
    _configure_url_mode(server, given, ("127.0.0.1", 8000))
    assert server.url_mode.public_url == "https://other.example.com"
