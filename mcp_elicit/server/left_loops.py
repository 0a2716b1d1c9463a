"""A ``Server`` whose event loop ended while it was started, without its stop: a test that
failed part way (a test framework closes each test's loop), an ``asyncio.run`` that ended
while the server served (a ``KeyboardInterrupt``, a ``main()`` that never stopped it), a
loop on a thread of its own stopped and closed. Used again on another loop (a module's
``app = Server(...)`` served by ``connect_memory`` in each of several tests, or
``asyncio.run(main())`` called twice), it starts as it would the first time.

Rules:

* The loop a server's starts are held on is the one its last start ran on. A start, a
  stop or a ``begin_stop`` on another loop, while starts are held (or a stop's release is
  under way) there, looks at that loop:

  - it still runs (on another thread): ``ServedElsewhere`` (a ``RuntimeError``; an
    HTTP app's lifespan start-up reports it failed), saying that a server serves on
    one event loop at a time and what to do (stop it there first, or give each loop a
    ``Server`` of its own). Nothing is shared between two loops in silence: the relay,
    the tasks and the lifespan's value (a pool) belong to one loop.
  - it is closed, or no longer runs: what it held is let go of, as a stop would have,
    and the start is a first start (the configuration checked and said again, the
    ``lifespan`` entered again, the relay listening again). Every start held is
    forgotten, and so are the transports stopping; the sessions and subscriptions end;
    the tasks still running end cancelled ("The server is shutting down"); the relay
    forgets what it had not written; the stores the server opened itself are closed
    (on the new loop; one that cannot be closed there is dropped); the ``lifespan`` is
    held by nobody, its value gone.

* Quietly: a task that loop left pending (the relay's, a task's handler, the
  lifespan's own, a request's, an in-memory client's: any whose code is this package's)
  is let go of without a word when that loop is closed (``stores.closed_loops``: no
  "Task was destroyed but it is pending!", no "Event loop is closed"), or, the server's
  own, cancelled there when it is not (it may run again, and then the task unwinds),
  never reported when collected. A task of the application's own is left as it is. A lifespan whose loop closed
  before it was exited is exited as far as it goes without awaiting (what its ``finally``
  does before its first ``await``); ``asyncio.run`` exits it before it closes its loop.
* Nothing here runs per request: it is looked at once per start, stop and ``begin_stop``.
* The loop held is also where ``complete_elicitation`` made on any other thread is handed
  (``Lifecycle._serving_loop``: while a start, or a stop's release, is held there and it
  runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from mcp_elicit.stores.closed_loops import let_go, let_go_of_code

__all__ = ["ServedElsewhere", "drop", "ended", "let_go_of_package"]

#: This package's directory: what a closed loop left of it is let go of.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ServedElsewhere(RuntimeError):
    """A start (or stop) refused: the server is started on another event loop, which still
    runs. A ``RuntimeError``; a transport's start-up tells its host it failed, saying so."""


def ended(loop: asyncio.AbstractEventLoop | None, name: str) -> bool:
    """Whether ``loop``, the one a server's starts are held on, is left behind: it is not
    the running loop and it does not run (closed, or stopped). ``RuntimeError`` when it
    runs, on another thread, saying what to do (server ``name``)."""
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:  # a begin_stop from outside any loop: nothing to compare with
        return False
    if loop is None or loop is here:
        return False
    if loop.is_running():
        raise ServedElsewhere(elsewhere(name))
    return True


def elsewhere(name: str) -> str:
    """What a start on a second event loop is told while the first still serves."""
    return (
        f"server {name!r} is already started on another event loop, which still runs: a Server "
        "serves on one event loop at a time (its relay, tasks and lifespan belong to that "
        "loop). Stop it there first (await server.stop() on that loop, or leave the "
        "transport's block), or give each event loop a Server of its own"
    )


def drop(task: asyncio.Future[Any] | None) -> None:
    """Let go of ``task``, pending on a loop that no longer runs, without a word: closed, its
    coroutine is closed (``let_go``); else cancelled there, for when that loop runs again."""
    if task is None or task.done():
        return
    if task.get_loop().is_closed():
        let_go(task)
        return
    with contextlib.suppress(AttributeError):  # never reported when collected, unrun
        task._log_destroy_pending = False  # type: ignore[attr-defined]
    task.cancel()  # queued on its loop, which is not closed: nothing raised here


def let_go_of_package(loop: asyncio.AbstractEventLoop) -> None:
    """Let go of every task of this package ``loop`` left pending, once it is closed."""
    let_go_of_code(loop, _PACKAGE)
