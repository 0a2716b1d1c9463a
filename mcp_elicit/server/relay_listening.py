"""How the relay between instances hears the others (``server/relay.py``): one
subscription to its channel on the shared store, opened again whenever it fails.

Rules:

* A subscription that fails because the store is down is opened again after 1, 2, 4... up
  to ``RETRY_MOST`` seconds, each failure a warning; what is published meanwhile is lost,
  as Redis pub/sub loses what is published while a subscriber is away.
* A store that refuses the subscription for its configuration (an ACL user without the
  store's channels, a password changed: ``stores.base.misconfigured``) is no outage:
  waiting does not mend it. It is said once, at ERROR, in the store's own words (which say
  what to grant), then tried again every ``RETRY_MOST`` seconds without a word more, until
  it works or the store fails otherwise.
* A subscription that works again after failures is said at INFO, so that the operator's
  last word on it is not that the instances are cut off.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable

from mcp_elicit.stores.base import Store, failure_text, misconfigured

__all__ = ["listen"]

log = logging.getLogger("mcp_elicit.server")

#: Seconds between the tries of a failed subscription: from ``RETRY_FIRST``, doubled each
#: time up to ``RETRY_MOST`` (a refusal of the configuration: ``RETRY_MOST`` at once).
RETRY_FIRST = 1.0
RETRY_MOST = 30.0


async def listen(
    store: Store, channel: str, receive: Callable[[bytes], None], listening: asyncio.Event
) -> None:
    """Give ``receive`` each message on ``channel``, ``listening`` set while subscribed, for ever."""
    delay = RETRY_FIRST
    failed = False  # the last subscription failed: say when one works again
    refused = False  # a refusal of the configuration, said: nothing more until it ends
    while True:
        try:
            async with store.subscribe(channel) as subscription:
                listening.set()
                delay = RETRY_FIRST
                if failed:
                    log.info("messages from other instances heard again (%r)", store)
                    failed = refused = False
                while True:
                    message = await subscription.next(math.inf)
                    if message is not None:
                        receive(message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the store is down, closed or refusing: try again later
            listening.clear()
            failed = True
            if misconfigured(exc):
                if not refused:
                    log.error(
                        "messages from other instances cannot be heard: the store %r refuses the "
                        "relay's subscription, which waiting does not mend: %s. Until someone fixes "
                        "that, resource updates and task changes made on other instances are not "
                        "heard here; the subscription is tried again every %g s without a word more",
                        store,
                        failure_text(exc),
                        RETRY_MOST,
                    )
                    refused = True
                else:
                    log.debug("the store still refuses the relay's subscription: %s", failure_text(exc))
                delay = RETRY_MOST
            else:
                refused = False
                log.warning("messages from other instances stopped (%s); retrying in %.0f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MOST)
