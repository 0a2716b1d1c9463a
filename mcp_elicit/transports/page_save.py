"""Keeping what a person gave on a URL-mode flow's pages (the secret typed into its form,
the tokens its sign-in brought back): of all that comes for one flow, one is kept.

Rules:

* Two answers for one flow at once (two tabs, Save pressed twice, the sign-in link opened
  twice and both sign-ins coming back; on one instance or on two sharing a store) both
  find the flow pending. The first to set the flow's save marker (``Store.add`` in
  ``used``: atomic on every backend, across instances) keeps its value and ends the flow
  ``complete``. The other writes nothing: it waits (at most ``SAVE_WAIT`` seconds) for the
  flow to end and is answered as a form that came after it ended (409, what it sent not
  used), never "Saved" or "Connected".
* The marker lives as long as the flow. A save that fails (the store down) takes it away
  again, so that the form can be sent again; when even that fails, the flow takes no
  value until it expires, and the person starts again.
* A flow that ended otherwise while its value was saved (declined in another tab, the
  request gave up, it expired) keeps nothing: the value is forgotten again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from mcp_elicit.server.flows import Flow
from mcp_elicit.server.url_mode import UrlMode
from mcp_elicit.stores.base import backend_errors

__all__ = ["SAVE_WAIT", "save_once", "save_secret"]

#: Seconds an answer that lost the race waits for the winner's save to end the flow.
SAVE_WAIT: Final = 5.0

log = logging.getLogger("mcp_elicit.pages")


async def save_secret(url_mode: UrlMode, flow: Flow, value: bytes) -> bool:
    """Keep ``value`` as the secret ``flow`` asks for (``save_once``)."""
    name, principal = flow.name, flow.principal
    return await save_once(
        url_mode,
        flow,
        keep=lambda: url_mode.vault.put("vault", name, principal, value),
        drop=lambda: url_mode.vault.forget("vault", name, principal),
    )


async def save_once(
    url_mode: UrlMode,
    flow: Flow,
    *,
    keep: Callable[[], Awaitable[None]],
    drop: Callable[[], Awaitable[object]],
) -> bool:
    """Keep this answer to ``flow`` (``keep`` writes it, ``drop`` forgets it again) and end
    the flow ``complete``; True when this call did. False when another answer to the flow
    is kept, or the flow ended otherwise: nothing of this one is kept, and ``flow`` shows
    how it ended (``pending`` still when the other save did not end it within
    ``SAVE_WAIT`` seconds: its late page then says only that the request had ended)."""
    store = url_mode.guarded
    marker = f"page-save:{flow.id}"
    if not await store.add("used", marker, b"1", ttl=max(flow.expires - url_mode.clock(), 1.0)):
        log.info("flow %s: another answer to it is kept; this one is not used", flow.id[:6])
        latest = await url_mode.flows.wait(flow.id, SAVE_WAIT)
        if latest is not None:
            flow.status, flow.detail = latest.status, latest.detail
        return False
    try:
        await keep()
        ended = await url_mode.flows.finish(flow, "complete")
    except BaseException:
        with contextlib.suppress(*backend_errors()):
            await store.delete("used", marker)
        raise
    if not ended and flow.status != "complete":  # it ended otherwise while the value was saved
        await drop()
    return ended
