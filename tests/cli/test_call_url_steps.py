"""``mcp-elicit call`` and a -32042 (URL elicitation required) it does not follow: whatever
the revision and whoever answers, the person is told each step (its message and URL,
judged, bounded and inert) and why no page was opened; ``--json`` names the steps as
data (``url_steps``). The server is the hand-written fake (``url-required``) and the
official Python SDK's (tests/peers/sdk_era_server.py), which sends -32042 whatever the
client declared."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.helpers import Run, answers_file, fake, run

from support.cli_call import REVISIONS
from support.peers import sdk_python

__all__ = ["sdk_python"]  # fixture

ERAS = {"2026-07-28": "modern", "2025-11-25": "legacy"}
SDK_SERVER = Path(__file__).resolve().parents[1] / "peers" / "sdk_era_server.py"
FIRST = {
    "elicitationId": "bank-1",
    "url": "https://accounts.example.com/signin",
    "message": "Sign in to your bank",
}
ESCAPED = {
    "elicitationId": "e\x1b[2J",
    "url": "https://example.com/\x1b]0;pwned\x07",
    "message": "Then here\x1b[2J",
}


def _call(capsys: pytest.CaptureFixture[str], revision: str, text: str, *more: str) -> Run:
    server = fake("url-required", ERAS[revision])
    return run(
        capsys, "call", "echo", f"text={text}", "--ui", "none", "--protocol", revision, *more, "--", *server
    )


@pytest.mark.parametrize("revision", REVISIONS)
def test_with_nobody_to_answer_the_steps_are_shown_and_why_nothing_was_opened(
    capsys: pytest.CaptureFixture[str], revision: str
) -> None:
    result = _call(capsys, revision, "Sign in to your bank")
    assert result.code == 1, result.err
    assert "error -32042: URL elicitation required" in result.err
    assert "  1. Sign in to your bank" in result.err
    assert "url: https://accounts.example.com/signin  (site: example.com)" in result.err
    assert "  2. Then here\\x1b[2J" in result.err
    assert "refused: The address contains spaces, control or invisible characters" in result.err
    assert "not opened" in result.err
    if revision == "2025-11-25":  # why, and what to give instead
        assert "declared no elicitation" in result.err
        assert "--ui web" in result.err and "--answers FILE" in result.err


def test_with_nobody_to_answer_at_2025_11_25_a_real_sdk_servers_step_is_shown(
    capsys: pytest.CaptureFixture[str], sdk_python: Path
) -> None:
    argv = ["call", "link", "provider=gh", "--ui", "none", "--protocol", "2025-11-25"]
    result = run(capsys, *argv, "--", str(sdk_python), str(SDK_SERVER))
    assert result.code == 1, result.err
    assert "  1. Sign in to gh" in result.err
    assert "url: https://example.com/oauth/start  (site: example.com)" in result.err
    assert "--protocol 2025-11-25" not in result.err  # it is the revision in use
    assert "pass Client" not in result.err  # the library's hint; the command says --ui instead


@pytest.mark.parametrize("revision", REVISIONS)
def test_json_names_each_step_as_data(capsys: pytest.CaptureFixture[str], revision: str) -> None:
    result = _call(capsys, revision, "Sign in to your bank", "--json")
    assert result.code == 1, result.err
    outcome = result.json()
    assert outcome["ok"] is False and outcome["exit_code"] == 1
    steps = outcome["url_steps"]
    assert [{k: s[k] for k in ("elicitationId", "url", "message")} for s in steps] == [FIRST, ESCAPED]
    assert steps[0]["url_warnings"] == [] and steps[1]["url_warnings"] == ["hidden-characters"]
    assert [s["url_refused"] for s in steps] == [False, True]
    assert "\x1b" not in result.out  # the values exactly, as JSON escapes


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_huge_step_message_is_cut_short_and_json_keeps_it_whole(
    capsys: pytest.CaptureFixture[str], revision: str
) -> None:
    result = _call(capsys, revision, "huge")
    assert result.code == 1, result.err
    assert len(result.err) < 10_000, result.err[:2000]
    assert "  1. Sign in xxx" in result.err and " END" not in result.err
    assert "(2000012 characters)" in result.err
    assert "\x1b" not in result.err
    whole = _call(capsys, revision, "huge", "--json")
    assert whole.json()["url_steps"][0]["message"].endswith(" END")
    assert len(whole.json()["error"]) < 10_000


def test_a_huge_error_message_is_cut_short(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "echo", "text=hi", "--ui", "none", "--", *fake("huge-error", "modern"))
    assert result.code == 1, result.err
    assert len(result.err) < 10_000, result.err[:2000]
    assert "error -32603: Internal error\\x1b[2J xxx" in result.err
    assert "(2000023 characters)" in result.err


@pytest.mark.parametrize("revision", REVISIONS)
def test_steps_whose_urls_are_all_refused_are_not_offered_to_follow(
    capsys: pytest.CaptureFixture[str], sdk_python: Path, revision: str
) -> None:
    argv = ["call", "link", "provider=gh", "url=https://bank.com@evil.example/x", "--ui", "none"]
    result = run(capsys, *argv, "--protocol", revision, "--", str(sdk_python), str(SDK_SERVER))
    assert result.code == 1, result.err
    assert "refused: The address has a user name or password before '@' (bank.com)" in result.err
    assert "This client refuses the URL of every step, so none can be followed" in result.err
    assert "--ui web" not in result.err and "run the command again" not in result.err


def test_a_step_put_to_a_script_is_shown_with_its_huge_id_cut_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = answers_file(tmp_path, [{"mode": "url", "action": "decline"}])
    server = fake("url-required", "legacy")
    argv = ["call", "echo", "text=long-id", "--answers", script, "--protocol", "2025-11-25"]
    result = run(capsys, *argv, "--", *server)
    assert result.code == 1, result.err[:2000]
    assert result.err.startswith("? Fake server asks (url idiii"), result.err[:200]
    assert "(200006 characters)" in result.err  # the key: "url " and the id
    assert len(result.err) < 10_000
    assert "(the user answered decline)" in result.err


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        # user-info longer than a line may show: what follows it is the site the page is on
        ("https://" + "bank.com." * 300 + "@evil.example/x", "@evil.example/x"),
        ("https://" + "a" * 60 + ".pages.example:8443/" + "p" * 3000, "a" * 60 + ".pages.example:8443/ppp"),
    ],
)
def test_a_long_url_is_cut_short_but_never_in_its_host(
    capsys: pytest.CaptureFixture[str], sdk_python: Path, url: str, kept: str
) -> None:
    """A URL longer than a line shows is cut short, but in its user-info or after its
    host: a URL cut in its user-info lost its host, the site the page is really on."""
    argv = ["call", "link", "provider=gh", f"url={url}", "--ui", "none", "--protocol", "2025-11-25"]
    result = run(capsys, *argv, "--", str(sdk_python), str(SDK_SERVER))
    assert result.code == 1, result.err
    (line,) = [line for line in result.err.splitlines() if line.lstrip().startswith("url: https://")]
    assert kept in line, line[-300:]
    assert f"({len(url)} characters)" in line and len(line) < 2300, line[-300:]
