"""`make demo` (examples/run_demo.py): a whole elicitation round in one command, answered
from examples/demo_answers.json without a terminal, and by the person with one."""

from __future__ import annotations

import socket
import subprocess
import sys

from cli.helpers import TOMORROW
from cli.pty_session import PtySession

from support.procs import ROOT, free_port

DEMO = [sys.executable, str(ROOT / "examples" / "run_demo.py")]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_without_a_terminal_the_demo_answers_from_its_script_and_finishes() -> None:
    port = free_port()
    done = subprocess.run(
        [*DEMO, "--port", str(port)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    booked = f"Booked #1: Noma, Copenhagen, 2 people on {TOMORROW}, terrace, vegan."
    assert done.stdout.splitlines() == [booked, booked.removeprefix("Booked ").removesuffix(".")]
    assert f"the booking server is at http://127.0.0.1:{port}/mcp" in done.stderr
    assert "? Table bookings asks (details, during tools/call book_table)" in done.stderr
    assert "→ accept  confirm=true" in done.stderr
    assert "server stopped" in done.stderr
    assert not _listening(port)


def test_in_a_terminal_the_person_answers() -> None:
    port = free_port()
    pty = PtySession([*DEMO, "--port", str(port)], cwd=ROOT)
    try:
        pty.expect("you answer in this terminal")
        pty.expect("Enter: fill in the form · d: decline · Esc: cancel >")
        pty.send("d\r")
        pty.expect("No booking made at Noma, Copenhagen.")
        pty.expect("No bookings yet.")
        assert pty.wait(60) == 0
    finally:
        pty.close()
    assert not _listening(port)
