"""Signing in to an HTTP TARGET that wants it (MCP authorization, OAuth 2.1) for ``check``,
``call``, ``prompt`` and ``read``.

Rules:

* An HTTP TARGET signs in when the server asks for it (a 401 with a Bearer or DPoP challenge,
  or with no challenge at all), unless the user gave an ``Authorization`` header
  (``--header``) or ``--no-login``. The flow is ``transports.http_auth.OAuth``; the
  person's part is ``transports.oauth_loopback.LoopbackAuthorizer``: consent in the
  terminal (``ui.sign_in``), then the system browser, then the way back on 127.0.0.1.
* Without a terminal on stdin and stderr there is nobody to ask: the sign-in fails with an
  ``AuthorizationError`` saying to run the command in a terminal or to pass a token, at the
  flow's first need for a person (before it registers a client). Stored tokens, and their
  refresh, work without a terminal.
* Tokens and client registrations are kept in a ``FileTokenStore`` (0600) at
  ``$MCP_ELICIT_TOKENS``, else ``$XDG_STATE_HOME/mcp-elicit/tokens.json``, else
  ``~/.local/state/mcp-elicit/tokens.json`` (``%LOCALAPPDATA%\\mcp-elicit\\tokens.json`` on
  Windows): the next run reuses them, and a refresh needs nobody.
* ``--client-id`` and ``--client-secret`` (or ``$MCP_ELICIT_CLIENT_SECRET``, kept out of
  argv) name a client registered beforehand; ``--callback-port`` fixes the loopback port
  for an authorization server that registers exact redirect URIs.
* Tokens go over TLS: a plain ``http://`` TARGET gets a sign-in only on this machine, or,
  with ``--plain-http private``, on a private network (``OAuth(plain_http=)``).
* ``--workload-token FILE``: a workload (a CI job, a pod) signs in as itself with the JWT
  its platform keeps in FILE (workload identity federation, the JWT-bearer grant), read
  again whenever a new access token is needed; no person, no browser.
* A person's time signing in does not count against ``--timeout`` (the flow says it waits
  for a person, as an answerer does), and the reports show it apart from "connect".
* The loopback listens on the port an earlier run registered, when it is free: an
  authorization server that registers exact redirect URIs keeps accepting it.
* What the sign-in did (the issuer; whether a person signed in during this run; how long
  it took) is put in ``targets.Observed`` for the reports. httpx and the OAuth stack are
  imported only when an HTTP TARGET is connected.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import textwrap
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from mcp_elicit.cli.targets import Observed, Target
from mcp_elicit.errors import AuthorizationError, UsageError

if TYPE_CHECKING:
    from mcp_elicit.transports.http_auth import OAuth, TokenStore
    from mcp_elicit.transports.http_grants import Audience
    from mcp_elicit.transports.oauth_loopback import Consent, LoopbackAuthorizer, Opener

__all__ = [
    "NO_TERMINAL",
    "SECRET_ENV",
    "TOKENS_ENV",
    "SignIn",
    "add_sign_in_options",
    "sign_in_from_args",
    "signed_in",
    "token_file",
]

TOKENS_ENV: Final = "MCP_ELICIT_TOKENS"
SECRET_ENV: Final = "MCP_ELICIT_CLIENT_SECRET"
_APP_DIR: Final = "mcp-elicit"
_TOKENS_FILE: Final = "tokens.json"


@dataclass(frozen=True)
class SignIn:
    """How to sign in to an HTTP TARGET. ``consent`` and ``open_url`` are the terminal's and
    the system browser's unless given (another front end, tests)."""

    tokens: Path
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    callback_port: int = 0
    workload_token: Path | None = None
    plain_http: str = "loopback"
    timeout: float = 300.0
    consent: Consent | None = None
    open_url: Opener | None = None


