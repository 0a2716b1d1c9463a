"""Saving the secret a person typed into a URL-mode page: one form of a flow is saved.

Rules:

* Two forms of one flow sent at once (two tabs, Save pressed twice; on one instance or on
  two sharing a store) both find the flow pending. The first to set the flow's save
  marker (``Store.add`` in ``used``: atomic on every backend, across instances) saves its
  value and ends the flow ``complete``. The other writes nothing: it waits (at most
  ``SAVE_WAIT`` seconds) for the flow to end and is answered as a form that came after it
  ended (409, what it sent not used), never "Saved".
* The marker lives as long as the flow. A save that fails (the store down) takes it away
  again, so that the form can be sent again; when even that fails, the flow takes no
  value until it expires, and the person starts again.
* A flow that ended otherwise while its value was saved (declined in another tab, the
  request gave up, it expired) keeps nothing: the value is forgotten again.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

from mcp_elicit.server.flows import Flow
from mcp_elicit.server.url_mode import UrlMode
from mcp_elicit.stores.base import backend_errors

__all__ = ["SAVE_WAIT", "save_secret"]

#: Seconds a form that lost the race waits for the winner's save to end the flow.
SAVE_WAIT: Final = 5.0

log = logging.getLogger("mcp_elicit.pages")


async def save_secret(url_mode: UrlMode, flow: Flow, value: bytes) -> bool:
    """Keep ``value`` as the secret ``flow`` asks for and end the flow ``complete``; True
    when this call did. False when another form of the flow is saved, or the flow ended
    otherwise: nothing of ``value`` is kept, and ``flow`` shows how it ended (``pending``
    still when the other save did not end it within ``SAVE_WAIT`` seconds: its late page
    then says only that the request had ended)."""
    store = url_mode.guarded
    marker = f"page-save:{flow.id}"
    if not await store.add("used", marker, b"1", ttl=max(flow.expires - url_mode.clock(), 1.0)):
        log.info("flow %s: another form of it is saved; this one's value is not used", flow.id[:6])
        latest = await url_mode.flows.wait(flow.id, SAVE_WAIT)
        if latest is not None:
            flow.status, flow.detail = latest.status, latest.detail
        return False
    try:
        await url_mode.vault.put("vault", flow.name, flow.principal, value)
        ended = await url_mode.flows.finish(flow, "complete")
    except BaseException:
        with contextlib.suppress(*backend_errors()):
            await store.delete("used", marker)
        raise
    if not ended and flow.status != "complete":  # it ended otherwise while the value was saved
        await url_mode.vault.forget("vault", flow.name, flow.principal)
    return ended
