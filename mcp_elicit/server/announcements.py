"""What a ``Server`` tells the clients listening: a URL step completed or given up, a
resource updated, a list changed, a task's course. The 2025-11-25 sessions and the
2026-07-28 listeners (``subscriptions/listen``) hear it alike, and, with a configured
store, the other instances' clients too (``server.relay``).

Rules: each public one may be called from any thread (``on_loop``: it runs on the loop of
the request, or the loop the server serves on, the caller waiting for it;
``complete_elicitation`` is handed to the loop the server serves on without waiting for
it, what it raises there, or its loop closing before it ran, logged naming the step);
each says how many clients on this instance were told. A client hears only what
it may see: a resource's update only if it may read it, a list change only of a kind
its ``initialize`` result declared (2025-11-25), a URL step only its own principal's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from mcp_elicit.core.tasks import TaskRecord
from mcp_elicit.server.auth import Principal, subject_of
from mcp_elicit.server.threads import on_loop, on_request_loop

if TYPE_CHECKING:
    from mcp_elicit.server.relay import Relay
    from mcp_elicit.server.sessions import Sessions
    from mcp_elicit.server.subscriptions import Subscriptions
    from mcp_elicit.server.url_mode import UrlMode
    from mcp_elicit.telemetry import Telemetry

__all__ = ["Announcements"]

log = logging.getLogger("mcp_elicit.server")


class Announcements:
    """The ``Server``'s notifications to its clients (a mixin: the server sets the
    attributes)."""

    url_mode: UrlMode
    relay: Relay
    sessions: Sessions
    subscriptions: Subscriptions
    telemetry: Telemetry | None

    if TYPE_CHECKING:

        def _readers(self, uri: str) -> Callable[[Principal | None], bool] | None: ...  # Dispatch's

        def _serving_loop(self) -> asyncio.AbstractEventLoop | None: ...  # Lifecycle's

    @on_request_loop
    def complete_elicitation(self, elicitation_id: str, principal: Principal | str | None = None) -> bool:
        """The URL step ``elicitation_id`` of ``principal`` (the ``ctx.principal`` of the
        request that asked, or its subject; None without authentication) is done: never
        another principal's, so an id a handler chose (``"github"``) completes for the one
        it names. Its sessions that sent it hear ``notifications/elicitation/complete``
        (each question asked under it; ``Session.complete``): True when one was told here;
        those of other instances sharing the store are told through it (``relay``). The
        2026-07-28 requests held on it (``ctx.require_url``), on any instance sharing the
        store, go on (``url_steps``, recorded without waiting). Unknown ids are ignored.

        Callable from any thread. Called away from the event loop the server serves on
        (a sync webhook's thread, a ``threading.Timer``, a thread running an event loop of
        its own), it is handed to that loop (``call_soon_threadsafe``) and done there, in
        the order made, exactly as if called there, and returns False at once: the sessions
        are told there, a moment later, and nothing here waits for that loop. A server not
        started anywhere does it where it is called: on a running event loop of the
        caller's, recorded through a store opened for it (``server/step_records.py``); with
        none, it is not recorded (a warning says so). Handed on, what it raises on that
        loop is logged naming the step, and so is that loop closing before it ran (the
        server stopping meanwhile): it is then not recorded. An ``elicitation_id`` that is
        no non-empty string (no step can have it) is a ``ValueError``, at once."""
        if not isinstance(elicitation_id, str) or not elicitation_id.strip():
            given = repr(elicitation_id) if isinstance(elicitation_id, str) else type(elicitation_id).__name__
            raise ValueError(
                "complete_elicitation needs the step's elicitation_id, the non-empty string its "
                f"handler gave ctx.require_url (or its raised step's elicitationId); not {given}"
            )
        subject = subject_of(principal)
        serving = self._serving_loop()
        if serving is not None and serving is not _running_loop():
            handed = _HandedOff(self._complete_elicitation, elicitation_id, subject)
            try:
                serving.call_soon_threadsafe(handed)
            except RuntimeError:  # closed since: as if the server were not started
                handed.ran = True  # done here instead
            else:
                return False
        return self._complete_elicitation(elicitation_id, subject)

    def _complete_elicitation(self, elicitation_id: str, subject: str | None) -> bool:
        notice = functools.partial(self.relay.completion, elicitation_id, subject)  # sealed when sent
        self.url_mode.step_completed(elicitation_id, subject, notice)
        return self.sessions.complete(elicitation_id, subject, self.telemetry)

    def _abandon_elicitation(self, elicitation_id: str, principal: str | None) -> None:
        """A hosted page was given up (closed unfinished): its sessions stop waiting on it."""
        for session in self.sessions.awaiting(elicitation_id, principal):
            session.abandon(elicitation_id)

    @on_loop
    def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to every client subscribed to ``uri``
        (2026-07-28 listeners and 2025-11-25 sessions); how many on this instance. With a
        configured store, the instances sharing it tell theirs too (``server.relay``)."""
        self.relay.publish(uri)
        return self._resource_updated(uri)

    def _resource_updated(self, uri: str) -> int:
        method, params = "notifications/resources/updated", {"uri": uri}
        allowed = self._readers(uri)  # only those who may read it hear of it
        sessions = self.sessions.subscribed(uri)
        if allowed is not None:
            sessions = [s for s in sessions if allowed(s.subscriptions.get(uri))]
        for session in sessions:
            session.notify(method, params, self.telemetry)
        return len(sessions) + self.subscriptions.publish(method, params, allowed=allowed)

    @on_loop
    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> int:
        """Tell every client listening that the list of ``kind`` changed (done for you
        when a tool, prompt or resource is registered or removed); how many were told. A
        2025-11-25 session is told only of the kinds its ``initialize`` result declared."""
        method = f"notifications/{kind}/list_changed"
        sessions = [s for s in self.sessions.live() if kind in s.offered]  # declared to it only
        for session in sessions:
            session.notify(method, None, self.telemetry)
        return len(sessions) + self.subscriptions.publish(method)

    def _task_changed(self, record: TaskRecord) -> None:
        self.subscriptions.publish("notifications/tasks", record.wire())
        self.relay.mirror(record)


class _HandedOff:
    """A completion handed to the loop the server serves on: done there once, what it
    raises logged naming the step (not asyncio's "Exception in callback"); dropped unrun
    (its loop closed first, the server stopping), said, as it is then not recorded."""

    __slots__ = ("complete", "elicitation_id", "ran", "subject")

    def __init__(
        self, complete: Callable[[str, str | None], bool], elicitation_id: str, subject: str | None
    ) -> None:
        self.complete, self.elicitation_id, self.subject = complete, elicitation_id, subject
        self.ran = False

    def __call__(self) -> None:
        self.ran = True
        try:
            self.complete(self.elicitation_id, self.subject)
        except Exception:
            log.exception(
                "complete_elicitation(%r), handed to the server's event loop, failed there",
                self.elicitation_id[:64],
            )

    def __del__(self) -> None:
        if not self.ran:  # run where the loop is closed; logging keeps its own errors
            log.warning(
                "complete_elicitation(%r) was handed to the server's event loop, which closed before "
                "doing it (the server stopping): the completion is not recorded and nobody was told",
                self.elicitation_id[:64],
            )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
