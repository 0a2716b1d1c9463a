"""What instances sharing a store tell each other: resource updates, and tasks.

A 2026-07-28 client may send any request to any instance, and a ``subscriptions/listen``
stream stays on the one that took it; a task's handler runs on the instance that created
it; a 2025-11-25 session lives on the instance that opened it, while the page's backend
that completes its URL step may call any instance (or run in a process of its own).
Without this, a listener would hear only the updates made on its own instance,
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` would have to reach the task's own
instance, and a session would hear only the completions made on its own.

Rules:

* Only with a configured store (``Server(store=...)``, ``--store``). Messages go on one
  channel per server (its name and ``MCP_ELICIT_SERVER_ID``, as its sealed state is), and
  every instance subscribed acts on them. So they reach other processes through Redis;
  SQLite and memory stores publish within their process only.
* ``notify_resource_updated`` publishes the URI; every other instance tells its own
  subscribers. ``complete_elicitation`` sends, with the completion's record
  (``UrlMode.step_completed``, so a process that never started serving sends it too), the
  step's id and principal, sealed as a task's commands are: every other instance tells its
  sessions waiting on that step (``notifications/elicitation/complete``), never another
  principal's. An instance knows its own messages (a random id in each) and skips them:
  it has delivered those already, at once.
* Every change of a task is mirrored in the store, sealed and bound to the task and its
  owner (``server.task_mirror``: a task's questions, answers and result never lie in the
  store in the clear, and only its owner's requests open it; a running task's state is a
  lease of 3 minutes its instance renews once a minute, untold, and an ended task's
  expires with the task, on every instance alike). Writes are in order and coalesced per
  task. The creation is written before the request that created the task is answered, so
  its id works on any instance at once. A state larger than 16 MiB sealed (a large
  result, say) is not mirrored, and that is logged. The writer looks at the clock at
  least once a second, and stops with the relay, once what was mirrored before is
  written and told (a second at most each).
* A state the store did not take (it is down) is written again at the writer's next look,
  in the state its task is in then, until the store takes it, and told once written (the
  state sealed then, for what is left of its ttl: a state is sealed at each change and
  renewal only, never once a second per task while the store is down): the
  end of a task that ended during an outage reaches the other instances (and their
  listeners) once the store is back, instead of the state before it until the lease ran
  out, then nothing. Those failures are logged
  when they begin, once a minute while they go on, and when writes succeed again
  (``FailureLog``), not once per state.
* Each change is also published, sealed the same way, once it is written (so a listen
  that starts after the message reads that state or a later one): a
  ``subscriptions/listen`` naming the task on another instance agrees to it (from the
  mirror) and hears it move. A state too large for a message is announced without the
  state, and the other instances read it from the mirror (a listener may then hear it
  after a later, smaller state; the last one, the end, always comes last).
* A ``tasks/*`` request for a task this instance does not hold is answered from the
  mirror: ``tasks/get`` with the mirrored state, ``tasks/update`` and ``tasks/cancel`` by
  publishing them, sealed, to the instance that holds the task, and acknowledging (as
  the task's own instance does whatever the task's state). A mirror that cannot be read
  (the store is down) is ``StoreUnavailable`` (-32603, HTTP 503, try again), never "no
  such task", which a client following the task would take as its end.
* Publishing never waits for the store; a failure is logged (``FailureLog``: when the
  failures begin, once a minute, when a message is sent again), as is a failure to read a
  mirrored state (``StoreUnavailable``). A subscription that fails is opened again, its
  failures said as ``server/relay_listening.py`` says (an outage a warning a try, a refusal
  of the store's configuration once, at ERROR, with what to grant).
* A message that is not one of ours (not JSON, a wrong shape, longer than 512 KiB, a
  seal that does not open) is ignored. A relayed ``tasks/update`` holds answers within
  the ``inputResponses`` limits of any request (``core.mrtr``): its message fits.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from mcp_elicit.core.tasks import TaskRecord, input_responses_of, task_id_of
from mcp_elicit.errors import InvalidParams, InvalidRequestState, StoreUnavailable
from mcp_elicit.sealing import StateSealer
from mcp_elicit.server import step_notices
from mcp_elicit.server.left_loops import drop
from mcp_elicit.server.relay_listening import listen
from mcp_elicit.server.relay_outages import outages
from mcp_elicit.server.task_mirror import MAX_STATE, RENEW_EVERY, TASKS, binding, kept_for
from mcp_elicit.stores.base import Store, backend_errors

if TYPE_CHECKING:
    from mcp_elicit.server.tasks import Tasks

__all__ = ["Relay"]

log = logging.getLogger("mcp_elicit.server")

#: The longest message taken: a sealed tasks/update holding the largest inputResponses
#: a request may carry (256 KiB, ``core.mrtr``) fits, with room to spare.
_MAX_MESSAGE = 512 * 1024
_INLINE = 256 * 1024 - 4096  # a sealed state up to this size travels in its message
_COMMAND_TTL = 60.0  # how long a sealed tasks/update or tasks/cancel may travel
_TICK = 1.0  # the writer looks whether the renewal is due at least this often (seconds)
_COMPLETE = "elicitation/complete"  # a URL step's completion, for the sessions waiting on it


class _Queued(NamedTuple):
    """A task's sealed state waiting for the writer."""

    sealed: bytes
    ttl: float  # from ``since``
    owner: str | None
    inline: bool  # travels in the message that tells it (else announced, to be read)
    tell: bool  # told once written (not when only renewed)
    since: float  # when it was sealed, or its ttl last counted