def add_sign_in_options(parser: argparse.ArgumentParser) -> None:
    about = (
        "A server that asks for OAuth gets a sign-in in your browser, after you say yes in the "
        f"terminal. Tokens are kept in ${TOKENS_ENV} (default: $XDG_STATE_HOME or ~/.local/state, "
        "then mcp-elicit/tokens.json), so the next run does not ask again."
    )
    group = parser.add_argument_group("signing in (HTTP targets)", textwrap.fill(about, width=76))
    group.add_argument(
        "--no-login",
        action="store_true",
        help="never sign in: a server that wants authorization is reported (exit 3)",
    )
    group.add_argument(
        "--client-id",
        metavar="ID",
        help="sign in as this client, registered beforehand at the authorization server",
    )
    group.add_argument(
        "--client-secret",
        metavar="SECRET",
        help=f"the secret of --client-id (better: ${SECRET_ENV}, which stays out of the process list)",
    )
    group.add_argument(
        "--callback-port",
        type=int,
        default=0,
        metavar="PORT",
        help="take the browser's way back on http://127.0.0.1:PORT/callback (default: the port of an "
        "earlier registration at this server when it is free, else any)",
    )
    group.add_argument(
        "--workload-token",
        type=Path,
        metavar="FILE",
        help="sign in as a workload with the JWT in FILE (from its platform: a Kubernetes service "
        "account token, a CI's OIDC token), read each time a token is needed; no browser",
    )
    group.add_argument(
        "--plain-http",
        choices=("loopback", "private"),
        default="loopback",
        help="which plain http:// servers get a sign-in and tokens, which then cross the network "
        "unencrypted: this machine only (default), or also private-network addresses and "
        ".local/.home.arpa/.internal names, for a network you trust",
    )


