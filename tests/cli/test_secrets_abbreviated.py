"""argparse takes an option abbreviated (``--client-sec S``, ``--head V``) and ``-H`` glued
to its value (``-HX-Key: K``): its errors quoting such a value show it REDACTED, as they
do the option written out."""

from __future__ import annotations

import json

import pytest

from mcp_elicit.cli.main import main

SECRET = "sk-Abbr7hidden9kept"
URL = "http://127.0.0.1:9/mcp"


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.parametrize(
    "given",
    [
        ["--client-sec", SECRET],
        ["--client-s", SECRET],
        ["--head", f"X-Custom: {SECRET}"],
        ["--hea", f"Authorization: Bearer {SECRET}"],
    ],
    ids=["client-sec", "client-s", "head", "hea"],
)
@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_an_abbreviated_secret_option_before_the_command_is_not_quoted(
    capsys: pytest.CaptureFixture[str], given: list[str], json_out: bool
) -> None:
    """argparse takes the value for the command's name: "invalid choice: '...'"."""
    out, err = _refused(capsys, *(["--json"] if json_out else []), *given, "check", URL)
    assert "invalid choice: '" in err, err
    assert "REDACTED' (choose from" in err, err  # a credential header keeps its name and scheme
    if json_out:
        assert "REDACTED' (choose from" in json.loads(out)["error"]
    assert SECRET not in out + err


@pytest.mark.parametrize(
    "word", [f"--client-sec={SECRET}", f"-HX-Custom: {SECRET}", f"-H=X-Custom: {SECRET}"]
)
def test_an_abbreviated_or_glued_secret_left_over_is_not_quoted(
    capsys: pytest.CaptureFixture[str], word: str
) -> None:
    """argparse leaves it over, or takes it for the command's name (a word with a space)."""
    out, err = _refused(capsys, word, "check", URL)
    assert "REDACTED" in err, err
    assert SECRET not in out + err


def test_an_abbreviated_secret_repeated_as_another_options_value_is_not_quoted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, err = _refused(capsys, "check", URL, "--client-sec", SECRET, "--protocol", SECRET)
    assert "argument --protocol: invalid choice: 'REDACTED'" in err, err
    assert SECRET not in out + err
