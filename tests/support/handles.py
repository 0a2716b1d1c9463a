"""The file handles this process holds on a SQLite database: every open descriptor on the
file or its ``-wal`` / ``-shm`` companions, read from ``/proc/self/fd`` (Linux). A count
that works on every Python, where only 3.13 and later warn about a connection collected
unclosed, and only when the collector happens to come."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FD_DIR = Path("/proc/self/fd")


def database_handles(path: Path) -> list[str]:
    """What this process has open on the database ``path`` (a file deleted while open
    counts, as ``... (deleted)``); skips the test where ``/proc/self/fd`` is absent."""
    if not FD_DIR.is_dir():
        pytest.skip("counting open files needs /proc/self/fd (Linux)")
    names = {os.path.realpath(path) + suffix for suffix in ("", "-wal", "-shm", "-journal")}
    held = []
    for fd in os.listdir(FD_DIR):
        try:
            target = os.readlink(FD_DIR / fd)
        except OSError:  # closed since it was listed (the listing's own descriptor)
            continue
        if target.removesuffix(" (deleted)") in names:
            held.append(target)
    return sorted(held)
