"""What seals ``requestState`` (and URL mode's vault): the keys configured, else a key of
this process, else the key file next to URL mode's default store.

Rules: keys configured (``Server(state_keys=...)``, ``set_state_keys``) are used as given.
Without them, a random per-process key seals, until the default store is used: from
then on the key file beside it (``server.key_file``, made when that store first opens,
read at start-up when it exists) seals, so what was sealed survives a restart; the
per-process key still opens what it sealed before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcp_elicit.sealing import KeyRing, StateSealer
from mcp_elicit.server import key_file

if TYPE_CHECKING:
    from mcp_elicit.server.url_mode import UrlMode

__all__ = ["StateKeys"]


class StateKeys:
    """How a ``Server`` chooses its state keys (a mixin: ``Server.__init__`` sets the attributes)."""

    sealer: StateSealer
    url_mode: UrlMode
    #: True when no key was configured and a random per-process key seals state (until
    #: URL mode opens its default store: then the key file next to it does).
    ephemeral_state_key: bool
    #: The key file sealing state when none was configured (see ``server.key_file``).
    state_key_file: Path | None
    _process_key: bytes

    def set_state_keys(self, keys: KeyRing) -> None:
        """Seal ``requestState`` with ``keys`` (shared by every instance behind one URL)."""
        self.sealer = StateSealer(keys, server_id=self.sealer.server_id, ttl=self.sealer.ttl)
        self.ephemeral_state_key = False

    def _persist_state_key(self) -> None:
        """URL mode opens its default store: with no key configured, what goes into it is
        sealed with the key file next to it (made now if need be), so that it survives a
        restart. The per-process key still opens what it sealed until now."""
        if self.ephemeral_state_key:
            path = key_file.default_key_path()
            self._use_key_file(path, key_file.load_or_create(path))

    def _use_key_file(self, path: Path, text: str) -> None:
        keys = KeyRing.from_text(f"{text}\n{self._process_key.hex()}")
        self.sealer = StateSealer(keys, server_id=self.sealer.server_id, ttl=self.sealer.ttl)
        self.ephemeral_state_key = False
        self.state_key_file = path

    def _check_state_keys(self) -> None:
        """At start-up, with no key configured: seal with the default store's key file when
        it exists (so a state sealed before a restart opens), and say what seals."""
        if self.ephemeral_state_key:
            found = key_file.at_start(self.url_mode.store_spec)
            if found is not None:
                self._use_key_file(*found)
