"""Where an MCP client's authorization outlives the process: tokens and client
registrations, one record per MCP server URL (``transports.http_auth.OAuth`` uses them).

Rules: :class:`FileTokenStore` is one JSON file, created readable by its owner only (0600)
and replaced atomically on every save; it holds secrets. A save reads the file, changes
its one record and writes it back while holding an exclusive lock on ``<file>.lock``, so
processes and tasks saving at once each keep their record. A record is read back whole
or not at all (:meth:`Stored.from_record` raises ``ValueError`` for anything it cannot
read), never trusted in part.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
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
            given = record.get("tokens")
            tokens = (
                Tokens(
                    str(given["access_token"]),
                    _text(given.get("refresh_token")),
                    None if given.get("expires_at") is None else float(given["expires_at"]),
                    _text(given.get("scope")),
                    _token_type(given.get("token_type", "Bearer")),
                )
                if given
                else None
            )
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"a damaged record ({type(exc).__name__})") from None
        issuer, scope, key = record.get("issuer"), record.get("scope"), record.get("dpop_key")
        key = key if isinstance(key, str) else None
        if tokens is None or not isinstance(issuer, str):  # tokens without their issuer are not used
            return cls(clients=clients, dpop_key=key)
        return cls(issuer, scope if isinstance(scope, str) else None, tokens, clients, key)


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


class MemoryTokenStore:
    """A :class:`TokenStore` in this process (the default: nothing outlives it)."""

    def __init__(self) -> None:
        self.records: dict[str, Mapping[str, Any]] = {}

    async def load(self, key: str) -> Mapping[str, Any] | None:
        return self.records.get(key)

    async def save(self, key: str, record: Mapping[str, Any]) -> None:
        self.records[key] = record


class FileTokenStore:
    """A :class:`TokenStore` in one JSON file, created readable by its owner only (0600)
    and replaced atomically on every save. It holds secrets: keep it out of backups and
    repositories."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

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

    def _write(self, key: str, record: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _locked(self.path.with_name(self.path.name + ".lock")):
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
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created 0600, kept) until the block ends. Each
    call opens the file anew, so the lock excludes other threads as well as processes."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # released when the file is closed
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
