"""Where an MCP client's authorization outlives the process: tokens and client
registrations, one record per MCP server URL (``transports.http_auth.OAuth`` uses them).

Rules:

* :class:`FileTokenStore` is one JSON file, created readable by its owner only (0600)
  and replaced atomically on every save; it holds secrets. A save reads the file, changes
  its one record and writes it back while holding an exclusive lock on ``<file>.lock``, so
  processes and tasks saving at once each keep their record.
* ``locked(key)`` holds one server's record for one client, across a read, a refresh and a
  save, so that clients sharing the record (processes sharing the file, ``OAuth`` objects
  sharing a store) spend a rotating refresh token once. The file store's lock is an
  ``flock`` on ``<file>.locks/<digest of the key>.lock``: per record, so clients of other
  servers never wait, and released by the kernel when its holder dies. Waiting is bounded:
  past its ``timeout`` it raises ``TimeoutError``, never hangs.
* A record is read back whole or not at all (:meth:`Stored.from_record` raises
  ``ValueError`` for anything it cannot read), never trusted in part.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mcp_elicit.core.token_endpoint import ClientCredentials, Tokens

__all__ = ["FileTokenStore", "MemoryTokenStore", "Stored", "TokenStore"]

log = logging.getLogger(__name__)


@dataclass
class Stored:
    """One MCP server's authorization: the tokens held (from ``issuer``, asked with
    ``scope``) and the client's registration at each authorization server."""

    issuer: str | None = None
    scope: str | None = None
    tokens: Tokens | None = None
    clients: dict[str, ClientCredentials] = field(default_factory=dict)
    #: The DPoP private key (PEM) the tokens are bound to, if they are.
    dpop_key: str | None = field(default=None, repr=False)
    #: Client ids given beforehand (no secret), each with the authorization server it was
    #: first used at: the next run presents it there only.
    given: dict[str, str] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        tokens = self.tokens
        return {
            "issuer": self.issuer,
            "scope": self.scope,
            "tokens": None
            if tokens is None
            else {
                "access_token": tokens.access_token,
                "refresh_token": tokens.refresh_token,
                "expires_at": tokens.expires_at,
                "scope": tokens.scope,
                "token_type": tokens.token_type,
            },
            "dpop_key": self.dpop_key,
            "given": dict(self.given),
            "clients": {
                issuer: {
                    "client_id": c.client_id,
                    "client_secret": c.client_secret,
                    "auth_method": c.auth_method,
                    "redirect_uri": c.redirect_uri,
                }
                for issuer, c in self.clients.items()
            },
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Stored:
        try:
            clients = {
                str(issuer): ClientCredentials(
                    str(c["client_id"]),
                    _text(c.get("client_secret")),
                    str(c.get("auth_method", "none")),
                    redirect_uri=_text(c.get("redirect_uri")),
                )
                for issuer, c in record.get("clients", {}).items()
            }
            given = {str(client_id): _issuer(issuer) for client_id, issuer in record.get("given", {}).items()}
            held = record.get("tokens")
            tokens = (
                Tokens(
                    str(held["access_token"]),
                    _text(held.get("refresh_token")),
                    None if held.get("expires_at") is None else float(held["expires_at"]),
                    _text(held.get("scope")),
                    _token_type(held.get("token_type", "Bearer")),
                )
                if held
                else None
            )
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"a damaged record ({type(exc).__name__})") from None
        issuer, scope, key = record.get("issuer"), record.get("scope"), record.get("dpop_key")
        key = key if isinstance(key, str) else None
        if tokens is None or not isinstance(issuer, str):  # tokens without their issuer are not used
            return cls(clients=clients, dpop_key=key, given=given)
        return cls(issuer, scope if isinstance(scope, str) else None, tokens, clients, key, given)


def _issuer(value: object) -> str:
    """A stored binding's issuer: a string, or the record is damaged."""
    if not isinstance(value, str):
        raise TypeError("a client id bound to no issuer")
    return value


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _token_type(value: object) -> str:
    if value not in ("Bearer", "DPoP"):
        raise TypeError("an unknown token type")
    return str(value)


