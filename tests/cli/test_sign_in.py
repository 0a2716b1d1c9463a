"""``mcp-elicit check|call`` against a server that wants OAuth (MCP authorization): the
real protected server and authorization server of ``support.mcp_authorization``, served
from a thread (``cli.auth_site``); the command in a real terminal (``cli.pty_session``) or
in process. The browser is an httpx client that opens the authorization URL and follows
the provider's redirect back to the loopback callback.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import re
import stat
import struct
import sys
import termios
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cli.auth_site import browse, served
from cli.helpers import run
from cli.pty_session import ENTER, ESC, PtySession
from mcp_elicit.cli.call import run_request
from mcp_elicit.cli.check import run_check
from mcp_elicit.cli.sign_in import (
    NO_TERMINAL,
    SECRET_ENV,
    TOKENS_ENV,
    SignIn,
    add_sign_in_options,
    token_file,
)
from mcp_elicit.cli.targets import Target
from mcp_elicit.server.auth import ResourceMetadata

from support.mcp_authorization import McpAuthorization
from support.oauth_provider import CLIENT_ID, CLIENT_SECRET
from support.procs import ROOT, cli

HELLO = "hello from the protected server"
AUTHORIZE = re.compile(r"http://127\.0\.0\.1:\d+/authorize\?\S+")


@pytest.fixture
def site() -> Iterator[McpAuthorization]:
    with served() as site:
        yield site


@pytest.fixture
def tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where this test's tokens go (``$MCP_ELICIT_TOKENS``), never the user's own file."""
    path = tmp_path / "state" / "tokens.json"
    monkeypatch.setenv(TOKENS_ENV, str(path))
    monkeypatch.delenv(SECRET_ENV, raising=False)
    return path


@dataclass
class Person:
    """Says yes to the sign-in, and does the browser's part (``consent`` and ``open_url``)."""

    asked: list[tuple[str, str]] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)

    async def consent(self, url: str, issuer: str) -> bool:
        self.asked.append((url, issuer))
        return True

    def open_url(self, url: str) -> bool:
        self.pages.append(browse(url))
        return True

    def sign_in(self, tokens: Path, **options: object) -> SignIn:
        return SignIn(tokens, consent=self.consent, open_url=self.open_url, **options)  # type: ignore[arg-type]


def record(tokens: Path, site: McpAuthorization) -> dict[str, object]:
    stored = json.loads(tokens.read_text())[site.url]
    assert isinstance(stored, dict)
    return stored


# ---- in a real terminal ---------------------------------------------------------------------

needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@needs_pty
def test_call_signs_in_from_a_real_terminal_and_the_next_run_does_not_ask(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pty = PtySession([*cli(), "call", site.url, "whoami"], cwd=ROOT, env=dict(os.environ))
    try:
        pty.expect("An MCP server asks you to sign in")
        pty.expect(f"MCP server    {site.url}")
        pty.expect(f"signs you in  {site.base}")
        pty.expect(f"{site.base}/authorize?response_type=code")
        pty.expect("Site: 127.0.0.1")
        pty.expect("o: open it in your browser to sign in · d: decline · Esc: cancel >")
        pty.send("o" + ENTER)
        pty.expect("Opening the sign-in page.")
        # no display here: the address is printed for the person to open
        pty.expect("could not start a browser here; open this address yourself to sign in:")
        pty.expect("waiting for the sign-in in your browser (up to 300 s; Ctrl-C to stop)")
        url = AUTHORIZE.findall(pty.screen)[-1]
        page = browse(url)
        assert "Signed in" in page and "You can close this tab" in page
        pty.expect(HELLO)
        assert pty.wait() == 0
    finally:
        pty.close()
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert (site.registrations, site.provider.exchanges) == (1, 1)
    stored = record(tokens, site)
    assert stored["issuer"] == site.base
    # The next run has no terminal (in process, stdin is not one): it needs none.
    result = run(capsys, "call", site.url, "whoami", "--json")
    assert result.code == 0, result.err
    outcome = result.json()
    assert outcome["result"]["content"][0]["text"] == HELLO
    assert outcome["authorization"] == {"issuer": site.base, "signed_in_now": False, "token_type": "Bearer"}
    assert (site.registrations, site.provider.exchanges) == (1, 1)


@needs_pty
@pytest.mark.parametrize("key", ["d" + ENTER, ESC])
def test_declining_in_the_terminal_is_exit_3(site: McpAuthorization, tokens: Path, key: str) -> None:
    pty = PtySession([*cli(), "check", site.url], cwd=ROOT, env=dict(os.environ))
    try:
        pty.expect("o: open it in your browser to sign in · d: decline · Esc: cancel >")
        pty.send(key, pause=0.8 if key == ESC else 0.05)
        pty.expect("Sign-in declined.")
        pty.expect(f"mcp-elicit: could not sign in to {site.url}: sign-in declined.")
        assert pty.wait() == 3
    finally:
        pty.close()
    assert site.provider.exchanges == 0
    assert not tokens.exists()


# ---- in process ------------------------------------------------------------------------------


def test_without_a_terminal_a_sign_in_is_exit_3_saying_what_to_do(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "call", site.url, "whoami")
    assert result.code == 3
    assert f"could not sign in to {site.url}: {NO_TERMINAL}" in result.err
    assert "run the command in a terminal, or pass a token with --header 'Authorization: Bearer TOKEN'" in (
        result.err
    )
    assert "HTTP 401" in result.err  # what the server said
    result = run(capsys, "check", site.url, "--json")
    assert result.code == 3
    assert result.json()["error"].startswith(
        f"could not sign in to {site.url}: the server wants you to sign in"
    )
    assert site.registrations == 0  # it stopped before registering a client nobody could use
    assert not tokens.exists()


def test_no_login_reports_the_401(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "call", site.url, "whoami", "--no-login")
    assert result.code == 3
    assert f"HTTP 401 from {site.url}: the server wants authorization" in result.err
    assert "resource_metadata=" in result.err
    assert "Sign in by leaving out --no-login, or pass a token with --header" in result.err
    assert site.registrations == 0


def test_a_token_given_with_header_is_used_and_nothing_signs_in(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "check", site.url, "-H", "Authorization: Bearer not-a-token")
    assert result.code == 3
    assert "does not accept the Authorization header given" in result.err
    assert site.registrations == 0 and not tokens.exists()


def test_check_signs_in_declares_nothing_and_says_with_whom(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    person = Person()
    report = asyncio.run(run_check(Target(url=site.url), sign_in=person.sign_in(tokens)))
    assert report.exit_code == 0, report.to_json()
    assert report.client_capabilities == {}
    assert [tool.name for tool in report.tools] == ["whoami"]
    assert report.authorization == {"issuer": site.base, "signed_in_now": True, "token_type": "Bearer"}
    assert report.timings_ms["sign_in"] > 0  # apart: a person's time is not the server's
    assert [issuer for _, issuer in person.asked] == [site.base]
    assert "Signed in" in person.pages[0]
    # the next run uses the stored token, and says so
    result = run(capsys, "check", site.url)
    assert result.code == 0, result.err
    assert f"signed in     with OAuth at {site.base} (a token kept from an earlier sign-in)" in result.out
    result = run(capsys, "check", site.url, "--json")
    assert result.json()["authorization"] == {
        "issuer": site.base,
        "signed_in_now": False,
        "token_type": "Bearer",
    }
    assert result.json()["client_capabilities"] == {}
    assert "sign_in" not in result.json()["timings_ms"]
    assert site.provider.exchanges == 1


def test_check_says_when_the_token_is_bound_to_the_clients_key(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.dpop = True  # the authorization server offers DPoP: the CLI's sign-in takes it
    report = asyncio.run(run_check(Target(url=site.url), sign_in=Person().sign_in(tokens)))
    assert report.exit_code == 0, report.to_json()
    assert report.authorization == {"issuer": site.base, "signed_in_now": True, "token_type": "DPoP"}
    assert record(tokens, site)["dpop_key"]  # kept with the token, 0600 like it
    result = run(capsys, "check", site.url)  # the next run signs proofs with the stored key
    assert result.code == 0, result.err
    assert "the token is bound to this client's key (DPoP)" in result.out
    assert site.provider.exchanges == 1


@dataclass
class SlowPerson(Person):
    """Takes longer to sign in than the command's --timeout."""

    seconds: float = 4.0

    async def consent(self, url: str, issuer: str) -> bool:
        await asyncio.sleep(self.seconds)
        return await super().consent(url, issuer)


def test_a_sign_in_slower_than_the_timeout_is_not_a_timeout(site: McpAuthorization, tokens: Path) -> None:
    person = SlowPerson()
    # The person takes 4 s, past the 3 s the server is given: counted against it, the check
    # would fail; the server's own answers fit in it with room to spare, loaded or not.
    report = asyncio.run(run_check(Target(url=site.url), timeout=3.0, sign_in=person.sign_in(tokens)))
    assert report.exit_code == 0, report.to_json()
    assert report.timings_ms["sign_in"] >= person.seconds * 1000
    # the person's time is reported as the sign-in's, not within the connection's
    assert report.timings_ms["connect"] < report.timings_ms["sign_in"]


def test_the_next_sign_in_listens_where_the_client_was_registered(
    site: McpAuthorization, tokens: Path
) -> None:
    asyncio.run(run_check(Target(url=site.url), sign_in=Person().sign_in(tokens)))
    (client,) = record(tokens, site)["clients"].values()  # type: ignore[attr-defined]
    site.provider.expire_all()
    site.provider.refuse_refresh = True  # so that the person signs in again
    person = Person()
    report = asyncio.run(run_check(Target(url=site.url), sign_in=person.sign_in(tokens)))
    assert report.exit_code == 0, report.to_json()
    ((url, _),) = person.asked
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["redirect_uri"] == [client["redirect_uri"]]
    assert site.registrations == 1


def test_an_expired_token_is_refreshed_without_a_terminal(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(run_request(Target(url=site.url), "tools/call", "whoami", sign_in=Person().sign_in(tokens)))
    site.provider.expire_all()
    result = run(capsys, "call", site.url, "whoami")
    assert result.code == 0, result.err
    assert result.out.strip() == HELLO
    assert (site.provider.exchanges, site.provider.refreshes) == (1, 1)


def test_a_client_registered_beforehand(
    site: McpAuthorization, tokens: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site.registration = False
    site.provider.register("http://127.0.0.1/callback")  # a loopback redirect URI: any port (RFC 8252)
    person = Person()
    sign_in = person.sign_in(tokens, client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    outcome = asyncio.run(run_request(Target(url=site.url), "tools/call", "whoami", sign_in=sign_in))
    assert outcome["result"]["content"][0]["text"] == HELLO
    assert f"client_id={CLIENT_ID}&" in person.asked[0][0]
    assert (site.registrations, site.provider.exchanges) == (0, 1)
    # Later runs name the client on the command line, its secret in the environment.
    site.provider.expire_all()
    monkeypatch.setenv(SECRET_ENV, "not-the-secret")
    result = run(capsys, "call", site.url, "whoami", "--client-id", CLIENT_ID)
    assert result.code == 3  # the refresh is refused, and a new sign-in needs a terminal
    assert NO_TERMINAL in result.err
    monkeypatch.setenv(SECRET_ENV, CLIENT_SECRET)
    result = run(capsys, "call", site.url, "whoami", "--client-id", CLIENT_ID)
    assert result.code == 0, result.err
    assert (site.provider.exchanges, site.provider.refreshes) == (1, 1)


def test_a_workload_signs_in_with_its_platforms_token_file(
    site: McpAuthorization, tokens: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI job or a pod: no terminal, no browser; the JWT in the file is the grant, read
    again when the token runs out (platforms rotate it)."""
    token_file_ = tmp_path / "platform-token"
    token_file_.write_text(site.workload.assertion(subject="ci-job-1") + "\n")
    result = run(capsys, "call", site.url, "whoami", "--workload-token", str(token_file_))
    assert result.code == 0, result.err
    assert result.out.strip() == HELLO
    token_file_.write_text(site.workload.assertion(subject="ci-job-2"))
    site.provider.expire_all()
    result = run(capsys, "call", site.url, "whoami", "--workload-token", str(token_file_))
    assert result.code == 0, result.err
    assert [r["assertion"] for r in site.workload.requests][1] == token_file_.read_text()
    result = run(capsys, "check", site.url, "--workload-token", str(token_file_), "--json")
    assert result.json()["authorization"] == {
        "issuer": site.base,
        "signed_in_now": False,
        "token_type": "Bearer",
        "workload": True,
    }
    assert (site.registrations, site.provider.exchanges) == (0, 0)
    token_file_.unlink()
    site.provider.expire_all()
    result = run(capsys, "call", site.url, "whoami", "--workload-token", str(token_file_))
    assert result.code == 3
    assert "cannot read the workload token" in result.err
    result = run(capsys, "call", site.url, "whoami", "--workload-token", "/dev/zero")  # not a token file
    assert result.code == 3
    assert "more than 64 KiB: not a token" in result.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--client-secret", "s"], "--client-secret needs --client-id"),
        (["--client-id", "c", "--no-login"], "--client-id is for signing in, and --no-login says not to"),
        (["--client-id", "c", "-H", "Authorization: Bearer t"], "and an Authorization header says not to"),
        (["--callback-port", "70000"], "--callback-port is a port number"),
        (["--workload-token", "t.jwt", "--no-login"], "--workload-token is for signing in"),
        (["--workload-token", "t.jwt", "--callback-port", "8000"], "signs in without one"),
        (["--plain-http", "private", "--no-login"], "--plain-http is for signing in"),
    ],
)
def test_sign_in_options_that_do_not_go_together(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    result = run(capsys, "check", "http://127.0.0.1:9/mcp", *argv)
    assert result.code == 2
    assert message in result.err


def test_sign_in_options_are_for_http_targets(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--client-id", "c", "--", sys.executable, "-c", "pass")
    assert result.code == 2
    assert "--client-id is for HTTP targets" in result.err


def test_the_help_names_the_sign_in_options(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("check", "call"):
        with pytest.raises(SystemExit):
            run(capsys, command, "--help")
        text = capsys.readouterr().out
        for option in (
            "--no-login",
            "--client-id",
            "--client-secret",
            "--callback-port",
            "--workload-token",
            "--plain-http",
            TOKENS_ENV,
            SECRET_ENV,
        ):
            assert option in text, (command, option)
        # the port chosen by default is the earlier registration's, as the README says:
        # a user told "any free port" would fix one to keep a registration that is kept anyway
        said = " ".join(text.split())
        assert (
            "(default: the port of an earlier registration at this server when it is free, else any)" in said
        )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_where_the_tokens_are_kept() -> None:
    assert token_file({TOKENS_ENV: "/srv/t.json", "XDG_STATE_HOME": "/state"}) == Path("/srv/t.json")
    assert token_file({"XDG_STATE_HOME": "/state", "HOME": "/home/a"}) == Path(
        "/state/mcp-elicit/tokens.json"
    )
    relative = {"XDG_STATE_HOME": "state", "HOME": "/home/a"}  # not absolute: ignored (XDG)
    assert token_file(relative) == Path("/home/a/.local/state/mcp-elicit/tokens.json")
    assert token_file({"HOME": "/home/a"}) == Path("/home/a/.local/state/mcp-elicit/tokens.json")


def redirecting_elsewhere(site: McpAuthorization) -> Any:
    """``site`` whose endpoint redirects (307) to another origin (``localhost`` instead of
    ``127.0.0.1``, same port), where ``/elsewhere`` asks for a token of its own."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            location = site.base.replace("127.0.0.1", "localhost") + "/elsewhere"
            await send(
                {"type": "http.response.start", "status": 307, "headers": [(b"location", location.encode())]}
            )
            await send({"type": "http.response.body", "body": b""})
        elif scope["type"] == "http" and scope["path"] == "/elsewhere":
            headers = [(b"www-authenticate", b'Bearer realm="elsewhere"')]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
        else:
            await site.app(scope, receive, send)

    return app


@pytest.mark.parametrize(
    "options",
    [[], ["--no-login"], ["-H", "Authorization: Bearer a-token"]],
    ids=["sign-in", "no-login", "header"],
)
def test_a_redirect_to_another_origin_that_asks_for_authorization_says_to_use_that_url(
    tokens: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    with served(redirecting_elsewhere) as site:
        elsewhere = site.base.replace("127.0.0.1", "localhost")
        result = run(capsys, "check", site.url, *options)
        assert site.registrations == 0  # nobody is asked to sign in where it cannot help
    # The POST is not followed there at all (its body would go, though no token or header
    # does), so the other server's 401 is never seen: the redirect itself is the reason.
    assert result.code == 3
    assert f"{site.url} redirects (HTTP 307) to {elsewhere}/elsewhere, another origin" in result.err
    assert f"use {elsewhere}/elsewhere directly" in result.err
    assert "REDACTED" not in result.err  # nothing hidden: to paste as it is
    assert "--header" not in result.err and "sign in" not in result.err


def test_plain_http_private_reaches_the_sign_in(tokens: Path) -> None:
    # RFC 6750 section 5.3: no tokens over plain http to another machine, unless the user
    # says the private network is trusted (transports/test_http_auth_cleartext.py)
    from mcp_elicit.cli.sign_in import oauth, sign_in_from_args
    from mcp_elicit.cli.targets import Observed, parse_target

    parser = argparse.ArgumentParser()
    add_sign_in_options(parser)
    target = parse_target("http://10.1.2.3:8000/mcp", None)

    async def built(sign_in: SignIn) -> str:
        async with oauth(sign_in, target, Observed()) as auth:
            return auth.plain_http

    for argv, expected in (([], "loopback"), (["--plain-http", "private"], "private")):
        sign_in = sign_in_from_args(parser.parse_args(argv), target)
        assert sign_in is not None and sign_in.plain_http == expected
        assert asyncio.run(built(Person().sign_in(tokens, plain_http=expected))) == expected


ASCII_ONLY = {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
UTF8 = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def consent_rows(site: McpAuthorization, columns: int, environment: dict[str, str]) -> tuple[list[str], str]:
    """The rows of what ``check`` shows on a terminal ``columns`` wide up to the sign-in
    consent's prompt (declined), each without the frame's edges; and all it wrote."""
    command = ["env", f"COLUMNS={columns}", *cli(), "check", site.url]  # PtySession's is 120
    pty = PtySession(command, cwd=ROOT, env={**os.environ, **environment})
    try:
        fcntl.ioctl(pty.master, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
        pty.expect("cancel >")
        pty.send("d" + ENTER)
        assert pty.wait() == 3
        shown, raw = pty.screen, pty.raw
    finally:
        pty.close()
    assert "sign-in declined" in shown
    if environment is ASCII_ONLY:
        assert raw.isascii() and "\\u2026" not in shown, shown
    return [row.strip(" |│") for row in shown.splitlines()], shown


@needs_pty
@pytest.mark.parametrize("columns", [16, 24])
@pytest.mark.parametrize("environment", [ASCII_ONLY, UTF8], ids=["ascii", "utf-8"])
def test_the_consent_on_a_narrow_terminal_shows_the_server_and_the_issuer_whole(
    site: McpAuthorization, tokens: Path, environment: dict[str, str], columns: int
) -> None:
    # Beside their labels, the addresses had the columns the labels left: none at 16
    # columns ("MCP server", "signs you…" and no address at all), a few at 24 (one
    # address in rows of six characters). Each is now under its label, in the frame's
    # width, folded but never cut.
    rows, shown = consent_rows(site, columns, environment)
    assert f"MCP server{site.url}signs you in{site.base}" in "".join(rows), shown


@needs_pty
def test_a_sign_in_asking_many_scopes_is_shown_whole_and_may_be_opened(site: McpAuthorization) -> None:
    # An authorization URL is the client's own (the endpoint, PKCE, the scopes the server
    # lists): past 2048 characters with many scopes, as some providers' are, it was refused
    # like a URL-mode page too long to be shown whole ("This address will not be opened"),
    # so no sign-in could happen. It is shown whole instead, and may be opened.
    scopes = [f"https://api.example.com/auth/calendar.events.readonly.{i}" for i in range(40)]
    site.mcp.resource_metadata = ResourceMetadata([site.base], scopes_supported=scopes)
    pty = PtySession([*cli(), "check", site.url], cwd=ROOT, env=dict(os.environ))
    try:
        pty.expect("cancel >")
        shown = pty.screen
        pty.send("d" + ENTER)
        assert pty.wait() == 3
    finally:
        pty.close()
    joined = "".join(row.strip(" │|") for row in shown.splitlines())  # the frame's rows
    url = re.search(r"http://127\.0\.0\.1:\d+/authorize\?\S+?readonly\.39", joined)
    assert url is not None and len(url.group()) > 2048, shown  # shown whole
    assert "o: open it in your browser to sign in" in shown, shown
    assert "will not be opened" not in shown and "characters)" not in shown, shown
