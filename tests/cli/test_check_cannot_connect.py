"""``mcp-elicit check`` and servers it cannot reach or talk to (exit code 3): refused
connections, commands that do not run or exit, wrong paths and hosts, authorization, pages
and redirects that are no MCP endpoint, certificates, and servers that fall silent."""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cli.fake_http import fake_http, serving
from cli.helpers import fake, run

from support.procs import HttpProcess, free_port, wait_listening


def test_connection_refused(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    result = run(capsys, "check", f"http://127.0.0.1:{port}/mcp")
    assert result.code == 3
    assert f"nothing is listening at 127.0.0.1:{port} (connection refused)" in result.err
    assert f"mcp-elicit serve app.py --http 127.0.0.1:{port}" in result.err


def test_connection_refused_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", f"http://127.0.0.1:{free_port()}/mcp", "--json")
    assert result.code == 3
    report = result.json()
    assert report["ok"] is False and report["exit_code"] == 3
    assert "connection refused" in report["error"]


def test_a_command_that_does_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--", "no-such-mcp-server-command")
    assert result.code == 3
    assert "cannot start the server command" in result.err
    assert "installed and on PATH" in result.err


@pytest.mark.parametrize("kind", ["directory", "not-executable", "not-a-program"])
def test_a_command_that_exists_but_cannot_run_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    """A path that is there is not a matter of installing it or of PATH."""
    command = tmp_path / "server"
    if kind == "directory":
        command.mkdir()
        says = "is a directory, not a program"
    else:
        command.write_bytes(b"\x00\x01 not a program\n")
        command.chmod(0o644 if kind == "not-executable" else 0o755)
        says = (
            "has no execute permission (chmod +x it)"
            if kind == "not-executable"
            else "is not a program this system can run (a script needs a #! line)"
        )
    result = run(capsys, "check", "--", str(command), "--flag")
    assert result.code == 3
    assert f"cannot start the server command '{command} --flag'" in result.err
    assert f"{str(command)!r} {says}" in result.err, result.err
    assert "installed and on PATH" not in result.err


def test_a_server_file_given_as_the_command_says_how_to_run_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A .py file that is not executable is not a command: the error gives the two that
    run it (mcp-elicit serve, python), not "is it installed and on PATH"."""
    server = tmp_path / "app.py"
    server.write_text("print('hello')\n", encoding="utf-8")
    result = run(capsys, "check", "--", str(server), "--flag")
    assert result.code == 3
    assert "cannot start the server command" in result.err
    assert f"-- mcp-elicit serve {server} --flag (an mcp_elicit Server)" in result.err
    assert f"-- python {server} --flag (a script that runs its own server)" in result.err
    assert "on PATH" not in result.err


def test_a_command_that_exits(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--", *fake("exit"))
    assert result.code == 3
    assert "exited with code 3" in result.err
    assert "fake: cannot open the database" in result.err


def test_a_command_that_exits_before_its_input_is_written(capsys: pytest.CaptureFixture[str]) -> None:
    """A command that fails at once (a shell wrapper, a missing image) is gone before the
    opening request reaches its stdin: the broken pipe must not hide the exit code and the
    stderr that say why. A race, so tried a few times."""
    for _ in range(6):
        result = run(capsys, "check", "--", "sh", "-c", 'echo "fatal: no config" >&2; exit 7')
        assert result.code == 3, result.err
        assert "exited with code 7" in result.err, result.err
        assert "fatal: no config" in result.err, result.err


def test_the_wrong_path(capsys: pytest.CaptureFixture[str], http_demo: HttpProcess) -> None:
    url = http_demo.url.removesuffix("/mcp") + "/api"
    result = run(capsys, "check", url)
    assert result.code == 3
    assert "HTTP 404" in result.err and "no MCP endpoint here" in result.err
    assert f"try {http_demo.url}" in result.err


def test_the_wrong_path_with_a_password_and_key(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess
) -> None:
    """The address suggested is the TARGET's own with /mcp for its path: its password and
    key (kept: the server may need them) are redacted, and a line says what to write out."""
    url = http_demo.url.removesuffix("/mcp").replace("//", "//me:PASSWORD@", 1) + "/api?key=SECRET"
    result = run(capsys, "check", url)
    assert result.code == 3
    assert "PASSWORD" not in result.err and "SECRET" not in result.err, result.err
    assert "try http://REDACTED:REDACTED@127.0.0.1:" in result.err and "/mcp?REDACTED" in result.err, (
        result.err
    )
    assert "with its user name and password and its query written out as you gave them" in result.err


def test_a_host_the_server_does_not_accept(
    capsys: pytest.CaptureFixture[str], http_demo: HttpProcess
) -> None:
    result = run(capsys, "check", http_demo.url, "-H", "Host: mcp.example.com")
    assert result.code == 3
    assert "HTTP 421" in result.err and "--allow-host mcp.example.com" in result.err


def test_authorization_required(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/auth")
    assert result.code == 3
    assert "HTTP 401" in result.err
    assert 'WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1' in result.err
    assert "--header 'Authorization: Bearer TOKEN'" in result.err


def test_forbidden_with_a_scope_challenge(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/scope", "-H", "Authorization: Bearer t")
    assert result.code == 3
    assert "HTTP 403" in result.err and 'error="insufficient_scope"' in result.err
    assert "lacks a scope" in result.err


def test_a_legacy_http_sse_server(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/sse")
    assert result.code == 3
    assert "legacy HTTP+SSE server (MCP 2024-11-05)" in result.err
    assert "'/messages?REDACTED'" in result.err  # its session id, a key to the session, not quoted
    assert "session_id=abc" not in result.err


def test_a_web_page(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/page")
    assert result.code == 3
    assert "answered with a web page (text/html), not MCP" in result.err


@pytest.mark.parametrize("command", [["check"], ["call", "echo"]])
def test_a_plain_text_answer_is_not_mcp_and_is_quoted_inert_and_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, command[0], "--json", f"{base}/plain", *command[1:])
    assert result.code == 3, result.err
    said = result.json()["error"]
    assert said.startswith(f"{base}/plain answered HTTP 200 with Content-Type text/plain, not MCP")
    assert "a Streamable HTTP server answers a POST with application/json or text/event-stream" in said
    assert "It began: 'It works!\\x1b[2J\\nxxx" in said and "\x1b" not in said
    assert "x" * 200 not in said and "xxx…" in said
    assert f"try {base}/mcp" in said
    assert "unknown server" not in said


def test_a_quote_cut_short_ends_between_whole_codes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A body quoted cut at 160 characters ended inside a character's code ("\\u20…"):
    the cut now falls between whole codes."""
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", "--json", f"{base}/marks")
    assert result.code == 3, result.err
    quote = result.json()["error"].partition("It began: '")[2].partition("'.")[0]
    assert quote.startswith("Paused:\\u200e") and quote.endswith("\\u200e…"), quote
    assert len(quote) <= 160, quote


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_redirect_that_turns_the_post_into_a_get(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, status: int
) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/moved/{status}")
    assert result.code == 3
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert f"{base}/moved/{status} redirects (HTTP {status}) to {base}/bogus" in result.err
    assert f"use {base}/bogus as the TARGET." in result.err  # nothing hidden: to paste as it is
    assert "REDACTED" not in result.err


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_that_keeps_the_post_is_followed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, status: int
) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/moved/{status}")
    assert result.code == 0, result.err
    assert "OK: the server answers and lists its tools." in result.out


