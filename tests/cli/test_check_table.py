"""``mcp-elicit check``'s table of tools, as a person reads it: every description starts in
one column, whatever the length of the names (the conformance server's run to 42
characters), and fits the terminal's width."""

from __future__ import annotations

import pytest

from cli.helpers import run

from support.cli_call import CONFORMANCE_STDIO


def _rows(out: str) -> list[tuple[str, int, str]]:
    """Each tool's row of the table: its name, the column its description starts in, and it."""
    rows = []
    for line in out.splitlines():
        if line[:4] in ("  ✓ ", "  ! ", "  ✗ ") and len(line) > 4:
            name = line[4:].split()[0]
            rest = line[4 + len(name) :]
            rows.append((name, len(line) - len(rest.lstrip()), rest.strip()))
    return rows


@pytest.mark.parametrize("columns", [100, 160])
def test_every_description_starts_in_one_column(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = run(capsys, "check", "--", *CONFORMANCE_STDIO)
    assert result.code == 0, result.err
    rows = _rows(result.out)
    assert "test_elicitation_sep1034_defaults" in [name for name, _, _ in rows]
    assert len({column for _, column, _ in rows}) == 1, result.out
    assert all(len(line) <= columns for line in result.out.splitlines() if line[:4] in ("  ✓ ", "  ! "))


def test_a_name_too_long_for_a_narrow_terminal_has_its_description_below_in_the_column(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    result = run(capsys, "check", "--", *CONFORMANCE_STDIO)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    rows = _rows(result.out)
    columns = {column for _, column, about in rows if about}
    assert len(columns) == 1, result.out
    (column,) = columns
    long = next(i for i, line in enumerate(lines) if "test_input_required_result_multiple_inputs" in line)
    below = lines[long + 1]
    assert below[:column].strip() == "" and below[column:].startswith("MRTR: asks"), result.out


def _wrapped_row(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int, label: str
) -> tuple[list[str], str]:
    """Check the conformance server at ``columns`` wide: the lines of the row ``label``,
    checked to fit the width, more than one, continued under the value column; and its
    value, its lines joined."""
    monkeypatch.setenv("COLUMNS", str(columns))
    result = run(capsys, "check", "--", *CONFORMANCE_STDIO)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(f"{label}  "))
    end = next(i for i in range(first + 1, len(lines)) if not lines[i].startswith(" " * 14))
    block = lines[first:end]
    assert len(block) > 1, result.out
    assert all(len(line) <= columns for line in block), result.out
    assert all(line[14] != " " for line in block[1:]), result.out  # in the value column
    return block, " ".join(line[14:] for line in block)


@pytest.mark.parametrize("columns", [60, 100])
def test_the_capabilities_wrap_at_the_width_under_the_value_column(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    # the conformance server's capabilities run to about 130 characters on one line
    block, value = _wrapped_row(capsys, monkeypatch, columns, "capabilities")
    expected = "completions, extensions (io.modelcontextprotocol/tasks), logging, prompts (listChanged), "
    assert value == expected + "resources (listChanged, subscribe), tools (listChanged)", block
    assert all(line.endswith(",") for line in block[:-1]), block  # broken between capabilities


@pytest.mark.parametrize("columns", [60, 100])
def test_the_revision_row_wraps_at_the_width_under_the_value_column(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    # "MCP 2026-07-28 (modern: ...); also speaks ..." runs to about 110 characters on one line
    block, value = _wrapped_row(capsys, monkeypatch, columns, "revision")
    assert value.startswith("MCP 2026-07-28 (modern: answered server/discover); also speaks 2025-11-25, "), (
        block
    )


def test_the_timings_and_the_closing_advice_wrap_at_the_width_between_words(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The advice was two lines written for 90 columns, which a narrower terminal broke
    # inside words ("the server cou" / "ld ask it nothing"), and the timings one line.
    monkeypatch.setenv("COLUMNS", "50")
    result = run(capsys, "check", "--", *CONFORMANCE_STDIO)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("timings  "))
    block = lines[start:-1]  # the last line is the command to copy, kept whole
    assert all(len(line) <= 50 for line in block), result.out
    said = " ".join(line.strip() for line in block)
    assert "connect " in said and " · total " in said, result.out
    assert (
        "This test declares no client capabilities, so the server could ask it nothing. To try an "
        "elicitation flow, call a tool from a client that declares elicitation:"
    ) in said, result.out
    assert lines[-1].startswith("  mcp-elicit call "), result.out


def test_the_closing_advice_reads_as_before_on_a_wide_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    result = run(capsys, "check", "--", *CONFORMANCE_STDIO)
    assert (
        "This test declares no client capabilities, so the server could ask it nothing. To try an\n"
        "elicitation flow, call a tool from a client that declares elicitation:\n"
    ) in result.out, result.out
