"""The key file that seals URL mode's vault, and ``requestState``, when no key is configured.

Rules:

* Only for the default store (the SQLite file in the user data directory, one host): the
  file is ``state.keys`` in that same directory, so what the store keeps and the key that
  opens it sit side by side. A store the user configured (a SQLite path, Redis) needs keys
  the user configures too: several instances must share them.
* Created once, the first time URL mode opens the default store, never rewritten: a new
  key is written to a temporary file (mode 0600, in the 0700 directory), flushed, then
  linked into place, which fails when the file exists: two processes starting at once both
  end up with the one key that was linked first, and no reader sees half a file.
* Read at start-up when it exists, so that a state sealed by the previous process opens.
* This file, when other users may read or change it (POSIX mode bits beyond 0600, or
  another owner), is refused with a ``ConfigError`` saying what to run; so is one that
  does not parse. A file given to ``serve --state-key-file`` is refused when others may
  change it (group or other write bits, an owner neither the server's user nor root), and
  used with a warning saying what to run when others may only read it: deployments mount
  key files so (a Kubernetes secret is 0644 by default, a Docker secret 0444 and root's).
  Errors and warnings name the file, never a key.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path

from mcp_elicit.errors import ConfigError
from mcp_elicit.sealing import KeyRing
from mcp_elicit.stores.base import Store
from mcp_elicit.stores.memory import MemoryStore
from mcp_elicit.stores.url import default_data_dir

__all__ = [
    "KEY_FILE",
    "MISSING_KEY",
    "at_start",
    "check_given",
    "check_private",
    "default_key_path",
    "load_or_create",
    "read",
]

KEY_FILE = "state.keys"
log = logging.getLogger("mcp_elicit.server")
# what to do when a token names a key id the ring lacks (logged, after that key id)
MISSING_KEY = (
    "which this instance's keys do not hold. Give every instance the same keys "
    "(--state-key-file, $MCP_ELICIT_STATE_KEYS), and keep a retired key in the file until "
    "what it sealed was read under the new one (README, 'Several instances')"
)
_SHARED_KEY = (
    "several instances behind one URL need a shared key (Server(state_keys=...), "
    "serve's --state-key-file or $MCP_ELICIT_STATE_KEYS, see 'mcp-elicit keygen')"
)


def at_start(store: str | Store | None) -> tuple[Path, str] | None:
    """A server with no key configured starts, its URL-mode store being ``store`` (None:
    the default file): log what seals its state, warning when a store the user configured
    would keep what nobody can open after a restart or on another instance. The default
    store's key file and its text when it exists (read now), else None."""
    if store is None:
        path = default_key_path()
        text = read(path)
        if text is not None:
            log.info(
                "requestState and URL-mode secrets are sealed with the key file %s; %s", path, _SHARED_KEY
            )
            return path, text
        log.info(
            "requestState is sealed with a random per-process key; %s. URL mode, once it uses its "
            "default store, makes %s and seals with it, so that its secrets survive restarts",
            _SHARED_KEY,
            path,
        )
    elif isinstance(store, MemoryStore) or (
        isinstance(store, str) and store.strip().lower().startswith("memory:")
    ):
        log.info(
            "requestState is sealed with a random per-process key; %s", _SHARED_KEY
        )  # nothing outlives it
    else:
        from mcp_elicit.stores.redis import redact_url

        where = redact_url(store) if isinstance(store, str) else type(store).__name__
        log.warning(
            "URL mode keeps its state in %s, but no state key is configured: this process seals "
            "requestState, secrets and connections with a random key of its own, so what it stores "
            "there cannot be opened after a restart, nor by another instance sharing the store. Give "
            "every instance the same keys: Server(state_keys=...), or serve's --state-key-file or "
            "$MCP_ELICIT_STATE_KEYS (see 'mcp-elicit keygen')",
            where,
        )
    return None


def default_key_path() -> Path:
    """``state.keys`` next to the default store's ``state.db`` (not created here)."""
    return Path(default_data_dir()) / KEY_FILE


def read(path: Path) -> str | None:
    """The key text in ``path``, checked; None when there is no such file."""
    try:
        with open(path, encoding="utf-8") as file:
            check_private(path, os.fstat(file.fileno()), made_here=True)
            text = file.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ConfigError(
            f"the state key file {str(path)!r} is not UTF-8 text; {_REPAIR.format(str(path))}"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the state key file {str(path)!r}: {exc}") from None
    try:
        KeyRing.from_text(text)
    except ConfigError as exc:
        raise ConfigError(
            f"the state key file {str(path)!r} is not a key file: {exc}; {_REPAIR.format(str(path))}"
        ) from None
    return text


_REPAIR = (
    "it holds the key that opens what the default store keeps: restore {!r} from a backup, or "
    "remove it (a new key is made, and the secrets, connections and requestState sealed with "
    "the old one are lost)"
)


def load_or_create(path: Path) -> str:
    """The key text in ``path``, made first when there is none (see the module rules)."""
    text = read(path)
    if text is not None:
        return text
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{KEY_FILE}.", dir=path.parent)  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(KeyRing.generate().export_text())
                file.flush()
                os.fsync(file.fileno())
            with contextlib.suppress(FileExistsError):  # another process was first: its key
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
    except OSError as exc:
        raise ConfigError(f"cannot create the state key file {str(path)!r}: {exc}") from None
    text = read(path)
    if text is None:
        raise ConfigError(f"the state key file {str(path)!r} disappeared as it was made")
    return text


def check_private(path: Path, info: os.stat_result, *, made_here: bool = False) -> None:
    """A ``ConfigError`` saying what to run when the key file at ``path`` (its ``info``)
    is not private to this user (the module's rules); any key file, the default one
    (``made_here``: removing it makes a new one) or one given."""
    if os.name == "nt":  # no POSIX modes: the user profile's ACLs protect it
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        start_over = ", or remove it to start over (what it sealed is then lost)" if made_here else ""
        raise ConfigError(
            f"the state key file {str(path)!r} can be read or changed by other users (mode {mode:04o}): "
            f"run chmod 600 {str(path)!r}{start_over}"
        )
    if info.st_uid != os.getuid():
        raise ConfigError(
            f"the state key file {str(path)!r} belongs to another user (uid {info.st_uid}): "
            "it must be the server user's own, mode 0600"
        )


def check_given(path: Path, info: os.stat_result) -> str | None:
    """For a key file given to ``serve --state-key-file`` (its ``info``): a ``ConfigError``
    saying what to run when other users may change it; a warning to log when they may read
    it; None when it is private (the module's rules)."""
    if os.name == "nt":  # no POSIX modes: the user profile's ACLs protect it
        return None
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        raise ConfigError(
            f"the state key file {str(path)!r} can be changed by other users (mode {mode:04o}): "
            f"run chmod 600 {str(path)!r}"
        )
    if info.st_uid not in (os.getuid(), 0):
        raise ConfigError(
            f"the state key file {str(path)!r} belongs to another user (uid {info.st_uid}): "
            "it must be the server user's own (or root's), mode 0600"
        )
    if mode & 0o044:
        return (
            f"the state key file {str(path)!r} can be read by other users (mode {mode:04o}): whoever "
            f"reads it can forge requestState and open stored secrets; run chmod 600 {str(path)!r} "
            "(a mounted secret: give it mode 0400)"
        )
    return None
