"""A URL in one of ``mcp-elicit check``'s findings is kept whole on a row of its own, longer
than the terminal is wide if need be, so that it can be copied (a terminal copies a row
cut by the report's wrapping as two); other words too wide for a row are still folded."""

from __future__ import annotations

import os
import subprocess
from typing import ClassVar

import pytest

from cli.fake_http import serving
from cli.helpers import ASCII_ONLY
from cli.test_check_awkward_servers import _Forgetful

from support.procs import cli

#: A URL longer than any row of the report at the widths tested (no query: a server's
#: words are shown with a URL's query redacted, tests/cli/test_call.py).
URL = "https://status.example.com/incidents/2026-12-07/session-store-reset/region-eu-west-1/mcp"
#: A word as long that is no URL.
WORD = "x" * 90


class _PointsToStatus(_Forgetful):
    """``_Forgetful`` whose error names its status page, and a long word that is none."""

    said: ClassVar[str] = f"Session not found; see {URL} ({WORD})"


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "utf-8"}, ASCII_ONLY], ids=["utf-8", "ascii"])
@pytest.mark.parametrize("width", [40, 80])
def test_a_url_in_a_finding_is_one_row_and_other_long_words_still_fold(
    env: dict[str, str], width: int
) -> None:
    with serving(_PointsToStatus) as base:
        done = subprocess.run(
            [*cli(), "check", f"{base}/mcp"],
            capture_output=True,
            env={**os.environ, **env, "COLUMNS": str(width)},
            timeout=60,
            check=False,
        )
    out = done.stdout.decode("ascii" if env is ASCII_ONLY else "utf-8")
    assert done.returncode == 1, done.stderr
    rows = out.splitlines()
    [row] = [row for row in rows if URL in row]  # whole, on one row
    assert row.strip() == URL, out  # alone on it: the text around it on the rows before and after
    assert WORD not in out and out.count("x" * 10) >= 2, out  # folded as before
    assert all(len(r) <= width for r in rows if r is not row and "xxxxxxxxxx" in r), out
