"""The edges of what the command line hides: a secret starting with "-", a header given
to a server's ``--auth-header``, argparse's own errors quoting a secret option's value,
and a short value that is hidden where it is given, not in every word a server says."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.helpers import run
from mcp_elicit.cli.main import main

SECRET = "sk-Edge7hidden9kept"


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    """argparse's refusal of ``argv``: exit 2, and what went to stdout and stderr."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_secret_option_before_the_command_is_not_quoted_as_the_wrong_command(
    capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    """``mcp-elicit --api-key K check URL``: argparse takes K for the command's name and
    quotes it, "invalid choice: 'K'"."""
    argv = [*(["--json"] if json_out else []), "--api-key", SECRET, "check", "http://127.0.0.1:9/mcp"]
    out, err = _refused(capsys, *argv)
    assert "invalid choice: 'REDACTED'" in err, err
    if json_out:
        assert "invalid choice: 'REDACTED'" in json.loads(out)["error"]
    assert SECRET not in out + err


def test_a_short_secret_argparse_quotes_is_hidden_too(capsys: pytest.CaptureFixture[str]) -> None:
    """Where argparse quotes the word given, it is the value, however short."""
    out, err = _refused(capsys, "--token", "abc", "check", "http://127.0.0.1:9/mcp")
    assert "invalid choice: 'REDACTED'" in err, err
    assert "'abc'" not in out + err


@pytest.mark.parametrize("secret", ["-abc123", "-x"])
def test_a_misplaced_secret_option_starting_with_a_dash_is_refused_redacted(
    capsys: pytest.CaptureFixture[str], secret: str
) -> None:
    out, err = _refused(capsys, "call", "http://127.0.0.1:9/mcp", "--api-key", secret, "tool")
    assert "unrecognized arguments: --api-key REDACTED tool" in err, err
    assert secret not in out + err.replace("--api-key", "")


def test_a_client_secret_starting_with_a_dash_is_not_shown_and_the_way_to_give_it_is_said(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, err = _refused(capsys, "check", "--client-secret", "-abc123", "http://127.0.0.1:9/mcp")
    assert "--client-secret: expected one argument" in err, err
    assert "given as --client-secret=SECRET" in err, err
    assert "abc123" not in out + err


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_servers_dashed_secret_and_auth_header_are_not_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    missing = str(tmp_path / "no-such-server")
    words = ["--client-secret", f"-{SECRET}", "--auth-header", f"Bearer {SECRET}x", "--token", "-q"]
    done = run(capsys, "check", *(["--json"] if json_out else []), "--", missing, *words)
    assert done.code == 3
    said = done.json()["error"] if json_out else done.err
    shown = "--client-secret REDACTED --auth-header 'Bearer REDACTED' --token REDACTED"
    assert f"cannot start the server command {f'{missing} {shown}'!r}" in said, said
    assert SECRET not in done.out + done.err
    assert "-q" not in said


def test_a_short_secrets_value_is_hidden_as_a_word_not_inside_other_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--key name``: the value is hidden where the command gives it and where the server
    says it as a word; the server's "names" and "renamed" are other words, kept."""
    code = "import sys; print('names renamed; no name', file=sys.stderr); sys.exit(2)"
    done = run(capsys, "check", "--", sys.executable, "-c", code, "--key", "name")
    assert done.code == 3, done.err
    assert "--key REDACTED" in done.err, done.err
    assert "names renamed; no REDACTED" in done.err, done.err


def test_a_header_argparse_quotes_keeps_its_scheme_and_hides_its_credential(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, err = _refused(capsys, "--auth-header", "Bearer xy", "check", "http://127.0.0.1:9/mcp")
    assert "invalid choice: 'Bearer REDACTED'" in err, err
    assert "Bearer xy" not in out + err
