"""Where a ``Context`` works: on its handler's event loop, while its request runs.

Rules:

* A ``Context`` works only on the event loop its handler runs on: asking, progress or
  logging from another thread (a ``threading.Thread``, a helper run with
  ``asyncio.to_thread``) is a ``RuntimeError`` at once, saying to await it in the handler
  and hand the thread the answer. (A plain-function handler gets a ``ThreadContext``.)
* Nor does it work once its request has ended (kept in a global, used by a background
  task after the handler returned; on 2026-07-28, after its round): asking (and awaiting
  a question made before the end) is a ``RuntimeError`` naming the handler; progress and
  logs are dropped, as nothing is sent for a request once it is answered.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, NoReturn

from mcp_elicit.core.mrtr import ELICIT, LIST_ROOTS, SAMPLE, Ask

if TYPE_CHECKING:
    from mcp_elicit.core.server import Call
    from mcp_elicit.server.questions import Asker

__all__ = ["ContextGuard"]


class ContextGuard:
    """The checks of ``Context`` (a mixin: it needs ``call``, ``_asker`` and ``_thread``)."""

    __slots__ = ()

    call: Call
    _asker: Asker
    #: The thread of the event loop the handler runs on: the only one a Context works in.
    _thread: int
    #: A question is being made (``ctx.elicit``...), or its making or asking ended with an
    #: error (a refusal, a cancellation, an unanswered question ending a 2026-07-28 round): the
    #: questions made before it were dropped by that end (``ctx.gather(q1, bad)``, ``q2`` made
    #: to await after ``q1``), not forgotten, and do not warn that they were never awaited
    #: (``Question.__del__``).
    _interrupted: bool

    def _what(self) -> str:
        """The handler this Context is for, as a message names it (``tool 'book'``)."""
        method, params = self.call.method, self.call.params
        if method == "resources/read":
            return f"resource {params.get('uri')!r}"
        kind = {"tools/call": "tool", "prompts/get": "prompt"}.get(method, method)
        return f"{kind} {params.get('name')!r}"

    def _live(self, name: str | Ask) -> None:
        """Refuse ``ctx.name()`` (or awaiting the question ``name``) where it cannot work:
        off the handler's event loop, or once its request has ended."""
        if threading.get_ident() != self._thread or self._asker.ended:
            self._refuse(name)

    def _sending(self, name: str) -> bool:
        """Whether ``ctx.name()`` may send its notification: not once the request has ended
        (nothing is sent for a request once it is answered); off the loop, refused."""
        if threading.get_ident() != self._thread:
            self._refuse(name)
        return not self._asker.ended

    def _called(self, ask: Ask) -> str:
        """The ``ctx`` method that made ``ask`` (``elicit``, ``elicit_url``...), as messages name it."""
        return "elicit_url" if ask.params.get("mode") == "url" else _CALLED.get(ask.method, ask.method)

    def _refuse(self, name: str | Ask) -> NoReturn:
        if isinstance(name, Ask):
            name = self._called(name)
        if threading.get_ident() != self._thread:
            raise RuntimeError(
                f"ctx.{name}() was called from thread {threading.current_thread().name!r}, not the event "
                f"loop's thread where {self._what()} runs: a Context works only there. Await it in the "
                "handler (or a task it starts on the same loop) and hand the thread the answer, not the Context"
            )
        raise RuntimeError(
            f"ctx.{name}() was called after the request of {self._what()} ended: a Context works only "
            "while its handler runs (was it kept in a global, or used by a background task?). Ask "
            "from the handler itself, before it returns"
        )


#: What a handler called to ask a question, by the question's method.
_CALLED = {ELICIT: "elicit", SAMPLE: "sample", LIST_ROOTS: "list_roots"}
