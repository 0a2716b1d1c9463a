"""The completion notices of URL steps on a handshake-era session (2025-11-25):
``notifications/elicitation/complete`` matched to the step it says is complete.

Rules:

* A URL step with an ``elicitationId`` (a URL-mode ``elicitation/create``, or a step of a
  -32042) is registered while the client waits for it (``completion`` to ``done_with``):
  the notice naming it sets its event, wherever the notice arrives, and the answerer
  learns it from ``ElicitationRequest.finished`` while the person is still on the page.
  Steps of one id registered at once (two requests whose -32042s name it: a server that
  gives a kind of step one id) share its event, and it stays registered until the last
  of them is done with: one done first does not leave the other deaf to the notice.
* A notice that arrives before anything waits for it (it overtook a -32042 on another
  stream, or came just before it) is kept, the last ``_EARLY_NOTICES`` of them, until the
  client has handled the replies to the requests in flight when it came (``handled``; a
  -32042's steps are put to the person meanwhile): it can be for a step only those are
  asked for. For the id of a step already over, only a request begun since counts (a
  server that gives every step of a kind one id may say each retry's step is complete
  before its -32042); else it is a late copy of the old step's notice, and is dropped, so
  it does not finish the next such step.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, TypeVar

__all__ = ["CompletionNotices"]

_EARLY_NOTICES: Final = 64
_T = TypeVar("_T")


class CompletionNotices:
    """The URL steps waiting for their completion notices on one session, and the notices
    that came before their steps."""

    def __init__(self) -> None:
        #: The event of each registered ``elicitationId``, and how many steps wait for it.
        self._completions: dict[str, asyncio.Event] = {}
        self._waiters: dict[str, int] = {}
        #: ``elicitationId``s the server said were complete before anything waited for them,
        #: each with the client's requests in flight then that it may be for.
        self._completed: dict[str, set[Any]] = {}
        #: ``elicitationId``s of steps over since, each with how many of the client's
        #: requests had begun then (a notice for one is late, unless one has begun since).
        self._over: dict[str, int] = {}
        #: The client's requests whose replies are not handled yet (``handled``), each with
        #: how many had begun when it did.
        self._begun: dict[Any, int] = {}
        self._begins = 0

    def begin(self, during: Any) -> None:
        """The client's request ``during`` (its id) is in flight: a notice may be for a
        step it is asked for."""
        self._begins += 1
        self._begun[during] = self._begins

    def handled(self, during: Any) -> None:
        """The client has done with the reply to its request ``during`` (its id), a -32042
        put to the person included: a notice kept for a step only it could be asked for is
        dropped, and one from now on is not for it (see the rules)."""
        self._begun.pop(during, None)
        for eid, requests in list(self._completed.items()):
            requests.discard(during)
            if not requests:
                del self._completed[eid]

    def waiting(self, eid: str) -> bool:
        """Whether a URL step ``eid`` is registered (its notice would finish it)."""
        return eid in self._completions

    def completion(self, eid: str) -> asyncio.Event:
        """The event set when the server says the URL step ``eid`` is complete."""
        self._over.pop(eid, None)  # a step of this id again: a notice now may be its own
        event = self._completions.setdefault(eid, asyncio.Event())
        self._waiters[eid] = self._waiters.get(eid, 0) + 1
        if self._completed.pop(eid, None) is not None:  # the notice came first
            event.set()
        return event

    def done_with(self, eid: str) -> None:
        """A URL step ``eid`` is over (one ``completion`` each). Once no step of that id
        waits any more, a notice for it from now on is a late one, not kept for the next
        step that has the same id."""
        left = self._waiters.pop(eid, 0) - 1
        if left > 0:
            self._waiters[eid] = left
            return
        self._completions.pop(eid, None)
        _remember(self._over, eid, self._begins)

    def heard(self, eid: str) -> None:
        """The server said the URL step ``eid`` is complete."""
        event = self._completions.get(eid)
        since = self._over.get(eid, -1)  # a step of this id was over then: begun after
        during = {rid for rid, begun in self._begun.items() if begun > since}
        if event is not None:
            event.set()
        elif during:  # early, for a step one of these requests is asked for
            _remember(self._completed, eid, during)


def _remember(ids: dict[str, _T], eid: str, value: _T) -> None:
    """Add ``eid`` (with ``value``) to ``ids``, keeping the last ``_EARLY_NOTICES`` of them."""
    ids.pop(eid, None)
    ids[eid] = value
    while len(ids) > _EARLY_NOTICES:
        del ids[next(iter(ids))]
