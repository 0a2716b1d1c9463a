"""A stdio server that writes lines that are not JSON-RPC to stdout (a banner, ``print``
debugging, ``yes``): the log hears of a bounded number of them however many there are,
and the error of the request that then fails (it times out, or the server exits) says how
many lines there were, quotes the first one inert and cut short, and says that a server
logs to stderr."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from mcp_elicit.errors import RequestTimeout, TransportError, UnsupportedProtocolVersion
from mcp_elicit.transports.stdio_client import connect_stdio
from mcp_elicit.transports.stdio_noise import EVERY, EVERY_MOST, LOUD, StdoutNoise

pytestmark = pytest.mark.anyio

_LINES = 3000
#: The first line has a terminal escape (ESC [31m) and is long; the others are short.
_WRITER = (
    "import sys\n"
    "sys.stdout.write(chr(27) + '[31mstarting' + 'x' * 5000 + '\\n')\n"
    f"sys.stdout.write('junk\\n' * {_LINES - 1})\n"
    "sys.stdout.flush()\n"
)
WRITES_THEN_WAITS = [sys.executable, "-c", _WRITER + "sys.stdin.read()\n"]
WRITES_THEN_EXITS = [sys.executable, "-c", _WRITER + "sys.stdin.readline()\n"]


def _noise_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "mcp_elicit.stdio_client" and "JSON-RPC" in r.getMessage()]


def _says_what_was_written(said: str) -> None:
    assert f"wrote {_LINES} lines to stdout that are not JSON-RPC" in said, said
    assert "\x1b" not in said, said  # the escape is shown, not sent to a terminal
    assert "\\x1b[31mstarting" in said, said
    assert "x" * 1000 not in said, said  # the first line, cut short
    assert "stderr" in said, said


@pytest.mark.parametrize(
    ("versions", "error"),
    # at 2026-07-28 alone, a probe with no answer is a server that does not speak it
    [(["2026-07-28"], UnsupportedProtocolVersion), (["2025-11-25"], RequestTimeout)],
)
async def test_a_timeout_after_junk_on_stdout_says_so_and_the_log_is_bounded(
    caplog: pytest.LogCaptureFixture, versions: list[str], error: type[Exception]
) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit.stdio_client")
    with pytest.raises(error) as caught:
        async with connect_stdio(WRITES_THEN_WAITS, versions=versions, timeout=1.5, probe_timeout=1.5):
            pass
    _says_what_was_written(str(caught.value))
    assert 1 <= len(_noise_records(caplog)) <= 10, [r.getMessage()[:80] for r in _noise_records(caplog)]


async def test_a_server_that_exits_after_junk_on_stdout_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcp_elicit.stdio_client")
    with pytest.raises(TransportError) as caught:
        async with connect_stdio(WRITES_THEN_EXITS, timeout=20, probe_timeout=20):
            pass
    said = str(caught.value)
    assert "exited with code 0" in said, said
    _says_what_was_written(said)
    assert 1 <= len(_noise_records(caplog)) <= 10


def test_while_lines_keep_coming_a_count_is_logged_at_most_every_few_seconds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    noise = StdoutNoise("srv", logging.getLogger("test.noise"), clock=lambda: now[0])
    caplog.set_level(logging.WARNING, "test.noise")
    for _ in range(LOUD + 1000):  # no time passes: the first few, then one line
        noise.line(b"junk", ValueError("not JSON"))
    assert len(caplog.records) == LOUD + 1
    now[0] = EVERY / 2
    noise.line(b"junk", ValueError("not JSON"))
    assert len(caplog.records) == LOUD + 1
    now[0] = EVERY
    noise.line(b"junk", ValueError("not JSON"))
    assert (
        caplog.records[-1].getMessage() == f"srv has written {LOUD + 1002} lines that are not JSON-RPC so far"
    )
    assert noise.note().startswith(f"; the server wrote {LOUD + 1002} lines to stdout that are not JSON-RPC")


def test_a_trickle_of_lines_over_a_long_session_logs_ever_more_rarely(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One line a second for a day would be a count every EVERY seconds (8,640 warnings);
    each count doubles the wait before the next, up to ``EVERY_MOST``."""
    now = [0.0]
    noise = StdoutNoise("srv", logging.getLogger("test.noise"), clock=lambda: now[0])
    caplog.set_level(logging.WARNING, "test.noise")
    for second in range(24 * 3600):
        now[0] = float(second)
        noise.line(b"tick", ValueError("not JSON"))
    counts = [r.getMessage() for r in caplog.records if "so far" in r.getMessage()]
    # 10, 30, 70, ... s: doubling until the wait is EVERY_MOST, then one per EVERY_MOST
    assert len(counts) <= 24 * 3600 / EVERY_MOST + 10, len(counts)
    assert counts[0] == f"srv has written {LOUD + 1 + int(EVERY)} lines that are not JSON-RPC so far"


def test_a_line_is_quoted_with_its_urls_redacted_before_the_cut(caplog: pytest.LogCaptureFixture) -> None:
    """A banner may print a database's or a page's URL with its password or token: the
    warning and the note quote the line with its URLs redacted, then cut (the cut at
    ``QUOTED`` bytes falls inside the password here)."""
    noise = StdoutNoise("srv", logging.getLogger("test.noise"))
    caplog.set_level(logging.WARNING, "test.noise")
    noise.line(b"x" * 100 + b" postgres://me:PASSWORD@db/x?token=SECRET", ValueError("not JSON"))
    said = [caplog.records[0].getMessage(), noise.note()]
    assert not [text for text in said if "PASS" in text or "SECRET" in text], said
    assert "postgres://REDACTED" in said[0] and "postgres://REDACTED" in said[1]


async def test_the_end_of_stderr_in_an_error_has_its_urls_redacted(tmp_path: Path) -> None:
    """The end of a server's stderr that an error quotes (its log: a database URL with its
    password, a page's link with its token) has its URLs redacted before it is cut to its
    last 1,500 characters: a cut there takes off a URL's scheme and leaves its password."""
    first, last = "connecting to postgres://me:PASSWORD@db/x\n", " at https://me:SECRET@h/x?token=SECRET"
    pad = first.index("me:") + 1500 - len(first) - len(last)  # the cut falls right after "postgres://"
    writer = tmp_path / "writer.py"
    writer.write_text(f"import sys; sys.stderr.write({first + 'y' * pad + last!r}); sys.stderr.flush()")
    # a URL among its arguments is redacted too where the process is named
    command = [sys.executable, str(writer), "--db", "postgres://me:PASSWORD@db/x"]
    with pytest.raises(TransportError) as caught:
        async with connect_stdio(command, timeout=20, probe_timeout=20):
            pass
    said = str(caught.value)
    assert "the end of its stderr" in said, said
    assert "PASS" not in said and "SECRET" not in said, said
    assert "https://REDACTED:REDACTED@h/x?REDACTED" in said
