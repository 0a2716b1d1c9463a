"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, revision 2026-07-28): the record
of one task, its moves and its wire shapes. No I/O; time is an argument.

Rules:

* Status moves ``working`` -> ``input_required`` -> ``working`` ... and ends in
  ``completed``, ``failed`` or ``cancelled``; a task that ended never changes again.
* ``completed`` carries the request's own result (a tool that reported an error included:
  ``isError`` is a result) and no ``statusMessage``; ``failed`` carries a JSON-RPC error
  object, never a result, and the error's message as its ``statusMessage``; ``cancelled``
  says why as its ``statusMessage``. The progress text shown while it ran never outlives it.
* ``inputRequests`` holds every question still waiting, under keys unique over the task's
  lifetime (the server puts at most ``MAX_INPUT_REQUESTS`` there at once:
  ``server.task_handler``); an answer under any other key is ignored. ``tasks/update`` answers are
  bounded as a tool call's ``inputResponses`` are (``core.input_responses``): past that, -32602; so is
  an answer that is not an object (the schema's ``InputResponse``), under any key.
* ``ttlMs`` and ``pollIntervalMs`` are integer milliseconds. A running task is never
  forgotten, and says ``ttlMs: null`` (the extension counts the ttl from creation: a
  client may give a task up past it); once it ended it stays readable for its ttl, and
  says so from creation (the time it ran plus the ttl).
* A task belongs to the principal that created it (None: unauthenticated); to anyone
  else it does not exist. Nothing of ``requestState`` ever appears in a task.
* ``on_change`` (when set) is called after every change a client could see, with the
  record in its new state (``notifications/tasks`` is built from it).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcp_elicit.core.input_responses import check_input_responses
from mcp_elicit.core.subscriptions import MAX_TASK_ID
from mcp_elicit.errors import InvalidParams, MissingClientCapability
from mcp_elicit.wire.meta import ClientCapabilities

__all__ = [
    "TASK_METHODS",
    "TASKS_EXTENSION",
    "TaskRecord",
    "TaskStatus",
    "input_responses_of",
    "require_tasks",
    "task_id_of",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: The methods of the extension (2026-07-28); its v1 ``tasks/result`` and ``tasks/list`` are gone.
TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})


def require_tasks(capabilities: ClientCapabilities) -> None:
    """Raise -32021 naming the extension unless the request declared it."""
    if not capabilities.extension(TASKS_EXTENSION):
        raise MissingClientCapability.requiring({"extensions": {TASKS_EXTENSION: {}}})


def task_id_of(params: Mapping[str, Any]) -> str:
    """``params.taskId`` of a tasks/* request, or -32602 saying what is wrong."""
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise InvalidParams('Invalid params: "taskId" must be a non-empty string')
    if len(task_id) > MAX_TASK_ID:
        raise InvalidParams(f'Invalid params: "taskId" is longer than {MAX_TASK_ID} characters')
    return task_id


def input_responses_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params.inputResponses`` of ``tasks/update``, or -32602 saying what is wrong (within
    the limits of a tool call's: entries, bytes, levels of nesting; and each value an
    object, as the schema's ``InputResponse`` is, under any key)."""
    responses = params.get("inputResponses")
    if not isinstance(responses, dict):
        raise InvalidParams('Invalid params: tasks/update needs "inputResponses" (an object)')
    check_input_responses(responses)
    return responses


def _iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class TaskRecord:
    """One task: who owns it, where it is, and what it holds."""

    task_id: str
    owner: str | None
    created: float
    ttl_ms: int | None
    poll_ms: int
    status: TaskStatus = "working"
    status_message: str | None = None
    updated: float = 0.0
    ended: float | None = None
    #: Questions waiting for an answer, by key: ``{"method", "params"}`` each.
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Every key ever issued (keys are never reused within a task).
    issued: set[str] = field(default_factory=set)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    on_change: Callable[[TaskRecord], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.updated = self.updated or self.created

    @property
    def terminal(self) -> bool:
        return self.status in _TERMINAL

    @property
    def expires(self) -> float | None:
        """When the task may be forgotten: once its ttl has passed since creation, and since
        it ended; None while it runs (a running task is never forgotten) or without a ttl."""
        if self.ttl_ms is None or self.ended is None:
            return None
        return max(self.created, self.ended) + self.ttl_ms / 1000

    def _ttl_from_creation(self) -> int | None:
        """``ttlMs`` as the extension counts it, from creation (when the task may be
        discarded): none while it runs, since a running task is never forgotten; once it
        ended, the time it ran plus its ttl (:attr:`expires`)."""
        expires = self.expires
        return None if expires is None else round((expires - self.created) * 1000)

    def expired(self, now: float) -> bool:
        """Whether the task may be forgotten (see :attr:`expires`)."""
        expires = self.expires
        return expires is not None and now >= expires

    # ---- moves -------------------------------------------------------------------

    def ask(self, requests: Mapping[str, dict[str, Any]], now: float) -> None:
        """Questions to wait for: the task is ``input_required`` until they are answered."""
        if self.terminal:
            return
        for key in requests:
            if key in self.issued:
                raise ValueError(f"input request key {key!r} was used before in this task")
        self.issued.update(requests)
        self.input_requests.update(requests)
        self._move("input_required", now)

    def answered(self, keys: list[str], now: float) -> None:
        """Those questions got their answers (or are no longer waited for); the task works
        again once none is left."""
        removed = [key for key in keys if self.input_requests.pop(key, None) is not None]
        if not self.input_requests and self.status == "input_required":
            self._move("working", now)
        elif removed:
            self.updated = now
            self._changed()

    def complete(self, result: dict[str, Any], now: float) -> None:
        self._still_open()
        self.result = result
        self.status_message = None  # the last progress shown is not the outcome: the result is
        self._end("completed", now)

    def fail(self, error: dict[str, Any], now: float) -> None:
        self._still_open()
        self.error = error
        message = error.get("message")  # what went wrong, not the last progress shown
        self.status_message = message if isinstance(message, str) and message else "Failed"
        self._end("failed", now)

    def cancel(self, now: float, message: str = "Cancelled at the client's request") -> None:
        self._still_open()
        self.status_message = message
        self._end("cancelled", now)

    def set_message(self, message: str | None, now: float) -> None:
        if not self.terminal and message != self.status_message:
            self.status_message = message
            self.updated = now
            self._changed()

    def _still_open(self) -> None:
        if self.terminal:
            raise ValueError(f"task {self.task_id} already ended ({self.status})")

    def _end(self, status: TaskStatus, now: float) -> None:
        self.input_requests.clear()
        self.ended = now
        self._move(status, now)

    def _move(self, status: TaskStatus, now: float) -> None:
        self.status = status
        self.updated = now
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)

    # ---- wire ----------------------------------------------------------------------

    def wire(self, *, detailed: bool = True) -> dict[str, Any]:
        """The task as ``tasks/get`` and ``notifications/tasks`` give it (DetailedTask:
        with the questions, result or error of its status), without ``resultType``."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created),
            "lastUpdatedAt": _iso(self.updated),
            "ttlMs": self._ttl_from_creation(),
            "pollIntervalMs": self.poll_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        if not detailed:
            return task
        if self.status == "input_required":
            task["inputRequests"] = dict(self.input_requests)
        elif self.status == "completed":
            task["result"] = self.result
        elif self.status == "failed":
            task["error"] = self.error
        return task

    def created_result(self) -> dict[str, Any]:
        """The ``CreateTaskResult`` answering the request that made the task."""
        return {**self.wire(detailed=False), "resultType": "task"}