class Relay:
    """What this instance tells the others sharing its store, and does for them."""

    def __init__(
        self,
        server_id: str,
        deliver: Callable[[str], object],
        tasks: Tasks,
        sealer: Callable[[], StateSealer],
        clock: Callable[[], float],
        changed: Callable[[dict[str, Any]], object] = lambda state: None,
        completed: Callable[[str, str | None], object] = lambda step, principal: None,
    ) -> None:
        self.channel = (
            "mcp-elicit-relay-" + hashlib.sha256(server_id.encode("utf-8", "replace")).hexdigest()[:24]
        )
        self._deliver = deliver
        self._tasks, self._sealer, self._clock, self._changed = tasks, sealer, clock, changed
        self._completed = completed
        tasks.announce = self.written  # a new task's id works on any instance once announced
        self._me = secrets.token_hex(8)
        #: task id -> its latest sealed state, its ttl, its owner, whether the state
        #: travels in the message that tells it (else it is announced, to be read),
        #: whether it is told at all (not when it is only renewed), and the time it was
        #: sealed (its ttl counts from then)
        self._dirty: dict[str, _Queued] = {}
        #: task id -> what the store did not take (as queued, still to be told once
        #: written if any of it was), written again at the writer's next look
        self._unwritten: dict[str, _Queued] = {}
        self._write_outage, self._send_outage, self._read_outage = outages("")
        self._mirror_sealer: tuple[StateSealer, StateSealer] | None = None  # (base, mirror)
        self._reads: set[asyncio.Task[None]] = set()
        self._wrote = self._queued = 0
        self._wake: asyncio.Event | None = None  # something to write
        self._progress: asyncio.Event | None = None  # something was written
        self._writer: asyncio.Task[None] | None = None
        self._store: Store | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._sends: set[asyncio.Task[None]] = set()
        #: Set once the subscription is open (made by :meth:`start`, in its event loop).
        self.listening: asyncio.Event | None = None

    def start(self, store: Store) -> None:
        """Deliver what other instances publish on ``store``, until :meth:`stop`."""
        if self._task is None:
            self._store = store
            self._write_outage, self._send_outage, self._read_outage = outages(f" {store!r}")
            self._loop = asyncio.get_running_loop()
            self.listening = asyncio.Event()
            self._wake, self._progress = asyncio.Event(), asyncio.Event()
            self._task = asyncio.ensure_future(listen(store, self.channel, self._receive, self.listening))
            self._writer = asyncio.ensure_future(self._write(store, self._wake, self._progress))

    async def stop(self) -> None:
        """Stop, once the states mirrored so far are written and told (a second at most
        for each): the last state of a task, cancelled as the server stops or ended just
        before, reaches the other instances instead of an older one until its lease runs out."""
        await self.written()
        if self._sends:
            await asyncio.wait(list(self._sends), timeout=1.0)
        task, self._task = self._task, None
        writer, self._writer = self._writer, None
        for job in (task, writer):
            if job is not None:
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await job
        for job in (*self._sends, *self._reads):
            job.cancel()
        self._store = self.listening = self._wake = self._progress = None
        self._dirty.clear()
        self._unwritten.clear()

    def abandon(self) -> None:
        """Its event loop ended without :meth:`stop`: its tasks are let go of there
        (``server/left_loops.py``) and what it had not written is forgotten; :meth:`start`
        begins anew on another loop."""
        for job in (self._task, self._writer, *self._sends, *self._reads):
            drop(job)
        self._task = self._writer = self._loop = None
        self._sends.clear()
        self._reads.clear()
        self._store = self.listening = self._wake = self._progress = None
        self._dirty.clear()
        self._unwritten.clear()
        self._wrote = self._queued

    def publish(self, uri: str) -> None:
        """Tell the other instances, without waiting (from any thread); nothing when not
        started."""
        self._publish({"uri": uri})

    def _publish(self, body: dict[str, Any]) -> None:
        if self._store is None or self._loop is None:  # not started, or stopped
            return
        work = self._send(self._store, orjson.dumps({**body, "from": self._me}))
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not self._loop:
            asyncio.run_coroutine_threadsafe(work, self._loop)
            return
        send = asyncio.ensure_future(work)
        self._sends.add(send)
        send.add_done_callback(self._sends.discard)

    async def _send(self, store: Store, message: bytes) -> None:
        try:
            await store.publish(self.channel, message)
        except Exception as exc:  # any backend's failure: the update stays local
            self._send_outage.failed(exc)
        else:
            self._send_outage.answered()

    def _receive(self, message: bytes) -> None:
        if len(message) > _MAX_MESSAGE:
            return
        try:
            body = orjson.loads(message)
        except orjson.JSONDecodeError:
            return
        if not isinstance(body, dict) or body.get("from") == self._me:
            return
        if isinstance(body.get("uri"), str):
            self._deliver(body["uri"])
        elif body.get("op") in ("tasks/update", "tasks/cancel", "tasks/changed"):
            self._command(body)
        elif body.get("op") == _COMPLETE:
            step = step_notices.open_notice(self._mirroring(), body.get("sealed"), now=self._clock())
            if step is not None:
                self._completed(*step)

    def completion(self, elicitation_id: str, principal: str | None) -> tuple[str, bytes]:
        """The channel and message telling the other instances that ``principal``'s URL
        step ``elicitation_id`` is done, for their sessions waiting on it (sent with the
        completion's record, by ``UrlMode.step_completed``)."""
        sealed = step_notices.seal(self._mirroring(), elicitation_id, principal, now=self._clock())
        return self.channel, orjson.dumps({"op": _COMPLETE, "sealed": sealed, "from": self._me})

    # ---- tasks ---------------------------------------------------------------------------

    def mirror(self, record: TaskRecord) -> None:
        """Write the task's new state to the store (in order, coalesced; without waiting)."""
        if self._wake is None:
            return
        if self._queue(record, self._clock(), tell=True):
            self._queued += 1
            self._wake.set()

    def _renew(self, now: float) -> None:
        """Queue the states of the running tasks held here again, untold: their leases."""
        for record in self._tasks.running():
            self._queue(record, now, tell=False)

    def _rewrite(self, now: float) -> None:
        """Queue again the tasks whose state the store did not take, in their state now
        (a task no longer kept here is left to expire there). Sealed again only when it
        must be: a change since, or a renewal, queued a newer state (sealed then); else the
        state sealed before still is the task's, and is queued as it is, for what is left
        of its ttl (the seal lasts exactly that), never sealed again once a second for
        every task while the store is down."""
        unwritten, self._unwritten = self._unwritten, {}
        for task_id, (sealed, ttl, owner, inline, tell, since) in unwritten.items():
            queued = self._dirty.get(task_id)
            if queued is not None:  # a newer state: told if either is to be
                self._dirty[task_id] = queued._replace(tell=queued.tell or tell)
                continue
            record = self._tasks.record(task_id)
            if record is None:
                continue
            left = ttl - max(now - since, 0.0)
            if left > 0:
                self._dirty[task_id] = _Queued(sealed, left, owner, inline, tell, now)
            else:  # its seal ran out meanwhile (the clock jumped): sealed anew
                self._queue(record, now, tell=tell)

    def _queue(self, record: TaskRecord, now: float, *, tell: bool) -> bool:
        """Seal the task's state for the writer; False when it is too large to share."""
        ttl = kept_for(record, now)
        try:
            sealed = self._mirroring().seal(
                orjson.dumps(record.wire()), binding("mirror", record), now=now, ttl=ttl
            )
        except ValueError as exc:  # too large even for the mirror: other instances keep the last state
            if tell:  # said once, at the change; not again at each renewal
                log.warning("task %s: its state is not shared with other instances (%s)", record.task_id, exc)
            self._unwritten.pop(record.task_id, None)  # an older state is not written in its place
            return False
        queued = self._dirty.get(record.task_id)
        tell = tell or (queued is not None and queued.tell)  # a renewal never swallows a change
        self._dirty[record.task_id] = _Queued(
            sealed.encode("ascii"), ttl, record.owner, len(sealed) <= _INLINE, tell, now
        )
        return True

    def _mirroring(self) -> StateSealer:
        """The server's sealer, for task states up to ``MAX_STATE`` (following key changes)."""
        base = self._sealer()
        if self._mirror_sealer is None or self._mirror_sealer[0] is not base:
            self._mirror_sealer = (base, base.with_max_token_size(MAX_STATE))
        return self._mirror_sealer[1]

    async def visible(self, task_ids: frozenset[str], owner: str | None) -> dict[str, dict[str, Any]]:
        """The current state of those of ``task_ids`` that ``owner`` may see, held here or by
        another instance sharing the store (what a ``subscriptions/listen`` agrees to)."""
        found = self._tasks.visible(task_ids, owner)
        if self._store is not None:
            for task_id in sorted(task_ids - found.keys()):
                state = await self._mirrored(task_id, owner)
                if state is not None:
                    found[task_id] = state
        return found

    async def _mirrored(self, task_id: str, owner: str | None) -> dict[str, Any] | None:
        """The mirrored state of a task ``owner`` may see; None when there is none."""
        if self._store is None:
            return None
        try:
            found = await self._store.get(TASKS, task_id)
        except backend_errors() as exc:  # never "no such task": the client would give it up
            self._read_outage.failed(exc)
            raise StoreUnavailable() from exc
        except Exception:  # the store was closed (the server stops): as if there were none
            return None
        self._read_outage.answered()
        return (
            None if found is None else self._open("mirror", task_id, owner, found.decode("ascii", "replace"))
        )

    def _open(self, use: str, task_id: str, owner: str | None, sealed: object) -> Any:
        """What ``sealed`` holds for that use, task and owner; None when it does not open."""
        try:
            return orjson.loads(
                self._mirroring().open(
                    sealed, binding(use, TaskRecord(task_id, owner, 0.0, None, 0)), now=self._clock()
                )
            )
        except (InvalidRequestState, orjson.JSONDecodeError):
            return None

    async def _reread(self, task_id: str, owner: str | None) -> None:
        try:
            state = await self._mirrored(task_id, owner)
        except StoreUnavailable:  # logged; the next change or renewal tells again
            return
        if isinstance(state, dict):
            self._changed(state)

    async def written(self) -> None:
        """Wait (a second at most) until every state mirrored so far is in the store."""
        progress, target = self._progress, self._queued
        if progress is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                while self._wrote < target:
                    progress.clear()
                    await progress.wait()

    async def _write(self, store: Store, wake: asyncio.Event, progress: asyncio.Event) -> None:
        renewed = self._clock()
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_TICK):  # not wait_for: see ``asking.answer_within``
                    await wake.wait()
            wake.clear()
            now = self._clock()
            if not renewed <= now < renewed + RENEW_EVERY:  # due (or the clock went back)
                renewed = now
                self._renew(now)
            self._rewrite(now)
            batch, self._dirty, upto = self._dirty, {}, self._queued
            failed = False  # once a write fails, the store is not tried again before the next look
            for task_id, queued in batch.items():
                sealed, ttl, owner, inline, tell, _ = queued
                if not failed:
                    try:
                        await store.put(TASKS, task_id, sealed, ttl=ttl)
                    except Exception as exc:  # any backend's failure: written again at the next look
                        self._write_outage.failed(exc)
                        failed = True
                    else:
                        self._write_outage.answered()
                if failed:  # told once written: a message sent now is lost as the write was
                    self._unwritten[task_id] = queued
                    continue
                if not tell:  # renewed: nothing changed
                    continue
                # Told once written: a listen that starts elsewhere after this message was
                # sent reads this state, or a later one, from the mirror.
                told: dict[str, Any] = {"op": "tasks/changed", "task": task_id, "owner": owner}
                if inline:  # else too large for a message: read from the mirror
                    told["sealed"] = sealed.decode("ascii")
                self._publish(told)
            self._wrote = upto
            progress.set()

    async def elsewhere(
        self, method: str, params: Mapping[str, Any], owner: str | None
    ) -> dict[str, Any] | None:
        """Answer a ``tasks/*`` request for a task another instance holds; None when no
        instance sharing the store holds one by that id for ``owner``."""
        try:
            task_id = task_id_of(params)
            responses = input_responses_of(params) if method == "tasks/update" else {}
        except InvalidParams:  # a bad request: the local answer says what
            return None
        state = await self._mirrored(task_id, owner)
        if not isinstance(state, dict):
            return None  # unknown, or someone else's: the local answer stands ("not yours")
        if method == "tasks/get":
            return state
        probe = TaskRecord(task_id, owner, 0.0, None, 0)
        # sealed for messages, not for a requestState: answers within the inputResponses
        # limits may be larger than a requestState carries
        command = self._mirroring().seal(
            orjson.dumps(responses), binding(method, probe), now=self._clock(), ttl=_COMMAND_TTL
        )
        self._publish({"op": method, "task": task_id, "owner": owner, "sealed": command})
        return {}

    def _command(self, body: Mapping[str, Any]) -> None:
        task_id, owner, op = body.get("task"), body.get("owner"), body["op"]
        if not isinstance(task_id, str) or not (owner is None or isinstance(owner, str)):
            return
        if op == "tasks/changed":
            if self._tasks.holds(task_id):  # its own instance told its listeners already
                return
            if "sealed" not in body:  # a state too large for a message: it is in the mirror
                read = asyncio.ensure_future(self._reread(task_id, owner))
                self._reads.add(read)
                read.add_done_callback(self._reads.discard)
                return
            state = self._open("mirror", task_id, owner, body.get("sealed"))
            if isinstance(state, dict):
                self._changed(state)
            return
        responses = self._open(op, task_id, owner, body.get("sealed"))
        try:
            if op == "tasks/update" and isinstance(responses, dict):
                self._tasks.update(task_id, owner, responses)
            elif op == "tasks/cancel" and responses is not None:
                self._tasks.cancel(task_id, owner)
        except InvalidParams:
            return  # not held here: the instance that holds it acts
