"""``mcp-elicit check``'s report of a server writing Chinese, Japanese, emoji and combining
marks: laid out in the columns the text takes on a terminal (a Chinese letter or an emoji
takes two, a combining mark none), not in characters. Every row fits the terminal's width and
every tool's description starts in one column."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from wcwidth import wcswidth

from cli.helpers import ASCII_ONLY, fake, run

from support.procs import cli

#: How the rows laid out in the server's text start: a tool's (or a description below its
#: name), the instructions, the offers, and the findings (``_findings``). The client's own
#: rows are not measured here.
_MARKS = ("  ✓ ", "  ! ", "  ✗ ", "  v ", "  x ")  # and as an ASCII-only terminal has them
_LAID_OUT = (*_MARKS, " " * 8, "instructions  ", "prompts  ")
#: Where a finding starts: under a tool, under an offer, and a server's own.
_FINDING = ("      error ", "      warning ", " " * 14 + "warning ", "server        error ")


#: A character's code as an ASCII-only terminal writes it (``\\u5929``), cut short.
_CUT_CODE = re.compile(r"\\(?:x(?![0-9a-f]{2})|u(?![0-9a-f]{4})|U(?![0-9a-f]{8}))")

#: What the tool-name finding says after the name.
_NAME_RULE = "1 to 128 characters of A-Z a-z 0-9 _ - . (many clients refuse other names)"


def _laid_out(lines: list[str]) -> list[str]:
    """The rows laid out in the server's text (``_LAID_OUT``) and the findings."""
    return [line for line in lines if line.startswith(_LAID_OUT)] + _findings(lines)


def _findings(lines: list[str]) -> list[str]:
    """Every line of every finding: its first, and those below it, starting under its code."""
    found: list[str] = []
    for line in lines:
        if line.startswith(_FINDING) or (found and found[-1] != "" and line.startswith(" " * 15)):
            found.append(line)
        elif found and found[-1] != "":
            found.append("")  # not a finding's: the next line starts a finding or nothing
    return [line for line in found if line]


def _columns(line: str) -> int:
    width = wcswidth(line)
    assert width >= 0, repr(line)  # a character a terminal cannot place
    return width


def _description_columns(lines: list[str]) -> set[int]:
    """The terminal column each tool's description starts in, on the tool's row or below it."""
    starts = set()
    for n, line in enumerate(lines):
        if line[:4] not in _MARKS:
            continue
        _, _, about = line[4:].partition("  ")
        if about.strip():
            before = line[: len(line) - len(about.lstrip())]
        else:  # a name too long for the column: its description below it
            below = lines[n + 1]
            before = below[: len(below) - len(below.lstrip())]
        starts.add(_columns(before))
    return starts


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("width", [40, 80])
def test_rows_fit_the_terminal_and_descriptions_line_up_in_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int, era: str
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    result = run(capsys, "check", "--", *fake("wide", era))
    assert result.code == 1, result.err  # the names break the tool-name rule: errors
    lines = result.out.splitlines()[1:]  # the first names the command, as it was given
    assert "天气预报" in result.out and "派对🎉" in result.out and "cafe\u0301_cre\u0300me" in result.out
    assert any(line.startswith("instructions  请先调用") for line in lines), result.out
    too_wide = [line for line in _laid_out(lines) if _columns(line) > width]
    assert not too_wide, result.out
    assert len(_description_columns(lines)) == 1, result.out
    said = " ".join(line.strip() for line in _findings(lines))  # wrapped, not cut
    assert f"name: the name '天气预报' should be {_NAME_RULE}" in said, result.out


@pytest.mark.parametrize("mode", ["wide", "good"])
@pytest.mark.parametrize("width", [40, 80])
def test_on_an_ascii_terminal_the_report_is_written_by_code_and_laid_out_as_written(
    width: int, mode: str
) -> None:
    # it stopped with a UnicodeEncodeError traceback at its first "✓", whatever the server
    env = {**os.environ, **ASCII_ONLY, "COLUMNS": str(width)}
    done = subprocess.run(
        [*cli(), "check", "--", *fake(mode)], capture_output=True, env=env, timeout=60, check=False
    )
    assert done.returncode == (1 if mode == "wide" else 0), done.stderr.decode("ascii", "replace")
    out = done.stdout.decode("ascii")  # nothing else
    lines = out.splitlines()[1:]
    if mode == "wide":
        assert "\\u5929\\u6c14\\u9884\\u62a5" in out  # 天气预报, by its code
        assert all(len(line) <= width for line in _laid_out(lines)), out
        # a finding wrapped between whole codes: "'\\u5929\\u6" then "c14..." was one cut inside
        assert not [line for line in _findings(lines) if _CUT_CODE.search(line)], out
    assert "  v echo" in out, out  # the client's own mark, in ASCII
    assert len(_description_columns(lines)) == 1, out


#: A ``sitecustomize`` making the terminal extra's libraries missing, as in an environment
#: with ``pip install mcp-elicit`` and no ``[cli]``.
_NO_CLI_EXTRA = """
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("rich", "prompt_toolkit", "wcwidth"):
            raise ImportError(f"No module named {name!r}")
sys.meta_path.insert(0, _Missing())
"""


@pytest.mark.parametrize("width", [40, 80])
def test_without_the_cli_extra_the_report_is_laid_out_all_the_same(tmp_path: Path, width: int) -> None:
    # it stopped with an ImportError traceback at the first letter past ASCII: the columns
    # were measured with the terminal extra's width tables only
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_NO_CLI_EXTRA, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))  # and the code tested
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": str(width), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [*cli(), "check", "--", *fake("wide", "modern")],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1 and "Traceback" not in err, err  # the names break the tool-name rule
    lines = done.stdout.decode("utf-8").splitlines()[1:]
    assert "天气预报" in "\n".join(lines)
    too_wide = [line for line in _laid_out(lines) if _columns(line) > width]
    assert not too_wide, "\n".join(lines)
    assert len(_description_columns(lines)) == 1, "\n".join(lines)
