"""What ``mcp-elicit call`` shows on stderr of the questions it answered: each question once,
with what was sent and, for an answer that did not fit the form, why it was not sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.helpers import TOMORROW, answers_file, demo_stdio, run

from support.cli_call import REVISIONS
from support.procs import ROOT

MOUNTED_STDIO = [*demo_stdio()[:-1], str(ROOT / "examples" / "mounted_app.py")]
UNFIT = {"answers": [{"content": {"region": "eu-west"}}]}  # the form offers eu-west-1 or us-east-1


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_scripted_answer_that_does_not_fit_is_shown_once_as_what_was_sent(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, tmp_path: Path, revision: str
) -> None:
    script = answers_file(tmp_path, UNFIT)
    result = run(
        capsys, "call", "provision", "name=web-1", "--answers", script, "--protocol", revision, "--",
        *MOUNTED_STDIO,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.out.startswith("Did not provision web-1 (cancel)")
    assert result.err.count("Where should web-1 run?") == 1, result.err
    assert "→ accept" not in result.err  # never sent
    assert "→ cancel" in result.err
    block = result.err[result.err.index("? inventory asks") :]
    assert 'region="eu-west"' in block and "must be one of: eu-west-1, us-east-1" in block, block
    # the script's own warning would say the reason a second time (logged: on stderr outside tests)
    assert "must be one of" not in caplog.text, caplog.text


def test_the_json_rounds_hold_what_was_sent_and_the_answer_that_did_not_fit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = answers_file(tmp_path, UNFIT)
    result = run(
        capsys, "call", "provision", "name=web-1", "--answers", script, "--json", "--", *MOUNTED_STDIO
    )
    assert result.code == 0, result.err
    (entry,) = result.json()["rounds"]
    assert entry["action"] == "cancel"
    (unfit,) = entry["not_sent"]
    assert unfit["action"] == "accept" and unfit["content"] == {"region": "eu-west"}
    assert any("must be one of" in problem for problem in unfit["problems"]), unfit


def test_a_call_that_could_not_answer_says_why_it_declared_no_elicitation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # no terminal here (the output is captured), no --answers: the tool copes by itself
    result = run(capsys, "call", "book_table", "restaurant=noma", "--", *demo_stdio())
    assert result.code == 0, result.err
    assert "Your client cannot show forms" in result.out
    assert result.err.count("declared no elicitation") == 1, result.err
    assert "--answers FILE" in result.err and "--ui web" in result.err


def test_the_note_is_neither_in_json_nor_when_asked_for_no_answerer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    chosen = run(capsys, "call", "book_table", "restaurant=noma", "--ui", "none", "--", *demo_stdio())
    as_json = run(capsys, "call", "book_table", "restaurant=noma", "--json", "--", *demo_stdio())
    assert chosen.code == 0 and as_json.code == 0, (chosen.err, as_json.err)
    assert "declared no elicitation" not in chosen.err + as_json.err + as_json.out


@pytest.mark.parametrize("revision", REVISIONS)
def test_an_answer_is_shown_with_the_defaults_the_client_filled_in(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str
) -> None:
    """The script leaves out the confirmation, whose default is true: what is sent (and what
    the server reads) holds it, and so must what is shown and kept of the round."""
    script = answers_file(
        tmp_path,
        {
            "answers": [
                {
                    "fields": ["party_size"],
                    "content": {"party_size": 2, "date": TOMORROW, "seating": "terrace"},
                },
                {"fields": ["confirm"], "content": {}},
            ]
        },
    )
    argv = ["call", "book_table", "restaurant=noma", "--answers", script, "--protocol", revision]
    shown = run(capsys, *argv, "--", *demo_stdio())
    assert shown.code == 0, shown.err
    assert shown.out.startswith("Booked #"), shown.out  # the server read confirm=true
    assert "→ accept  confirm=true" in shown.err, shown.err
    kept = run(capsys, *argv, "--json", "--", *demo_stdio())
    details, confirm = kept.json()["rounds"]  # keyed by request id at 2025-11-25
    assert details["content"] == {"party_size": 2, "date": TOMORROW, "seating": "terrace", "dietary": []}
    assert confirm["content"] == {"confirm": True}
