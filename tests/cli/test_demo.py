"""`make demo` (examples/run_demo.py): a form, then two URL-mode pages (an API key; a
sign-in at the demo calendar provider), in one command. Without a terminal the forms are
answered from examples/demo_answers.json and the demo stands in for the person on the
pages; with one, the person answers and opens the page (here: the test, with httpx)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cli.helpers import TOMORROW
from cli.pty_session import PtySession

from support.procs import ROOT, free_port

DEMO = [sys.executable, str(ROOT / "examples" / "run_demo.py")]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_without_a_terminal_the_demo_answers_from_its_script_and_stands_in_on_the_pages() -> None:
    port = free_port()
    done = subprocess.run(
        [*DEMO, "--port", str(port)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,  # a hang guard only: how long the demo takes is no test's business
        check=False,
    )
    assert done.returncode == 0, done.stderr
    booked = f"Booked #1: Noma, Copenhagen, 2 people on {TOMORROW}, terrace, vegan."
    lines = done.stdout.splitlines()
    assert lines[:2] == [booked, booked.removeprefix("Booked ").removesuffix(".")]
    assert lines[2].startswith(f"Noma, Copenhagen has tables tomorrow ({TOMORROW}) at ")
    assert lines[2].endswith("(live from TableBook, with your API key, which stays on the server).")
    assert lines[3:] == [f"Added to Ada's calendar: Dinner at Noma, Copenhagen on {TOMORROW}."]
    err = done.stderr
    assert f"the booking server is at http://127.0.0.1:{port}/mcp" in err
    assert "? Table bookings asks (details, during tools/call book_table)" in err
    assert "→ accept  confirm=true" in err
    # URL mode: the client sees the server's own page, the person (stood in for) acts there
    assert "during tools/call check_availability" in err
    assert f"url: http://127.0.0.1:{port}/mcp-elicit/flows/" in err
    assert "this demo stands in for you on the page" in err
    assert (
        "[standing in for you] opened the page, typed a made-up TableBook key, pressed Save: 'Saved." in err
    )
    assert "pressed Allow on Demo Calendar's consent page, came back: 'Connected." in err
    assert "tb_demo_" not in done.stdout + err, "the key went to the page only"
    assert "servers stopped" in err
    assert not _listening(port)
    assert not _listening(port + 1)


def test_in_a_terminal_the_person_answers_and_opens_the_page() -> None:
    port = free_port()
    pty = PtySession([*DEMO, "--port", str(port)], cwd=ROOT)
    try:
        pty.expect("you answer in this terminal")
        pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
        pty.send("d\r")
        pty.expect("No booking made at Noma, Copenhagen.")
        pty.expect("No bookings yet.")
        shown = pty.expect("o: open it in your browser · d: decline · Esc: cancel >")
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp-elicit/flows/[\w-]+\?t=[\w-]+", shown)
        assert found is not None, shown
        pty.send("o\r")  # no browser here: the terminal says so; the person opens it themselves
        pty.expect("Enter: I am done on the page")
        with httpx.Client(timeout=10) as browser:  # the person's browser, on this machine
            claimed = browser.get(found.group(0))
            page = browser.get(claimed.url.join(claimed.headers["location"]))
            csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
            assert csrf is not None, page.text
            saved = browser.post(
                page.url, data={"csrf": csrf.group(1), "action": "submit", "value": "tb_mine"}
            )
            assert "Saved" in saved.text
        pty.send("\r")
        pty.expect("Noma, Copenhagen has tables tomorrow")
        assert pty.wait(60) == 0
        assert "share_to_calendar" not in pty.screen, "nothing booked, nothing to share"
    finally:
        pty.close()
    assert not _listening(port)


@pytest.mark.parametrize("lines_read", [0, 3], ids=["reader-gone-at-start", "head-3"])
def test_a_reader_gone_away_ends_the_demo_with_141_and_no_traceback(lines_read: int, tmp_path: Path) -> None:
    """``run_demo.py | head -3``: once stdout's reader has gone away (at the first result, or
    after three), the demo stops there, as ``mcp-elicit`` itself does (exit 141, no
    traceback), and its servers are stopped."""
    port = free_port()
    err_path = tmp_path / "stderr.txt"
    with err_path.open("wb") as err:
        demo = subprocess.Popen(
            [*DEMO, "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=ROOT,
        )
        assert demo.stdout is not None
        try:
            read = [demo.stdout.readline() for _ in range(lines_read)]
            demo.stdout.close()
            code = demo.wait(timeout=90)  # a hang guard only
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait()
    said = err_path.read_text(encoding="utf-8", errors="replace")
    assert all(line.endswith(b"\n") for line in read), read
    assert code == 141, said
    assert "Traceback" not in said and "Exception ignored" not in said, said
    if lines_read == 0:  # book_table's result met the closed pipe: nothing more was called
        assert "calling check_availability" not in said, said
    assert not _listening(port)
    assert not _listening(port + 1)