class _HugeHeaders(http.server.BaseHTTPRequestHandler):
    """An HTTP server answering every POST with a header longer than a client reads."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("X-Padding", "a" * 200_000)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("tls", [False, True])
def test_an_answer_whose_headers_are_too_long_is_not_taken_for_another_protocol(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls: bool
) -> None:
    with serving(_HugeHeaders, tls=tmp_path if tls else None) as base:
        if tls:
            monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
        result = run(capsys, "check", f"{base}/mcp")
    assert result.code == 3
    port = base.rsplit(":", 1)[1]
    assert f"127.0.0.1:{port} answered HTTP with headers longer than mcp-elicit reads" in result.err, (
        result.err
    )
    assert "does not answer like an HTTP server" not in result.err
    assert "http://?" not in result.err


def test_a_static_file_server_that_does_not_implement_post(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # python -m http.server, like many static file servers, answers POST 501 with an HTML
    # page: the wrong address, not a server failing
    (tmp_path / "index.html").write_text("<html><body>files</body></html>", encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_listening(proc, port)
        result = run(capsys, "check", f"http://127.0.0.1:{port}/mcp")
    finally:
        proc.terminate()
        proc.wait(10)
    assert result.code == 3
    assert f"HTTP 501 from http://127.0.0.1:{port}/mcp: this server does not take POST" in result.err
    assert "no MCP endpoint here" in result.err
    assert "own failure" not in result.err and "<html" not in result.err.lower(), result.err


def test_a_server_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path) as base:
        result = run(capsys, "check", f"{base}/fail")
    assert result.code == 3
    assert result.err.count("HTTP 500") == 1, result.err
    assert "database is down" in result.err
    assert "the server's own failure: its log says why" in result.err


def test_an_untrusted_certificate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with fake_http(tmp_path, tls=True) as base:
        result = run(capsys, "check", f"{base}/mcp")
    assert result.code == 3
    assert "TLS: the certificate of 127.0.0.1 is not trusted" in result.err
    assert "SSL_CERT_FILE" in result.err


def test_https_to_a_plain_http_port(capsys: pytest.CaptureFixture[str], http_demo: HttpProcess) -> None:
    result = run(capsys, "check", http_demo.url.replace("http://", "https://"))
    assert result.code == 3
    assert "does not seem to speak TLS. Try http://" in result.err


def test_a_silent_process(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--timeout", "0.5", "--", "sleep", "30")
    assert result.code == 3
    assert "started but did not answer" in result.err


def test_a_silent_http_server_is_named_by_its_url(capsys: pytest.CaptureFixture[str]) -> None:
    """A server that takes the connection and never answers has told no name: it is its
    URL, not "unknown server (URL)"."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        result = run(capsys, "check", url, "--timeout", "0.5")
    assert result.code == 3
    assert f"no answer from {url} within 0.5 s" in result.err, result.err
    assert "unknown server" not in result.err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_server_that_stops_answering_after_connecting(capsys: pytest.CaptureFixture[str], era: str) -> None:
    result = run(capsys, "check", "--timeout", "0.5", "--", *fake("list-never", era))
    assert result.code == 3
    assert "answered while connecting, then did not answer tools/list" in result.err
    assert "Is it an MCP server" not in result.err


