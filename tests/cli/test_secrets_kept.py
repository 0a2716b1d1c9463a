"""What the command line prints never shows a key given in the TARGET URL or a --header."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.fake_http import fake_http
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
    "header", [f"Authorization Bearer {SECRET}", f"X-Api-Key={SECRET}", f"Bad Name: {SECRET}"]
)
def test_a_malformed_header_is_refused_without_printing_its_value(
    header: str, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    assert main(["check", "--header", header, f"http://127.0.0.1:{closed_port}/mcp"]) == 2
    err = capsys.readouterr().err
    assert "--header wants 'Name: value'" in err
    assert f"{len(header)} characters" in err  # enough to find which one
    assert SECRET not in err


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
