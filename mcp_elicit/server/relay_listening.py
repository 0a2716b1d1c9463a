"""How the relay between instances hears the others (``server/relay.py``): one
subscription to its channel on the shared store, opened again whenever it fails.

Rules:

* A subscription that fails because the store is down is opened again after 1, 2, 4... up
  to ``RETRY_MOST`` seconds, each failure a warning; what is published meanwhile is lost,
  as Redis pub/sub loses what is published while a subscriber is away.
* A subscription that works again after failures is said at INFO, so that the operator's
  last word on it is not that the instances are cut off.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable

from mcp_elicit.stores.base import Store

__all__ = ["listen"]

log = logging.getLogger("mcp_elicit.server")

#: Seconds between the tries of a failed subscription: from ``RETRY_FIRST``, doubled each
#: time up to ``RETRY_MOST``.
RETRY_FIRST = 1.0
RETRY_MOST = 30.0


async def listen(
    store: Store, channel: str, receive: Callable[[bytes], None], listening: asyncio.Event
) -> None:
    """Give ``receive`` each message on ``channel``, ``listening`` set while subscribed, for ever."""
    delay = RETRY_FIRST
    failed = False  # the last subscription failed: say when one works again
    while True:
        try:
            async with store.subscribe(channel) as subscription:
                listening.set()
                delay = RETRY_FIRST
                if failed:
                    log.info("messages from other instances heard again (%r)", store)
                    failed = False
                while True:
                    message = await subscription.next(math.inf)
                    if message is not None:
                        receive(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the store is down or closed: try again later
            listening.clear()
            failed = True
            log.warning("messages from other instances stopped (%s); retrying in %.0f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MOST)