def _moving_to(location: str, status: int) -> type[http.server.BaseHTTPRequestHandler]:
    """An HTTP server answering every POST with ``status`` to ``location`` ("{port}" in it
    is its own port), and every other request 401 with a challenge."""

    class Moving(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(status)
            self.send_header("Location", location.format(port=self.server.server_address[1]))
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Moving


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_redirect_names_where_it_goes_without_its_password_or_key(
    capsys: pytest.CaptureFixture[str], status: int
) -> None:
    """The server's Location is the server's to write: the error names the address it
    gives as any URL is shown, no user name and password, no query; and since that address
    cannot be pasted as it stands, it says which parts REDACTED stands for and where they
    are in full."""
    moving = _moving_to("http://me:PASSWORD@127.0.0.1:{port}/next?token=SECRET", status)
    with serving(moving) as base:
        result = run(capsys, "check", f"{base}/mcp")
    assert result.code == 3, result.err
    assert f"redirects (HTTP {status}) to http://REDACTED:REDACTED@127.0.0.1:" in result.err
    assert "PASSWORD" not in result.err and "SECRET" not in result.err and "me:" not in result.err
    assert (
        "as the TARGET, with its user name and password and its query written out where it shows "
        "REDACTED (hidden here: keys travel there; the Location header the server sends has them"
    ) in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


@pytest.mark.parametrize(
    ("target", "location"),
    [
        # what httpx sends (%-escaped) though prose would end the URL at the space or quote
        ("/mcp?key=SEC RET", "/next"),
        ("/mcp", "http://me x:PASSWORD@127.0.0.1:{port}/next?token=SEC RET"),
        ("/mcp", "http://me\"x:PASSWORD@127.0.0.1:{port}/next#SEC'RET"),
    ],
)
def test_a_redirect_message_names_both_addresses_redacted_whole(
    capsys: pytest.CaptureFixture[str], target: str, location: str
) -> None:
    """Both addresses are known whole (the TARGET, the Location joined to it): each is
    redacted whole, a space or a quote in it notwithstanding."""
    with serving(_moving_to(location, 302)) as base:
        result = run(capsys, "check", f"{base}{target}")
    assert result.code == 3, result.err
    assert "PASSWORD" not in result.err and "RET" not in result.err, result.err
    assert "as the TARGET" in result.err


def test_a_server_file_run_with_python_instead_of_served_says_to_serve_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """README's app.py defines a Server and runs nothing: ``python app.py`` ends at once,
    saying nothing, and the error says what serves it."""
    server = tmp_path / "app.py"
    server.write_text("from mcp_elicit import Server\n\napp = Server('bookings')\n", encoding="utf-8")
    result = run(capsys, "check", "--", sys.executable, str(server))
    assert result.code == 3
    assert "exited with code 0" in result.err
    assert (
        f"{server} ran to its end without serving anything. If it defines an mcp_elicit Server, "
        f"mcp-elicit serves it: give -- mcp-elicit serve {server} in place of -- {sys.executable} {server}"
    ) in result.err, result.err


def test_a_server_file_whose_name_has_a_space_is_shown_quoted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The command the error gives is to be pasted back: a name with a space is quoted."""
    server = tmp_path / "my app.py"
    server.write_text("from mcp_elicit import Server\n\napp = Server('bookings')\n", encoding="utf-8")
    result = run(capsys, "check", "--", sys.executable, str(server))
    assert result.code == 3
    assert f"give -- mcp-elicit serve '{server}' in place of -- {sys.executable} '{server}'" in result.err, (
        result.err
    )


def test_a_script_that_fails_is_not_told_to_be_served(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "server.py"
    script.write_text("import sys\nprint('no config', file=sys.stderr)\n", encoding="utf-8")
    result = run(capsys, "check", "--", sys.executable, str(script))
    assert result.code == 3
    assert "no config" in result.err
    assert "ran to its end" not in result.err, result.err


class _EchoingHeaders(http.server.BaseHTTPRequestHandler):
    """Answers every POST with a JSON-RPC error that repeats the request's Authorization
    and X-Api-Key headers, as a careless server's debugging message might."""

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        import json

        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        said = (
            f"refused: Authorization {self.headers.get('Authorization')}, key {self.headers.get('X-Api-Key')}"
        )
        answer = json.dumps(
            {"jsonrpc": "2.0", "id": body.get("id"), "error": {"code": -32603, "message": said}}
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer.encode())


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_a_header_value_the_server_repeats_is_not_printed(
    capsys: pytest.CaptureFixture[str], json_output: bool
) -> None:
    """A --header value is a credential: a server error repeating it (``invalid token
    ...``) is printed with it REDACTED, on stderr and in --json."""
    with serving(_EchoingHeaders) as base:
        options = ["-H", "Authorization: Bearer sk-SECRETTOKEN", "-H", "X-Api-Key: KEYSECRET"]
        result = run(capsys, "check", *(["--json"] if json_output else []), f"{base}/mcp", *options)
    assert result.code != 0
    said = result.err + result.out
    assert "refused: Authorization" in said, said
    assert "SECRET" not in said, said
    assert "REDACTED" in said
