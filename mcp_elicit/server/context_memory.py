"""What one run of a handler keeps: its questions' keys, and the memo that outlives a round.

Rules:

* Every question has a key, unique in the request: the handler's ``key=``, else
  ``<kind>-<n>`` in the order asked (the same on every replayed round, as the handler asks
  in the same order). A second question under one key fails (``key_reused``); a key that
  is not a non-empty string is the handler's ``TypeError``/``ValueError``. A handler run
  again within one round (``url_raised``) starts its keys afresh (``_run_again``).
* ``remember`` and ``slot`` keep JSON values for the whole request (on 2026-07-28 they
  travel sealed in ``requestState``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_elicit.core.mrtr import key_reused

if TYPE_CHECKING:
    from mcp_elicit.server.questions import Asker

__all__ = ["ContextMemory"]


class ContextMemory:
    """Keys and memo of ``Context`` (a mixin: it needs ``_asker`` and ``_counters``)."""

    __slots__ = ()

    _asker: Asker
    #: How many questions of each kind (and ``_occurrence`` names) were asked; ``=key``: taken.
    _counters: dict[str, int]

    def _key(self, kind: str, key: str | None) -> str:
        counters, by = self._counters, (1 if key is not None else 2)  # 1: key=; 2: "<kind>-<n>"
        if key is None:
            n = counters[kind] = counters.get(kind, 0) + 1
            key = f"{kind}-{n}"
        elif not isinstance(key, str):  # caught here: at 2026-07-28 it would break the result's JSON
            raise TypeError(
                f"a question's key must be a string, not {key!r} ({type(key).__name__}): "
                "give key=f'item-{n}' for a number"
            )
        elif not key:
            raise ValueError("an input request key must not be empty")
        if taken := counters.get(f"={key}", 0):
            raise key_reused(key, given=2 in (by, taken))
        counters[f"={key}"] = by
        return key

    def _run_again(self) -> None:
        """The handler runs again from its start in this round: its questions get the keys
        they got the first time (the memo is kept)."""
        self._counters.clear()

    def _occurrence(self, what: str) -> int:
        """How many times ``what`` was asked in this run of the handler, this time included
        (the same on every replayed round, as the handler asks in the same order)."""
        counters = self._counters
        name = f"#{what}"
        n = counters[name] = counters.get(name, 0) + 1
        return n

    def remember(self, key: str, make: Callable[[], Any]) -> Any:
        """A JSON value kept for the whole request: made once by ``make``, then given back
        on every later round (on 2026-07-28 it travels sealed in ``requestState``)."""
        memo = self._asker.memo
        if key not in memo:
            memo[key] = make()
        return memo[key]

    def slot(self, key: str) -> dict[str, Any]:
        """A small JSON object kept for the whole request, to fill in as the handler goes."""
        memo = self._asker.memo
        value = memo.get(key)
        if not isinstance(value, dict):
            value = memo[key] = {}
        return value
