"""Tasks, client side (the ``io.modelcontextprotocol/tasks`` extension): following one
task from its ``CreateTaskResult`` to its end. No I/O: ``tasks/get`` results in; the
result, the questions to answer, or how long to wait, out.

Rules:

* Only ``tools/call`` may be answered with a task, and only when the request declared the
  extension; anything else is a protocol violation.
* A task's ``taskId`` is a non-empty string and never changes; its status is one of the
  five the extension names. ``completed`` gives the tool's result (``isError`` included);
  ``failed`` raises the JSON-RPC error it carries, as if the request had answered it;
  ``cancelled`` raises ``TaskCancelled``.
* ``input_required``: each key of ``inputRequests`` is asked once; a key seen again
  (a poll while the person is asked, or before the server took the answer in) is not
  asked again. Each poll also says which keys the task still waits for: a question it
  no longer waits for (the server gave up on it, or the task ended) is withdrawn, and
  ``tasks/update`` carries answers only to the keys the last poll showed waiting (each
  key of ``inputResponses`` must be one still outstanding: ``waited_for``).
* A URL step answered ``accept`` (``updated``) is pending: the first poll after that asks
  nothing new says the task waits for its page (``Poll.awaiting_pages``, every step of
  that ``tasks/update`` the client accepted, in the order asked), once; a poll asking
  something new first ends the wait unsaid, as a round that asks something does
  (``core.rounds``). The task's ttl bounds the wait, not ``RoundLimits.url_wait``.
* Polls are ``pollIntervalMs`` apart, as the extension asks clients to honour it (1 s when
  the server gives none), within [50 ms, 10 min] (the top a safety cap against a server
  that says a year), and never later than when the task's ttl passes. Past the task's
  ``ttlMs`` (from when it was created here), the task is given up (``RequestTimeout``);
  without a ttl, only the caller's own limits apply (its deadline cuts a wait short).
* A ``tasks/get`` (or ``tasks/update``) answered by the server's passing outage (-32603 with HTTP 503, its store
  down; or HTTP 502, 503 or 504 and no JSON-RPC response, from a proxy) is polled again
  after a backoff (0.5 s, doubling, at most 8 s), while the outage has lasted less than
  ``RoundLimits.outage_wait`` (from its first such answer; a poll answered ends it). Past
  that, or for any other error, the call fails with the error; one that ended an outage
  says how long it lasted (``outage_said``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_elicit.core.input_requests import InputRequest, accepted_url, input_requests
from mcp_elicit.core.quoting import quoted
from mcp_elicit.core.rounds import Complete
from mcp_elicit.errors import (
    InternalError,
    MCPElicitError,
    ProtocolError,
    ProtocolViolation,
    RequestTimeout,
    TaskCancelled,
    TransportError,
)

__all__ = ["OUTAGE_STATUSES", "Poll", "TaskWatch"]

#: The HTTP statuses of a passing outage: a server that will be back (503), or a proxy
#: that could not reach it (502, 504).
OUTAGE_STATUSES: Final = frozenset({502, 503, 504})
_OUTAGE_FIRST: Final = 0.5
_OUTAGE_MOST: Final = 8.0

_ENDED: Final = frozenset({"completed", "failed", "cancelled"})
_STATUSES: Final = frozenset({"working", "input_required", *_ENDED})
_DEFAULT_POLL: Final = 1.0
_MIN_POLL: Final = 0.05
#: A safety cap on the server's interval (one that says a year): 10 minutes. The
#: extension asks clients to honour the interval, so it is the only cap besides the task's
#: ttl and the caller's own deadline.
_MAX_POLL: Final = 600.0


@dataclass(frozen=True, slots=True)
class Poll:
    """Answer ``requests`` (maybe none) with ``tasks/update``, then poll again after
    ``delay``; ``outstanding``: every key the task waits for an answer to;
    ``awaiting_pages``: the accepted URL steps whose pages the task now waits for."""

    requests: tuple[InputRequest, ...]
    delay: float
    outstanding: frozenset[str] = frozenset()
    awaiting_pages: tuple[InputRequest, ...] = ()


@dataclass(slots=True)
class TaskWatch:
    """One task being followed; ``started`` is the caller's clock when it was created."""

    task_id: str
    started: float
    ttl: float | None
    delay: float
    answered: set[str] = field(default_factory=set)
    status: str = "working"
    #: URL steps accepted in the last ``tasks/update``, not said yet.
    pages: tuple[InputRequest, ...] = ()
    #: When the server's current outage began (its first poll answered so), and its polls.
    outage_since: float | None = None
    outage_polls: int = 0
    #: The keys the last poll showed the task waiting for.
    outstanding: frozenset[str] = frozenset()

    @classmethod
    def start(cls, method: str, created: Mapping[str, Any], *, declared: bool, now: float) -> TaskWatch:
        """Check a ``CreateTaskResult`` answering ``method``; the watch over its task."""
        if method != "tools/call":
            raise ProtocolViolation(f"the server answered {method} with a task; only tools/call may be one")
        if not declared:
            raise ProtocolViolation(
                "the server answered tools/call with a task, but this request did not declare the tasks extension"
            )
        task_id = created.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolViolation("the server's CreateTaskResult has no taskId (a non-empty string)")
        watch = cls(task_id, now, _ttl(created.get("ttlMs")), _DEFAULT_POLL)
        watch._note(created)
        return watch

    def step(self, result: Mapping[str, Any], now: float) -> Complete | Poll:
        """What one ``tasks/get`` result means: the final result, or what to do next.
        Raises the task's error when it failed, ``TaskCancelled``, or ``RequestTimeout``
        once its ttl has passed."""
        if result.get("taskId") != self.task_id:
            raise ProtocolViolation(
                f"tasks/get for task {self.task_id!r} answered about {quoted(result.get('taskId'))}"
            )
        self._note(result)
        self.reached()
        self.outstanding = frozenset()
        if self.status == "completed":
            final = result.get("result")
            if not isinstance(final, Mapping):
                raise ProtocolViolation(f"task {self.task_id} completed without a result object")
            return Complete(dict(final))
        if self.status == "failed":
            error = result.get("error")
            if not isinstance(error, Mapping):
                raise ProtocolViolation(f"task {self.task_id} failed without an error object")
            raise ProtocolError.from_error(error)
        if self.status == "cancelled":
            message = result.get("statusMessage")
            raise TaskCancelled(
                f"the server cancelled task {self.task_id}"
                + (f": {message}" if isinstance(message, str) and message else ""),
                self.task_id,
            )
        if self.ttl is not None and now - self.started > self.ttl:
            raise RequestTimeout(
                f"task {self.task_id} was still {self.status} after its time to live ({self.ttl:g} s); "
                "it was given up"
            )
        delay = self._wait(now)
        if self.status != "input_required":
            return Poll((), delay, awaiting_pages=self._said())
        raw = result.get("inputRequests")
        if not isinstance(raw, Mapping) or not raw:
            raise ProtocolViolation(f"task {self.task_id} is input_required without inputRequests")
        waiting = input_requests(raw, "tasks/get")
        asked = tuple(r for r in waiting if r.key not in self.answered)
        if asked:  # something new asked: any earlier wait ends
            self.pages = ()
        self.outstanding = frozenset(r.key for r in waiting)
        return Poll(asked, delay, self.outstanding, self._said())

    def _wait(self, now: float) -> float:
        """The wait before the next poll: the server's interval, but no later than when the
        task's ttl passes (one more look before giving it up, its result perhaps held)."""
        if self.ttl is None:
            return self.delay
        return min(self.delay, max(self.ttl - (now - self.started), _MIN_POLL))

    def waited_for(self, answers: dict[str, Any]) -> dict[str, Any]:
        """Those of ``answers`` whose keys the last poll showed waiting: a question the
        task stopped waiting for meanwhile is not answered (its key is no longer
        outstanding, so ``tasks/update`` must not carry it)."""
        return {key: answer for key, answer in answers.items() if key in self.outstanding}

    def outage(self, error: MCPElicitError, now: float, bound: float) -> float | None:
        """A ``tasks/get`` failed with ``error``: the seconds to wait before polling again
        when it is the server's passing outage, begun less than ``bound`` seconds ago;
        None to fail with it."""
        if not passing(error):
            self.outage_since, self.outage_polls = None, 0
            return None
        if self.outage_since is None:
            self.outage_since = now
        self.outage_polls += 1
        left = bound - (now - self.outage_since)
        if left <= 0:
            return None
        return min(_OUTAGE_FIRST * 2.0 ** (self.outage_polls - 1), _OUTAGE_MOST, left)

    def reached(self) -> None:
        """The server answered (a poll, an update): any outage is over."""
        self.outage_since, self.outage_polls = None, 0

    def outage_said(self, now: float) -> str:
        """For the error that ended the polls: how long the outage lasted ("" if none did)."""
        if self.outage_since is None:
            return ""
        return (
            f" (the server was unavailable for {now - self.outage_since:.1f} s, {self.outage_polls} polls "
            f"of task {self.task_id}; given up)"
        )

    def _said(self) -> tuple[InputRequest, ...]:
        """The pending pages, said now (once)."""
        pages, self.pages = self.pages, ()
        return pages

    @property
    def ended(self) -> bool:
        """Whether the task reached its end (completed, failed or cancelled)."""
        return self.status in _ENDED

    def sent(self, keys: list[str]) -> None:
        """Those keys are being asked, or were answered: never asked again."""
        self.answered.update(keys)

    def updated(self, requests: tuple[InputRequest, ...], answers: Mapping[str, Any]) -> None:
        """``answers`` to ``requests`` went out with ``tasks/update``: the URL steps among
        them accepted are pending, said by the next poll that asks nothing new."""
        self.pages = tuple(r for r in requests if accepted_url(r, answers.get(r.key)))

    def _note(self, task: Mapping[str, Any]) -> None:
        status = task.get("status")
        if not isinstance(status, str) or status not in _STATUSES:
            raise ProtocolViolation(f"task {self.task_id} has the unknown status {quoted(status)}")
        self.status = str(status)
        poll = task.get("pollIntervalMs")
        if isinstance(poll, int | float) and not isinstance(poll, bool):
            self.delay = min(max(poll / 1000, _MIN_POLL), _MAX_POLL)
        if "ttlMs" in task:
            self.ttl = _ttl(task["ttlMs"])


def _ttl(raw: object) -> float | None:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw >= 0:
        return raw / 1000
    return None


def passing(error: MCPElicitError) -> bool:
    """Whether ``error`` answered a request during a passing outage of the server
    (``OUTAGE_STATUSES``): -32603 with one of them, or one of them with no JSON-RPC in it."""
    if isinstance(error, ProtocolError):
        return error.code == InternalError.code and error.http_status in OUTAGE_STATUSES
    return isinstance(error, TransportError) and error.http_status in OUTAGE_STATUSES
