"""``mcp-elicit check`` against a server whose tool names, descriptions and schema values
are huge: the report quotes each cut short, never whole."""

from __future__ import annotations

import pytest

from cli.helpers import fake, run


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_huge_names_and_values_are_cut_short_in_the_report(
    capsys: pytest.CaptureFixture[str], era: str
) -> None:
    result = run(capsys, "check", "--", *fake("long-names", era))
    assert result.code == 1, result.err[:2000]
    assert len(result.out) < 10_000, result.out[:2000]
    assert "(200004 characters)" in result.out  # the name, in the table and the findings
    assert "invalid-name" in result.out or "should be 1 to 128 characters" in result.out
    said = " ".join(line.strip() for line in result.out.splitlines())  # a finding is wrapped
    assert "2 tools are named 'echonnn" in said


def test_json_keeps_the_names_whole(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "check", "--json", "--", *fake("long-names", "modern"))
    assert result.code == 1, result.err[:2000]
    names = [tool["name"] for tool in result.json()["tools"]]
    assert len(names[0]) == 200_004
