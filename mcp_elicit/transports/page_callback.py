"""The way back from a provider's sign-in page (``GET /mcp-elicit/oauth/callback``), for
``pages``.

Rules:

* The request is found by its ``state``; the browser's flow cookie and the user are checked
  *before* the state is used up (so a refused browser burns nothing), then the state is
  taken (once), the code exchanged with the verifier, the tokens stored and the flow
  finished: ``complete``; ``access_denied`` is ``declined``; any other failure ``failed``,
  logged as a warning with the provider's ``error_description`` (escaped, cut at 300
  characters), which the page never shows. Tokens that come once the flow ended are not
  kept; of two sign-ins of one flow coming back at once, one's tokens are kept
  (``page_save``) and the other is answered as a late form (409).
* A state taken is remembered (its digest, naming the flow, for the flow's life), so that
  the browser that signed in, reloading the callback whose answer it never got (a dropped
  connection), is shown how the flow ended ("Connected"), not told the sign-in cannot be
  used (while the first callback's token request is still under way: to reload in a
  moment); any other browser still gets that refusal.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from mcp_elicit.errors import ConfigError, OAuthError
from mcp_elicit.server.flows import Flow, FlowStatus
from mcp_elicit.server.url_mode import UrlMode
from mcp_elicit.transports.page_html import done_page
from mcp_elicit.transports.page_save import save_once
from mcp_elicit.url_redaction import redact_urls

__all__ = ["callback_page"]

log = logging.getLogger("mcp_elicit.pages")

_ERROR_CODE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: Where a taken state's digest names its flow.
_USED: Final = "oauth-used"


def _used_key(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8", "replace")).hexdigest()[:40]


def callback_page(
    url_mode: UrlMode,
    asking: str,
    refuse: Callable[[int, str, str], HTMLResponse],
    who_may_act: Callable[[Request, Flow], Awaitable[Response | None]],
    owns: Callable[[Request, Flow], bool],
) -> Callable[[Request], Awaitable[Response]]:
    """The callback page of ``url_mode``'s sign-ins; ``owns``: whether the request
    carries the flow's cookie."""

    async def again(request: Request, state: str) -> Response | None:
        """The flow's done page, to the browser that signed in reloading its callback (or,
        while that first callback's token request is still under way, to wait)."""
        if not state or len(state) > 512:
            return None
        flow_id = await url_mode.guarded.get(_USED, _used_key(state))
        flow = await url_mode.flows.get(flow_id.decode("ascii", "replace")) if flow_id else None
        if flow is None or not owns(request, flow):
            return None
        if await who_may_act(request, flow) is not None:
            return None
        if not flow.done:
            return refuse(
                409,
                "Still connecting",
                f"Your {flow.name} sign-in is being completed. Reload this page in a moment.",
            )
        return done_page(asking, flow)

    async def callback(request: Request) -> Response:
        """The provider sends the browser back here with a code (or an error)."""
        params = request.query_params
        state = params.get("state") or ""
        pending = await url_mode.oauth.pending(state)
        if pending is None:
            shown = await again(request, state)
            if shown is not None:
                return shown
            return refuse(
                403,
                "This sign-in cannot be used",
                "It was already used or has expired. Go back to your application and try again.",
            )
        flow = await url_mode.flows.get(pending.flow_id)
        if flow is None or flow.done:
            return refuse(410, "This request has ended", "Go back to your application and try again.")
        if not owns(request, flow):
            log.warning("flow %s: refused a sign-in callback from another browser", flow.id[:6])
            return refuse(
                403,
                "Please use the same browser",
                "Finish signing in in the browser where you opened the link from your application.",
            )
        refusal = await who_may_act(request, flow)
        if refusal is not None:
            return refusal
        if await url_mode.oauth.take(state) is None:  # used up by a concurrent callback
            return refuse(403, "This sign-in cannot be used", "It was already used.")
        ttl = max(flow.expires - url_mode.clock(), 1.0)
        await url_mode.guarded.put(_USED, _used_key(state), flow.id.encode("ascii"), ttl=ttl)
        error, code = params.get("error"), params.get("code")
        if error is not None or not code:
            status: FlowStatus = "declined" if error == "access_denied" else "failed"
            detail = error if error is not None and _ERROR_CODE.fullmatch(error) else "invalid_callback"
            if status == "declined":
                log.info("flow %s: the provider answered %s", flow.id[:6], detail)
            else:  # the operator's to look into: the description, escaped and cut, says why
                said = params.get("error_description")
                why = f": {redact_urls(said)[:300]!r}" if said else ""  # redacted, then cut
                log.warning("flow %s: the provider answered %s%s", flow.id[:6], detail, why)
            ended = await url_mode.flows.finish(flow, status, detail=detail)
        else:
            try:
                tokens = await url_mode.oauth.redeem(flow, pending, code)
            except (OAuthError, ConfigError) as exc:
                log.warning("flow %s: the token request failed: %s", flow.id[:6], exc)
                reason = exc.error if isinstance(exc, OAuthError) else "config"
                ended = await url_mode.flows.finish(flow, "failed", detail=reason)
            else:
                # the flow may have ended during the token request (the request gave up, it
                # expired, another sign-in of it was kept): then the tokens are not kept
                latest = await url_mode.flows.get(flow.id)
                if latest is None or latest.done:
                    log.info("flow %s: ended before the sign-in did; its tokens are not kept", flow.id[:6])
                    await url_mode.oauth.discard(flow.name, flow.principal, tokens, "the flow had ended")
                    if latest is None:
                        return refuse(
                            410, "This request has ended", "Go back to your application and try again."
                        )
                    return done_page(asking, latest, late=True)
                oauth, name, principal = url_mode.oauth, flow.name, flow.principal
                ended = await save_once(
                    url_mode,
                    flow,
                    keep=lambda: oauth.save(name, principal, tokens),
                    drop=lambda: oauth.forget(name, principal),
                )
                if ended:
                    log.info("flow %s: connected to %s", flow.id[:6], flow.name)
                else:  # another sign-in of it was kept, or it ended otherwise meanwhile
                    log.info("flow %s: ended before its tokens were kept; they are not kept", flow.id[:6])
                    if flow.status != "pending":  # else the kept one's save is still under way
                        await oauth.discard(name, principal, tokens, "another sign-in was kept")
                    return done_page(asking, flow, late=True)
        if ended:  # else it had ended elsewhere: that instance said so, and the page shows how
            await url_mode.finished(flow)
        return done_page(asking, flow)

    return callback
