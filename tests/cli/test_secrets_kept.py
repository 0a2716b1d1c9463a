"""What the command line prints never shows a key given in the TARGET URL or a --header,
nor the value of an option, an environment assignment or a header that names a secret in
a stdio server's command (``command_redaction``); a path to a key file stays shown."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.fake_http import fake_http
from cli.helpers import DEMO, run
from mcp_elicit.cli.main import main
from mcp_elicit.cli.sign_in import SignIn
from mcp_elicit.cli.targets import parse_target

SECRET = "sk-Q7hidden9kept"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A 127.0.0.1 port that refuses connections for the whole test: bound here and never
    listening, so no other process can start listening on it meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def test_a_key_in_the_target_url_stays_out_of_the_json_report(
    capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    url = f"http://user:{SECRET}@127.0.0.1:{closed_port}/mcp?api_key={SECRET}#{SECRET}"
    assert main(["check", "--json", url]) == 3
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert SECRET not in out.out + out.err
    assert report["target"]["url"].startswith("http://REDACTED:REDACTED@127.0.0.1:")
    assert "/mcp?REDACTED" in report["target"]["url"]


def test_a_key_in_the_target_url_stays_out_of_error_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_http(tmp_path) as base:
        assert main(["check", f"{base}/nothing-here?token={SECRET}"]) == 3
    err = capsys.readouterr().err
    assert f"{base}/nothing-here?REDACTED" in err  # the server is still named
    assert SECRET not in err


@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_header_value_the_server_echoes_stays_out_of_the_quote_of_its_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int, json_out: bool
) -> None:
    """A body that is not MCP is quoted; one that repeats what the request carried (a
    debugging endpoint, a proxy's error page) must not print the person's token."""
    headers = ["--header", f"Authorization: Bearer {SECRET}", "--header", f"X-Api-Key: {SECRET}k"]
    with fake_http(tmp_path) as base:
        code = main(["check", *(["--json"] if json_out else []), *headers, f"{base}/echo/{status}"])
    assert code == 3
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    said = json.loads(out.out)["error"] if json_out else out.err
    assert "got Authorization: REDACTED, key=REDACTED" in said, said


def test_the_target_requests_its_url_as_given_and_names_it_without_its_query() -> None:
    target = parse_target(f"https://127.0.0.1:8443/mcp?token={SECRET}", None)
    assert str(target) == "https://127.0.0.1:8443/mcp?REDACTED"
    assert target.url == f"https://127.0.0.1:8443/mcp?token={SECRET}"


@pytest.mark.parametrize(
    "header",
    [
        f"Authorization Bearer {SECRET}",
        f"X-Api-Key={SECRET}",
        f"Bad Name: {SECRET}",
        SECRET,  # the token alone, its name and colon left out: no "start" of it quoted
        f"{SECRET} and more",
    ],
)
def test_a_malformed_header_is_refused_without_printing_its_value(
    header: str, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    assert main(["check", "--header", header, f"http://127.0.0.1:{closed_port}/mcp"]) == 2
    err = capsys.readouterr().err
    assert "--header wants 'Name: value'" in err
    assert f"{len(header)} characters" in err  # enough to find which one
    assert SECRET not in err
    if header.startswith("Authorization "):  # a header's name is still quoted, to find it by
        assert "the one starting 'Authorization'" in err, err


def test_a_targets_repr_shows_header_names_not_values() -> None:
    target = parse_target(
        f"https://127.0.0.1:8443/mcp?key={SECRET}", None, [f"Authorization: Bearer {SECRET}"]
    )
    assert SECRET not in repr(target)
    assert "Authorization" in repr(target)
    assert target.headers == (("Authorization", f"Bearer {SECRET}"),)  # still sent


def test_a_sign_ins_repr_hides_the_client_secret(tmp_path: Path) -> None:
    sign_in = SignIn(tokens=tmp_path / "tokens.json", client_id="cli", client_secret=SECRET)
    assert SECRET not in repr(sign_in)
    assert "client_id='cli'" in repr(sign_in)


#: Secrets a stdio server's command gives it, each its own, and a path that is no secret.
SECRET_WORDS = [
    f"--api-key={SECRET}1",
    "--token",
    f"{SECRET}2",
    f"API_KEY={SECRET}3",
    "--header",
    f"Authorization: Bearer {SECRET}4",
    "--key-file",
    "/etc/keys/server.pem",
]
SHOWN_WORDS = (
    "--api-key=REDACTED --token REDACTED API_KEY=REDACTED --header 'Authorization: Bearer REDACTED' "
    "--key-file /etc/keys/server.pem"
)


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_command_that_cannot_start_is_named_without_its_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    missing = str(tmp_path / "no-such-server")
    done = run(capsys, "check", *(["--json"] if json_out else []), "--", missing, *SECRET_WORDS)
    assert done.code == 3
    assert SECRET not in done.out + done.err
    said = done.json()["error"] if json_out else done.err
    assert f"cannot start the server command {f'{missing} {SHOWN_WORDS}'!r}" in said, said
    if json_out:
        assert done.json()["target"]["command"] == [
            missing,
            "--api-key=REDACTED",
            "--token",
            "REDACTED",
            "API_KEY=REDACTED",
            "--header",
            "Authorization: Bearer REDACTED",
            "--key-file",
            "/etc/keys/server.pem",
        ]


def test_a_server_that_quotes_its_secret_as_it_exits_is_quoted_redacted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its stderr, quoted when it exits, repeats the --token it was given."""
    code = "import sys; print('refused token', sys.argv[2], file=sys.stderr); sys.exit(3)"
    done = run(capsys, "check", "--", sys.executable, "-c", code, "--token", f"{SECRET}2")
    assert done.code == 3
    assert "--token REDACTED" in done.err, done.err
    assert "refused token REDACTED" in done.err, done.err
    assert SECRET not in done.err


def test_the_suggested_call_hides_a_secret_option_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrapper = tmp_path / "wrapper.py"  # serves the demo, whatever words follow it
    wrapper.write_text(
        f"import runpy, sys; sys.argv = ['mcp-elicit', 'serve', {str(DEMO)!r}]; "
        "runpy.run_module('mcp_elicit', run_name='__main__')"
    )
    done = run(capsys, "check", "--", sys.executable, str(wrapper), *SECRET_WORDS)
    assert done.code == 0, done.err
    assert f"{wrapper} {SHOWN_WORDS}" in done.out, done.out
    assert (
        "REDACTED hides the value of an option that names a secret (a key, a token, a password)" in done.out
    )
    assert SECRET not in done.out + done.err


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_secret_option_given_to_the_wrong_command_is_refused_redacted(
    capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    """Meant for the server, given before -- (to mcp-elicit): refused, its value not echoed."""
    argv = ["check", *(["--json"] if json_out else []), "http://127.0.0.1:9/mcp", f"--api-key={SECRET}"]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    out = capsys.readouterr()
    assert "unrecognized arguments: --api-key=REDACTED" in out.err, out.err
    assert SECRET not in out.out + out.err


def test_a_stdio_targets_repr_hides_its_secret_options() -> None:
    target = parse_target(None, ["python", "server.py", "--token", SECRET, "--key-file", "k.pem"])
    assert SECRET not in repr(target)
    assert "'--token', 'REDACTED', '--key-file', 'k.pem'" in repr(target)
    assert target.command[3] == SECRET  # still run as given


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_line_on_stdout_repeating_the_secret_is_reported_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    """A server that prints its own command line on stdout, then serves: the protocol
    violation check reports quotes that line, the --token's value in it REDACTED."""
    wrapper = tmp_path / "noisy.py"
    wrapper.write_text(
        "import runpy, sys; print('starting with', *sys.argv[1:], flush=True); "
        f"sys.argv = ['mcp-elicit', 'serve', {str(DEMO)!r}]; "
        "runpy.run_module('mcp_elicit', run_name='__main__')"
    )
    argv = ["check", *(["--json"] if json_out else []), "--", sys.executable, str(wrapper)]
    done = run(capsys, *argv, "--token", SECRET)
    assert done.code == 4, done.err
    said = json.loads(done.out)["violations"][0] if json_out else done.out
    assert "starting with --token REDACTED" in said, said
    assert SECRET not in done.out + done.err