def token_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where tokens and registrations are kept (see the module docstring; not created here)."""
    env = os.environ if environ is None else environ
    given = env.get(TOKENS_ENV)
    if given:
        return Path(given).expanduser()
    if sys.platform.startswith("win"):
        local = env.get("LOCALAPPDATA")
        return (Path(local) if local else Path.home() / "AppData" / "Local") / _APP_DIR / _TOKENS_FILE
    state = env.get("XDG_STATE_HOME", "")
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    base = Path(state) if state.startswith("/") else home / ".local" / "state"
    return base / _APP_DIR / _TOKENS_FILE


def sign_in_from_args(args: argparse.Namespace, target: Target) -> SignIn | None:
    """The sign-in the options ask for, or None (a stdio TARGET, an ``Authorization``
    header, ``--no-login``); ``UsageError`` for options that do not go together."""
    client_id: str | None = args.client_id
    secret: str | None = args.client_secret
    port: int = args.callback_port
    workload: Path | None = args.workload_token
    plain_http: str = args.plain_http
    chosen = [
        name
        for name, given in (
            ("--client-id", client_id),
            ("--client-secret", secret),
            ("--callback-port", port),
            ("--workload-token", workload),
            ("--plain-http", plain_http != "loopback"),
        )
        if given
    ]
    if not 0 <= port <= 65535:
        raise UsageError(f"--callback-port is a port number (1-65535), not {port}")
    if secret is not None and client_id is None:
        raise UsageError("--client-secret needs --client-id")
    if workload is not None and port:
        raise UsageError("--callback-port is for a person's sign-in; --workload-token signs in without one")
    if target.url is None:
        if chosen:
            raise UsageError(f"{chosen[0]} is for HTTP targets; a stdio server gets no sign-in")
        return None
    header = any(name.lower() == "authorization" for name, _ in target.headers)
    if args.no_login or header:
        if chosen:
            why = "--no-login" if args.no_login else "an Authorization header"
            raise UsageError(f"{chosen[0]} is for signing in, and {why} says not to sign in")
        return None
    if client_id is not None and secret is None:
        secret = os.environ.get(SECRET_ENV) or None
    return SignIn(
        token_file(),
        client_id=client_id,
        client_secret=secret,
        callback_port=port,
        workload_token=workload,
        plain_http=plain_http,
    )


# ---- connecting ----------------------------------------------------------------------------


NO_TERMINAL: Final = (
    "the server wants you to sign in, which needs you at a terminal, and stdin or stderr is not one here: "
    "run the command in a terminal, or pass a token with --header 'Authorization: Bearer TOKEN'"
)


def _terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


class _Nobody:
    """The ``Authorizer`` when there is nobody to sign in: the flow stops at its first need
    for a person (before it registers a client), with ``NO_TERMINAL``."""

    completed: tuple[str, ...] = ()

    @property
    def redirect_uri(self) -> str:
        raise AuthorizationError(NO_TERMINAL)

    async def authorize(self, url: str, *, issuer: str) -> str:
        raise AuthorizationError(NO_TERMINAL)


def _terminal_consent(server: str) -> Consent:
    async def consent(url: str, issuer: str) -> bool:
        from mcp_elicit.ui.sign_in import TerminalConsent

        try:
            ask = TerminalConsent(server)
        except UsageError as exc:  # the cli extra is missing
            raise AuthorizationError(str(exc)) from None
        return await ask(url, issuer)

    return consent


def signed_in(
    issuer: str, *, now: bool, token_type: str = "Bearer", workload: bool = False
) -> dict[str, Any]:
    """What the reports say about a sign-in: its issuer, whether a person signed in now,
    the kind of token (``Bearer``, or ``DPoP`` for one bound to this client's key), and
    whether the client signed in as a workload (``--workload-token``)."""
    out: dict[str, Any] = {"issuer": issuer, "signed_in_now": now, "token_type": token_type}
    if workload:
        out["workload"] = True
    return out


@contextlib.asynccontextmanager
async def oauth(sign_in: SignIn, target: Target, observed: Observed) -> AsyncIterator[OAuth]:
    """The ``httpx.Auth`` that signs in to ``target``; everything it opened is closed after."""
    from mcp_elicit.transports.http_auth import FileTokenStore, OAuth
    from mcp_elicit.transports.oauth_loopback import LoopbackAuthorizer

    authorizer: LoopbackAuthorizer | _Nobody | None
    if sign_in.workload_token is not None:
        authorizer = None  # a workload: its platform's JWT is the grant
    elif sign_in.consent is None and not _terminal():
        authorizer = _Nobody()
    else:
        if sign_in.open_url is not None:
            open_url = sign_in.open_url
        else:
            from mcp_elicit.ui.terminal import system_browser

            open_url = system_browser
        authorizer = LoopbackAuthorizer(
            consent=sign_in.consent or _terminal_consent(str(target)),
            open_url=open_url,
            timeout=sign_in.timeout,
            port=sign_in.callback_port,
            prefer=await _registered_ports(FileTokenStore(sign_in.tokens), target.url or ""),
        )
    store = FileTokenStore(sign_in.tokens)
    auth = OAuth(
        authorizer,
        client_id=sign_in.client_id,
        client_secret=sign_in.client_secret,
        assertion=_file_assertion(sign_in.workload_token) if sign_in.workload_token is not None else None,
        store=store,
        plain_http=sign_in.plain_http,
    )
    observed.signing_in = True
    try:
        yield auth
    finally:
        await auth.aclose()
        if isinstance(authorizer, LoopbackAuthorizer):
            await authorizer.aclose()
            observed.sign_in_ms = round(authorizer.waited * 1000, 1)
        if auth.issuer is not None:
            observed.authorization = signed_in(
                auth.issuer,
                now=bool(authorizer and authorizer.completed),
                token_type=auth.token_type or "Bearer",
                workload=sign_in.workload_token is not None,
            )


_MAX_WORKLOAD_TOKEN: Final = 64 * 1024


def _file_assertion(path: Path) -> Callable[[Audience], Awaitable[str]]:
    """A workload's JWT, read from ``path`` each time it is needed (platforms rotate it);
    at most 64 KiB of it, so a wrong path (a device, a log) fails instead of hanging."""

    def read_capped() -> str:
        with path.open("rb") as file:
            data = file.read(_MAX_WORKLOAD_TOKEN + 1)
        if len(data) > _MAX_WORKLOAD_TOKEN:
            raise ValueError(f"more than {_MAX_WORKLOAD_TOKEN // 1024} KiB: not a token")
        return data.decode("utf-8").strip()

    async def read(audience: Audience) -> str:
        try:
            return await asyncio.to_thread(read_capped)
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            raise AuthorizationError(f"cannot read the workload token in {path}: {exc}") from None

    return read


async def _registered_ports(store: TokenStore, url: str) -> list[int]:
    """The loopback ports of the redirect URIs stored for ``url``'s registrations."""
    from mcp_elicit.transports.token_store import Stored

    record = await store.load(url)
    try:
        clients = Stored.from_record(record).clients if record is not None else {}
    except ValueError:  # a damaged record: the flow ignores it too
        return []
    ports: list[int] = []
    for client in clients.values():
        with contextlib.suppress(ValueError):  # a bad port
            parts = urllib.parse.urlsplit(client.redirect_uri or "")
            if parts.hostname == "127.0.0.1" and parts.port:
                ports.append(parts.port)
    return ports