class TokenStore(Protocol):
    """Where an ``OAuth`` keeps its records (:meth:`Stored.to_record`) between runs."""

    async def load(self, key: str) -> Mapping[str, Any] | None:
        """The record saved under ``key`` (an MCP server URL), if any."""
        ...

    async def save(self, key: str, record: Mapping[str, Any]) -> None:
        """Replace the record under ``key``."""
        ...

    def locked(self, key: str, *, timeout: float) -> AbstractAsyncContextManager[None]:
        """Hold the record under ``key`` for this caller alone until the block ends (others
        entering ``locked(key)`` wait); ``TimeoutError`` when that is not had within
        ``timeout`` seconds. A lock whose holder died must not outlive it."""
        ...


class MemoryTokenStore:
    """A :class:`TokenStore` in this process (the default: nothing outlives it)."""

    def __init__(self) -> None:
        self.records: dict[str, Mapping[str, Any]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def load(self, key: str) -> Mapping[str, Any] | None:
        return self.records.get(key)

    async def save(self, key: str, record: Mapping[str, Any]) -> None:
        self.records[key] = record

    @contextlib.asynccontextmanager
    async def locked(self, key: str, *, timeout: float) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with asyncio.timeout(timeout):
                await lock.acquire()
        except TimeoutError:
            raise TimeoutError(f"the record for {key} stayed locked for {timeout:g} s") from None
        try:
            yield
        finally:
            lock.release()


class FileTokenStore:
    """A :class:`TokenStore` in one JSON file, created readable by its owner only (0600)
    and replaced atomically on every save. It holds secrets: keep it out of backups and
    repositories."""

    def __init__(self, path: str | os.PathLike[str], *, save_timeout: float = 30.0) -> None:
        self.path = Path(path)
        #: How long a save waits for another's (on ``<file>.lock``) before it fails.
        self.save_timeout = save_timeout

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring the token file %s: %s", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    async def load(self, key: str) -> Mapping[str, Any] | None:
        record = (await asyncio.to_thread(self._read)).get(key)
        return record if isinstance(record, Mapping) else None

    async def save(self, key: str, record: Mapping[str, Any]) -> None:
        await asyncio.to_thread(self._write, key, record)

    @contextlib.asynccontextmanager
    async def locked(self, key: str, *, timeout: float) -> AsyncIterator[None]:
        path = self.lock_path(key)
        fd = await asyncio.to_thread(_open_lock, path)
        try:
            clock = asyncio.get_running_loop().time
            deadline, pause = clock() + timeout, 0.005
            while not _try_lock(fd):  # polled: a wait that can end, unlike a blocking flock
                if clock() >= deadline:
                    raise TimeoutError(f"{path} stayed locked for {timeout:g} s")
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.1)
            yield
        finally:
            os.close(fd)  # releases the lock

    def lock_path(self, key: str) -> Path:
        """The file whose lock is ``locked(key)``'s (kept, like ``<file>.lock``)."""
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.path.with_name(self.path.name + ".locks") / f"{digest}.lock"

    def _write(self, key: str, record: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _locked(self.path.with_name(self.path.name + ".lock"), self.save_timeout):
            data = self._read()
            data[key] = dict(record)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp creates it 0600
                    json.dump(data, out, indent=1, sort_keys=True)
                os.replace(temp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise


@contextlib.contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600, kept) until the block ends, waiting
    at most ``timeout`` seconds for it (``TimeoutError`` naming the file): a process stopped
    while it holds the lock (Ctrl-Z) must not stall every other one for good. Each call opens
    the file anew, so the lock excludes other threads as well as processes. Runs in a worker
    thread: the wait sleeps."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline, pause = time.monotonic() + timeout, 0.005
        while not _try_lock(fd):  # released when the file is closed
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"the token file's lock {path} stayed held for {timeout:g} s (another mcp-elicit "
                    "process is saving, or was stopped while saving); try again"
                )
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
        yield
    finally:
        os.close(fd)


def _open_lock(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def _try_lock(fd: int) -> bool:
    """Take an exclusive lock on ``fd`` if nobody holds one (on any descriptor of the file)."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:  # held elsewhere
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # held elsewhere
        return False
    return True
