"""Handlers written as plain functions (``def``) run in worker threads, so one that blocks
(``time.sleep``, a slow database call) holds up its own request only.

Rules:

* An ``async def`` handler runs on the event loop as it always did: no thread, no extra
  ``await``. Only a plain function is handed to a worker thread (``run_sync``).
* At most ``MAX_WORKERS`` functions run at once (as many as asyncio's default executor
  allows: ``min(32, CPUs + 4)``); more wait their turn, in order, while the event loop
  goes on serving everything else. When every worker is held and a function has waited
  its turn ``STALL_WARNING`` seconds, a warning says so, once per stall (until a worker
  frees up), naming the pool's size, how long it has been full and what waits.
* A function sees the contextvars of its request, as a copy: what it sets stays in its
  thread.
* A request cancelled while its function runs ends at once and nothing is ever sent for
  it. A thread cannot be interrupted: the function runs on to its end, and what it
  returns is dropped (what it raises is logged). One cancelled before its turn never runs,
  and lets go of its arguments and context at once: while every worker is held (by
  functions that never return, say), the requests given up meanwhile keep nothing alive.
* The threads are daemon threads of this module's own pool, not the default executor's,
  so a server that stops (stdin closed, a signal) exits without waiting for a function
  that never returns.
* Such a function's ``Context`` is a ``ThreadContext``: it reads what the request carries
  (``capabilities``, ``can_elicit()``, ``principal``, ``remember``...), but whatever must
  be awaited (``elicit``, ``sample``, ``report_progress``, ``info``...) raises
  ``TypeError`` saying to declare the handler ``async def``, rather than handing back a
  question or coroutine that silently does nothing. A plain function that returns an
  awaitable (a decorator hid an ``async def``) fails the same way (``run_handler``).
* What a function calls on the ``Server`` that tells clients something (registering a
  tool, ``notify_resource_updated``...) must run on the event loop: such methods are
  marked ``@on_loop``, and called from a worker thread they are handed to the loop, the
  thread waiting for their result. Called from any other thread while the server serves
  (a webhook's, a timer's), they are handed to the loop the server serves on, the same
  way (``complete_elicitation`` hands itself there without waiting).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NoReturn, ParamSpec, TypeVar

from mcp_elicit.server.context import Context

__all__ = [
    "MAX_WORKERS",
    "STALL_WARNING",
    "ThreadContext",
    "on_loop",
    "on_request_loop",
    "run_handler",
    "run_sync",
]

log = logging.getLogger("mcp_elicit.server")

P = ParamSpec("P")
T = TypeVar("T")

#: How many plain-function handlers run at once (asyncio's default executor's bound).
MAX_WORKERS: Final = min(32, (os.cpu_count() or 1) + 4)

#: How long a function waits its turn, every worker held, before the stall is logged (s).
STALL_WARNING = 10.0

#: In a worker thread: the event loop its request runs on, and that loop's thread.
_HOME: contextvars.ContextVar[tuple[asyncio.AbstractEventLoop, int] | None] = contextvars.ContextVar(
    "mcp_elicit_handler_loop", default=None
)


@dataclass(slots=True)
class _Job:
    future: concurrent.futures.Future[Any]
    context: contextvars.Context
    home: tuple[asyncio.AbstractEventLoop, int]
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return  # its request was cancelled before its turn
        try:
            result = self.context.run(self._call)
        except StopIteration as exc:  # asyncio cannot put it in a future: it would never resolve
            stopped = RuntimeError("the function raised StopIteration")
            stopped.__cause__ = exc
            self.future.set_exception(stopped)
        except BaseException as exc:
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)

    def _call(self) -> Any:
        _HOME.set(self.home)
        return self.fn(*self.args, **self.kwargs)

    def drop(self) -> None:
        """Let go of the call (cancelled before its turn, it never runs): it may wait in
        the queue for a long time yet."""
        self.fn, self.args, self.kwargs, self.context = _never, (), {}, _NO_CONTEXT


def _never() -> None:
    """What a job that was cancelled before its turn would call (it never does)."""


_NO_CONTEXT: Final = contextvars.Context()


class _Workers:
    """Daemon threads taking jobs in order; a new one starts while none is idle, up to
    ``most``. They live as long as the process (as the default executor's do)."""

    def __init__(self, most: int) -> None:
        self.most = most
        self._reset()

    def _reset(self) -> None:
        """No threads, no jobs: at start, and in a forked child (which has no threads)."""
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        #: Functions running now; since when all ``most`` threads have been (None: not).
        self._running = 0
        self.full_since: float | None = None
        self._warned = False

    def submit(self, job: _Job) -> None:
        with self._lock:
            self._jobs.put(job)
            if self._idle:
                self._idle -= 1
            elif self._threads < self.most:
                self._threads += 1
                name = f"mcp-elicit handler {self._threads}"
                threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                self._running += 1
                if self._running >= self.most and self.full_since is None:
                    self.full_since, self._warned = time.monotonic(), False
            job.run()
            del job  # nothing of a finished request is kept while waiting for the next
            with self._lock:
                self._idle += 1
                self._running -= 1
                self.full_since = None

    def stalled(self, what: str) -> None:
        """``what`` has waited its turn for long: say so, once for this stall."""
        with self._lock:
            since = self.full_since
            if since is None or self._warned:
                return
            self._warned = True
        log.warning(
            "all %d worker threads for plain-function (def) handlers have been busy for %.0f s; "
            "%s waits its turn, and so will every later one until a function returns. A "
            "function that never returns holds its thread for good: give what it blocks on a "
            "timeout, or declare it 'async def'",
            self.most,
            time.monotonic() - since,
            what,
        )


_WORKERS = _Workers(MAX_WORKERS)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WORKERS._reset)


