"""What the relay between instances says when their shared store fails (``server.relay``):
one ``FailureLog`` each for the writes of task states, the messages sent and the reads of
other instances' tasks, so a failure is logged when it begins, once a minute while it goes
on, and when the store answers again, never once per state or message. Each says what the
failure costs (an older state elsewhere, updates not heard, 503 to try again).
"""

from __future__ import annotations

import logging

from mcp_elicit.stores.failure_log import FailureLog

__all__ = ["outages"]

log = logging.getLogger("mcp_elicit.server")


def outages(where: str) -> tuple[FailureLog, FailureLog, FailureLog]:
    """How the store ``where`` failing is said (``FailureLog``): for the writes of task
    states, for the messages sent, and for the reads of other instances' tasks."""
    return (
        FailureLog(
            log,
            f"task states could not be written to the store{where}: other instances answer for "
            "those tasks with an older state until they are written again",
            f"task states are written to the store{where} again",
            level=logging.WARNING,
        ),
        FailureLog(
            log,
            f"messages to the other instances could not be sent through the store{where} (resource "
            "updates and task changes are not heard there)",
            f"messages to the other instances are sent through the store{where} again",
            level=logging.WARNING,
        ),
        FailureLog(
            log,
            f"the states of tasks held by other instances could not be read from the store{where} "
            "(their tasks/* requests answer 503, try again)",
            f"the states of tasks held by other instances are read from the store{where} again",
        ),
    )
