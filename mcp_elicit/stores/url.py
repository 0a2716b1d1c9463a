"""Which store a configuration URL names, and where the default one lives.

::

    memory:// (or memory:, memory:///) MemoryStore (this process only; tests, demos)
    sqlite:///absolute/path/state.db   SqliteStore (the default; one host)
    sqlite://relative/path/state.db    SqliteStore, relative to the working directory
    redis://[user:password@]host[:port][/db][?prefix=...]   RedisStore (several instances)
    rediss://...                       RedisStore over TLS

Rules: the scheme is case-insensitive and surrounding whitespace is ignored; a SQLite path
is percent-decoded (``%20`` for a space) and may start with ``~``; anything else (an
unknown scheme, an empty path, options where none are known, SQLite's ``:memory:``, which
``memory://`` replaces, a SQLite URL with a user and password, copied from a database
server's) is a ``ConfigError`` that quotes the URL with its password hidden. Nothing is
opened until the store's first call.

``default_store_url()`` is a SQLite file in the user's data directory, found with the
standard library only: ``$XDG_DATA_HOME`` (when absolute) or ``~/.local/share`` on Linux
and other Unix systems, ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%``
on Windows; then ``mcp-elicit/state.db``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from urllib.parse import quote, unquote

from mcp_elicit.errors import ConfigError
from mcp_elicit.stores.base import Store
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.stores.redis import RedisStore, redact_url
from mcp_elicit.stores.sqlite import MEMORY_ADVICE, MEMORY_NAME, SqliteStore

__all__ = ["default_data_dir", "default_store_url", "open_store"]

APP_DIR = "mcp-elicit"
STATE_FILE = "state.db"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_WINDOWS_DRIVE = re.compile(r"/[A-Za-z]:")


def open_store(url: str) -> Store:
    """The store ``url`` names (see the module docstring); ``ConfigError`` when it names none."""
    if not isinstance(url, str):
        raise ConfigError(f"a store URL is a string, not {type(url).__name__}")
    url = url.strip()
    match = _SCHEME.match(url)
    scheme = match.group(1).lower() if match else ""
    if scheme == "memory":
        if url[len("memory:") :] not in ("", "//", "///"):
            raise ConfigError(
                f"store URL {redact_url(url)!r}: memory:// takes no host, path or options "
                "(memory:// or memory:)"
            )
        return MemoryStore()
    if scheme == "sqlite":
        return SqliteStore(_sqlite_path(url))
    if scheme in ("redis", "rediss"):
        return RedisStore(scheme + url[len(scheme) :])
    shown = redact_url(url) if url else ""
    raise ConfigError(
        f"store URL {shown!r}: expected memory://, sqlite:///path, sqlite://relative/path, "
        "redis://host:port/db or rediss://host:port/db"
    )


def default_store_url(*, platform: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``sqlite:///<the user data directory>/mcp-elicit/state.db``."""
    path = default_data_dir(platform=platform, environ=environ) / STATE_FILE
    text = path.as_posix()
    return "sqlite:///" + quote(text.lstrip("/"), safe="/:~")


def default_data_dir(*, platform: str | None = None, environ: Mapping[str, str] | None = None) -> PurePath:
    """This program's directory under the user's data directory (not created here)."""
    platform = sys.platform if platform is None else platform
    env = os.environ if environ is None else environ
    if platform.startswith("win"):
        home = PureWindowsPath(env.get("USERPROFILE") or str(Path.home()))
        local = env.get("LOCALAPPDATA")
        return (PureWindowsPath(local) if local else home / "AppData" / "Local") / APP_DIR
    home_posix = PurePosixPath(env.get("HOME") or str(Path.home()))
    if platform == "darwin":
        return home_posix / "Library" / "Application Support" / APP_DIR
    xdg = env.get("XDG_DATA_HOME", "")
    base = PurePosixPath(xdg) if xdg.startswith("/") else home_posix / ".local" / "share"
    return base / APP_DIR


def _sqlite_path(url: str) -> str:
    shown = redact_url(url)
    rest = url[len("sqlite:") :]
    if not rest.startswith("//"):
        raise ConfigError(f"store URL {shown!r}: expected sqlite:///absolute/path or sqlite://relative/path")
    rest = rest[2:]
    if shown != url:  # a password (or a lone user name with one) where a file name goes
        raise ConfigError(
            f"store URL {shown!r}: a SQLite URL names a file and has no user name, password or host; "
            "expected sqlite:///absolute/path/state.db or sqlite://relative/path/state.db "
            "(a file name holding ':' or '@' has them percent-encoded, %3A and %40)"
        )
    if "?" in rest or "#" in rest:
        raise ConfigError(f"store URL {shown!r}: sqlite:// takes no options")
    path = unquote(rest)
    if os.name == "nt" and _WINDOWS_DRIVE.match(path):
        path = path[1:]
    if path in ("", "/") or path.endswith("/"):
        raise ConfigError(f"store URL {shown!r}: no database file (expected sqlite:///path/to/state.db)")
    if "\x00" in path:
        raise ConfigError(f"store URL {shown!r}: the path holds a NUL byte")
    if path == MEMORY_NAME:
        raise ConfigError(f"store URL {shown!r}: {MEMORY_ADVICE}")
    return path