async def run_sync(what: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker thread, with a copy of the caller's contextvars;
    ``what`` names it in the log (``"tool 'book'"``). Cancelled, this ends at once."""
    loop = asyncio.get_running_loop()
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    home = (loop, threading.get_ident())
    job = _Job(future, contextvars.copy_context(), home, fn, args, kwargs)
    _WORKERS.submit(job)
    waited = asyncio.wrap_future(future)
    try:
        if _WORKERS.full_since is not None:  # its turn may be long in coming: watched
            done, _ = await asyncio.wait((waited,), timeout=STALL_WARNING)
            if not done and not future.running():
                _WORKERS.stalled(what)
        return await waited
    except asyncio.CancelledError:
        waited.cancel()
        if future.cancel():  # not started: it never will
            job.drop()
        else:
            future.add_done_callback(functools.partial(_abandoned, what))
        raise


async def run_handler(
    what: str, fn: Callable[..., Any], kwargs: dict[str, Any], context_param: str | None
) -> Any:
    """A plain-function handler's value: ``fn(**kwargs)`` in a worker thread, its
    ``Context`` (``kwargs[context_param]``) given as a ``ThreadContext``; ``TypeError`` when
    it returns an awaitable, which only an ``async def`` handler may."""
    if context_param is not None:
        kwargs[context_param] = ThreadContext.of(kwargs[context_param], what)
    value = await run_sync(what, fn, **kwargs)
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never run: no "was never awaited" warning later
        raise TypeError(
            f"{what} is a plain function (def) that returned {_a(value)}; declare it 'async def' "
            "(a decorator must keep it one: inspect.markcoroutinefunction, or an async wrapper)"
        )
    return value


def _a(value: object) -> str:
    return "a coroutine" if inspect.iscoroutine(value) else f"an awaitable {type(value).__name__}"


class ThreadContext(Context):
    """The ``Context`` of a plain-function handler: the request's, minus what must be
    awaited (each such method raises ``TypeError`` naming the handler and the method)."""

    _handler: str

    @classmethod
    def of(cls, ctx: Context, what: str) -> ThreadContext:
        """``ctx`` (its state shared, not copied) for the plain function ``what``."""
        if isinstance(ctx, ThreadContext):
            return ctx
        thread_ctx = cls.__new__(cls)
        vars(thread_ctx).update(vars(ctx))
        thread_ctx._handler = what
        return thread_ctx


def _awaited(name: str, method: Callable[..., Any]) -> bool:
    """Whether ``Context.name`` must be awaited: a coroutine function, or one returning a
    ``Question`` (asked only when awaited)."""
    if inspect.iscoroutinefunction(method):
        return True
    returns = inspect.signature(method).return_annotation
    return isinstance(returns, str) and returns.startswith("Question[")


def _refuse(name: str) -> Callable[..., NoReturn]:
    def refuse(self: ThreadContext, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"{self._handler} is a plain function (def), so it runs in a worker thread and cannot use "
            f"ctx.{name}(), which must be awaited; declare it 'async def' and 'await ctx.{name}(...)'"
        )

    refuse.__name__ = refuse.__qualname__ = name
    return refuse


def awaited_methods(cls: type) -> tuple[str, ...]:
    """The public methods of ``cls`` that must be awaited, its bases' (mixins) included: each
    judged as the class resolves it (a base's method redefined is judged as redefined)."""
    members: dict[str, Any] = {}
    for base in reversed(cls.__mro__[:-1]):  # every class but object, the nearest last
        members.update(vars(base))
    return tuple(
        name
        for name, member in members.items()
        if not name.startswith("_") and inspect.isfunction(member) and _awaited(name, member)
    )


#: The ``Context`` methods a plain function cannot use.
AWAITED: Final = awaited_methods(Context)
for _name in AWAITED:
    setattr(ThreadContext, _name, _refuse(_name))


def _abandoned(what: str, future: concurrent.futures.Future[Any]) -> None:
    """A function whose request was cancelled has ended: what it raised is logged."""
    if not future.cancelled() and future.exception() is not None:
        log.warning("%s, whose request was cancelled, failed later: %r", what, future.exception())


def on_loop(method: Callable[P, T]) -> Callable[P, T]:
    """``method`` (of a ``Server``), run on an event loop that owns what it touches, the
    calling thread waiting for its result: called from a handler's worker thread, on the
    loop of the request; from any other thread while the server serves
    (``Lifecycle._serving_loop``: a sync webhook's thread, a ``threading.Timer``, a thread
    running an event loop of its own), on the loop the server serves on. Called on that
    loop, or while the server is not started anywhere, it runs as it is; so too when the
    serving loop stops before taking it (it never ran there)."""
    return _handed(method, serving=True)


def on_request_loop(method: Callable[P, T]) -> Callable[P, T]:
    """``method``, run on the event loop of the request when called from a handler's
    worker thread (which waits for its result); called anywhere else, as it is (the
    method hands itself to the loop the server serves on, without waiting)."""
    return _handed(method, serving=False)


def _handed(method: Callable[P, T], *, serving: bool) -> Callable[P, T]:
    @functools.wraps(method)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        home = _HOME.get()
        if home is not None and home[1] != threading.get_ident():
            return _on(home[0], functools.partial(method, *args, **kwargs))
        loop = _serving(args[0]) if serving and home is None and args else None
        if loop is not None:
            try:
                return _on(loop, functools.partial(method, *args, **kwargs))
            except _Stopped:  # it never ran there: as if the server were not started
                pass
        return method(*args, **kwargs)

    return run


def _serving(server: object) -> asyncio.AbstractEventLoop | None:
    """The loop ``server`` serves on, when it is not the running one (None: run here)."""
    serving_loop = getattr(server, "_serving_loop", None)
    loop = serving_loop() if callable(serving_loop) else None
    if loop is None:
        return None
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    return None if loop is running else loop


class _Stopped(RuntimeError):
    """The loop a call was handed to stopped before it took it: it never ran."""


def _on(loop: asyncio.AbstractEventLoop, call: Callable[[], T]) -> T:
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        if done.set_running_or_notify_cancel():
            try:
                done.set_result(call())
            except BaseException as exc:
                done.set_exception(exc)

    stopped = _Stopped("the server's event loop has stopped; nothing can be told to clients now")
    try:
        loop.call_soon_threadsafe(run)
    except RuntimeError:  # the loop is closed
        raise stopped from None
    while True:
        try:
            return done.result(timeout=1.0)
        except TimeoutError:
            if (loop.is_closed() or not loop.is_running()) and done.cancel():
                raise stopped from None
