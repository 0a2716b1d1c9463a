"""A server's -32021 through ``mcp-elicit call``: what to do is said in the command's own
options, never in the library's (``Client``'s ``answerer=`` or ``versions=``), which a
person at the command line has no way to pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.helpers import BOOKING, answers_file, demo_stdio, run

from support.cli_call import CONFORMANCE_STDIO


def test_a_form_the_revision_offered_cannot_carry_says_which_protocol_to_offer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the demo's booking form has a multi-select, which came with 2025-11-25
    script = answers_file(tmp_path, BOOKING)
    result = run(
        capsys, "call", "book_table", "restaurant=noma", "--answers", script, "--protocol", "2025-06-18",
        "--", *demo_stdio(),
    )  # fmt: skip
    assert result.code == 1, result.err
    assert "error -32021" in result.err and "multi-select" in result.err
    assert "versions=" not in result.err, result.err
    assert "--protocol 2025-11-25" in result.err, result.err


def test_a_question_nobody_answers_names_no_library_option(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "call", "confirm_delete", "filename=a.txt", "--ui", "none", "--", *CONFORMANCE_STDIO)
    assert result.code == 1
    assert "error -32021" in result.err
    assert "answerer=" not in result.err and "pass Client" not in result.err, result.err
    assert "--answers FILE" in result.err and "--ui web" in result.err
