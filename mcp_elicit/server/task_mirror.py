"""How a task's state lies in the store shared by instances (``server.relay`` writes it):
under which namespace, sealed to what, and for how long.

Rules:

* A mirrored state (and a relayed ``tasks/update`` or ``tasks/cancel``) is sealed by the
  server's key ring and bound to its use, the task and its owner (``binding``): it opens
  for that task's owner only, and a state never opens as a command nor one command as
  another.
* A state is mirrored up to ``MAX_STATE`` (16 MiB) sealed; a larger one is not.
* The state of a running task is a lease (``LEASE``, 3 minutes from its last write): its
  own instance writes it again every ``RENEW_EVERY`` (a minute), so a task that waits
  for hours stays known everywhere, and the tasks of an instance that died are unknown
  everywhere once their lease runs out.
* The state of an ended task expires with the task, exactly as its own instance keeps it
  (at least ``SHORTEST``: a task kept for 0 s still overwrites its earlier state, which
  would otherwise outlive it); an ended task without a ttl is kept ``FOREVER`` (a week).
"""

from __future__ import annotations

from typing import Final

from mcp_elicit.core.tasks import TaskRecord
from mcp_elicit.sealing import Binding

__all__ = ["FOREVER", "LEASE", "MAX_STATE", "RENEW_EVERY", "SHORTEST", "TASKS", "binding", "kept_for"]

TASKS: Final = "tasks"  # the store namespace of the mirrored tasks
MAX_STATE: Final = 16 * 1024 * 1024  # the largest sealed task state mirrored
FOREVER: Final = 7 * 86400.0  # the mirror of an ended task without a ttl
RENEW_EVERY: Final = 60.0  # how often an instance writes the states of its running tasks again
LEASE: Final = 3 * RENEW_EVERY  # how long the state of a running task is kept from its last write
SHORTEST: Final = 0.001  # the mirror of a task forgotten as it ends


def kept_for(record: TaskRecord, now: float) -> float:
    """How long the mirror keeps the state ``record`` is in, from ``now``."""
    if not record.terminal:  # running: a lease its instance renews (see ``Relay._renew``)
        return LEASE
    if record.expires is None:  # ended, without a ttl
        return FOREVER
    # Ended: exactly as long as its own instance keeps it (a task kept for 0 s still
    # overwrites its earlier state, which would otherwise outlive it).
    return max(record.expires - now, SHORTEST)


def binding(use: str, record: TaskRecord) -> Binding:
    """What a sealed task state or command is bound to: its use, the task, its owner."""
    return Binding(f"relay/{use}", record.task_id, b"", record.owner)
