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


def test_a_gathered_error_the_revision_and_the_call_both_lack_says_both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a multi-select (2025-11-25) gathered with sampling (which the command declares at no
    # revision): offering a later revision alone would only meet sampling next
    server = [*demo_stdio()[:-1], str(Path(__file__).with_name("gathered_server.py"))]
    script = answers_file(tmp_path, [{"action": "accept", "content": {"toppings": ["ham"]}}])
    result = run(
        capsys, "call", "sample_and_pick", "--answers", script, "--protocol", "2025-06-18", "--", *server
    )
    assert result.code == 1, result.err
    assert "error -32021" in result.err and "--protocol 2025-11-25" in result.err, result.err
    assert "declares no sampling" in result.err, result.err
    assert "pass Client" not in result.err, result.err
