"""A real terminal for tests: a program on the slave side of a pseudo-terminal, driven
by writing keys to the master side and reading what it draws.

``PtySession(argv)`` starts ``argv`` in its own session with the pty as stdin, stdout and
stderr (40 rows, 120 columns, no colour, no cursor-position requests); with
``controlling=True`` the pty is that session's controlling terminal too, so that the
terminal's Ctrl-C is a SIGINT to the program when its settings say so (``ISIG``), as at a
person's terminal (else the terminal has no one to send it to, and drops what waits). ``expect(text)``
waits until ``text`` appears in the screen output (escape sequences removed) after the
last match; ``send(keys)`` types. Every wait is bounded; ``close()`` kills the process
group if it is still running.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Sequence
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
ESC = "\x1b"
CTRL_C = "\x03"
CTRL_U = "\x15"
ENTER = "\r"


def _take_the_terminal() -> None:
    """In the child, once it leads a session of its own: its stdin (the pty) becomes the
    session's controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtySession:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str] | None = None,
        controlling: bool = False,
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        full_env = dict(env if env is not None else os.environ)
        full_env.update(
            {
                "TERM": "xterm-256color",
                "NO_COLOR": "1",
                "PROMPT_TOOLKIT_NO_CPR": "1",
                "COLUMNS": "120",
                "LINES": "40",
                "PYTHONUNBUFFERED": "1",
            }
        )
        for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "MCP_ELICIT_STATE_KEYS"):
            full_env.pop(name, None)
        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=full_env,
            start_new_session=True,
            close_fds=True,
            preexec_fn=_take_the_terminal if controlling else None,  # after the new session
        )
        os.close(slave)
        self.master = master
        self.raw = ""
        self._seen = 0

    @property
    def screen(self) -> str:
        """Everything drawn so far, escape sequences and carriage returns removed."""
        return ANSI.sub("", self.raw).replace("\r", "")

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the program closed the terminal
            return False
        if not data:
            return False
        self.raw += data.decode("utf-8", errors="replace")
        return True

    def expect(self, text: str, timeout: float = 20.0) -> str:
        """Wait for ``text`` after the previous match; return the output up to it."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen
            at = screen.find(text, self._seen)
            if at >= 0:
                before = screen[self._seen : at]
                self._seen = at + len(text)
                return before
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{text!r} did not appear within {timeout} s; the screen so far:\n{screen}"
                )
            if not self._read(0.1) and self.proc.poll() is not None:
                screen = self.screen
                if text in screen[self._seen :]:
                    continue
                raise EOFError(f"the program exited ({self.proc.returncode}) before {text!r}:\n{screen}")

    def send(self, keys: str, *, pause: float = 0.05) -> None:
        os.write(self.master, keys.encode())
        time.sleep(pause)

    def wait(self, timeout: float = 20.0) -> int:
        """The exit code, reading output until the program ends."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the program did not exit within {timeout} s:\n{self.screen}")
            self._read(0.1)
        while self._read(0.05) and select.select([self.master], [], [], 0)[0]:
            pass
        return self.proc.returncode

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(5)
        os.close(self.master)
