"""The web pages of hosted URL mode (a Starlette app mounted at ``/mcp-elicit``; for stdio
servers, ``loopback_pages`` hosts it on 127.0.0.1).

Rules:

* ``GET /mcp-elicit/flows/{id}?t=<link token>`` claims the flow for this browser, in two
  steps (``Flows.claim``, ``Flows.confirm``): it gives the browser a flow cookie (a
  pending claim; ``HEAD``, what link checkers send, claims nothing) and redirects to the
  same page without the token, so it stays out of history and referrers (followed from a
  page of another site, a short page that steps to it itself: after a redirect the browser
  would not send the SameSite=Strict cookie). The link is used
  up only when a browser comes back to the page with a pending claim's cookie: the first
  to come back holds the page, any other is refused saying the page was opened in another
  browser. So a redirect that never reached the browser, or a link preview that does not
  follow it, leaves the link working. Opened again in the browser holding the page, the
  link leads to the page again; in any other it is used up. Later visits need the
  browser's flow cookie (HttpOnly, path-scoped, ``Secure`` when the browser is on https:
  the request's scheme, or the public URL's behind a proxy that ends TLS). The pages'
  paths, in links, redirects and cookies, carry the mount path as a URL's path
  (``mount_path``), never decoded as ASGI gives it.
* The browser user must be the principal who started the flow: the server's ``PageAuth``
  says who is signed in; a server without one is single-user and serves the pages only to
  loopback connections. A different user is refused and the flow is left untouched. The
  loopback page server (stdio) answers only to a loopback ``Host`` and ``Origin``, so that a
  site rebound to 127.0.0.1 cannot reach it through the person's browser.
* ``POST`` carries the browser's cookie and a CSRF token derived from it; the secret goes
  straight into the vault (sealed) and is never logged, echoed or put in a redirect. The
  flow is looked at again once the form is read, and ended once the secret is saved: one
  that ended otherwise meanwhile (even while the secret was being saved) keeps nothing.
  A form that comes once the flow ended (sent twice, from a second tab, back from
  history) changes nothing and is answered 409, saying how it ended and that what the
  form sent was not used, never "Saved" for a value dropped. Of two forms saved at once,
  one is kept and the other answered so (``page_save``), on any number of instances.
  A form not received in full within ``body_timeout`` seconds (30; the app's own under
  ``StreamableHTTP``) is answered 408 and its connection closed; the flow stays open.
* A form that finds no flow this browser may act on is refused 403 ("not available"),
  unless its stamp (``page_stamp``) shows this server served it for that flow to this same
  user and the flow is gone: then 410 says the request expired (or ended, before its
  time: a restart on a store in memory) and to start again. Nothing sent is kept or shown.
* Third-party sign-in (flows of kind ``oauth``): the claimed page offers "Continue to
  <provider>"; ``GET …/flows/{id}/start`` (flow cookie and same user again) starts one
  authorization request (PKCE S256, a new single-use ``state``) and redirects (303) to the
  provider. It also gives the browser the flow cookie for the callback path (SameSite=Lax:
  the provider's redirect back is a cross-site navigation).
  ``GET /mcp-elicit/oauth/callback?code&state`` (or ``error``; ``page_callback``) finds the
  request by its state, checks the browser's flow cookie and the user *before* using the
  state up (so a refused browser burns nothing), then takes the state (once), exchanges the code with the
  verifier, stores the tokens and finishes the flow: ``complete``; ``access_denied`` is
  ``declined``; any other failure ``failed``, logged as a warning with the provider's
  ``error_description`` (escaped, cut at 300 characters), which the page never shows.
  Tokens that come once the flow ended (during the token request, or while they were
  stored) are not kept. Of two sign-ins of one flow coming back at once (its link opened
  twice), one's tokens are kept (``page_save``, on any number of instances); the other
  keeps nothing and is answered as a late form (409), never "Connected". Tokens not kept
  are revoked at the provider when it can (``OAuthConnections.discard``), never while the
  kept one's save is still under way (not yet stored, it would look like no connection).
  The browser that signed in, reloading a callback whose answer it never got, is shown
  how the flow ended (or, while its token request is under way, to reload in a moment);
  any other browser presenting a used state is refused.
* A page that takes a secret or leads to a sign-in names the server asking (its title, else
  its name) and the user it is for (the flow's principal), so that a person sent someone
  else's link sees that it is not theirs before typing anything; the secret's field, which
  takes focus past that line, is described by it. Its title (the tab's name), and the
  finished page's, say which server asks; so does every refusal's (401, 403, 410, 503,
  the loopback server's 421), after what went wrong.
* A page taking a secret or leading to a sign-in says when it expires (the flow's end),
  warns near it and says when it has, what was typed then dropped (``page_expiry``).
* Every page (``page_html``): ``Cache-Control: no-store``, a strict Content-Security-Policy,
  no framing, no referrer. A store that fails (Redis down, SQLite locked) gives a 503 page asking to
  try again; the cause is logged, never shown.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import logging
import math
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Final, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_elicit.errors import ConfigError
from mcp_elicit.server.app import Server
from mcp_elicit.server.flows import ClaimsExhausted, Flow
from mcp_elicit.server.options import loopback_host
from mcp_elicit.server.url_mode import PAGES_PATH, UrlMode
from mcp_elicit.stores.base import backend_errors
from mcp_elicit.transports.mount_path import cookie_path, mount_path
from mcp_elicit.transports.page_callback import callback_page
from mcp_elicit.transports.page_expiry import expiry_notice
from mcp_elicit.transports.page_html import (
    HEADERS,
    connect_page,
    done_page,
    html_page,
    refusal_page,
    secret_form,
)
from mcp_elicit.transports.page_save import save_secret
from mcp_elicit.transports.page_stamp import open_stamp, stamp

__all__ = ["LOOPBACK_NAMES", "PAGE_NULL_ORIGIN", "pages_app", "refusal_page"]

#: Seconds a form POSTed to a page has to arrive in full (408 beyond).
BODY_TIMEOUT: Final = 30.0

log = logging.getLogger("mcp_elicit.pages")

MAX_SECRET: Final = 8192
#: The names the loopback page server answers to (its ``Host``, a page's ``Origin``).
LOOPBACK_NAMES: Final = frozenset({"127.0.0.1", "localhost"})
#: The ``Origin`` a page's own form is posted with, taken from the pages alone (the MCP
#: endpoint refuses it, 403): the pages send no referrer, and a browser then sends a POST
#: with ``Origin: null`` (Fetch, "append a request Origin header"). Another site's form
#: posted with it (from a sandboxed frame, say) carries no flow cookie and CSRF token.
PAGE_NULL_ORIGIN: Final = "null"


#: Why a page may be refused, said so it helps whatever the reason: a page past its time
#: cannot be told from one that was never this browser's, and its link was used up with it.
_GONE = "It may have expired, or belong to another browser. Go back to your application and start again."


#: Why a browser back with its claim after another one is refused.
_ELSEWHERE = (
    "This page was opened in another browser: continue there, or go back to your application and start again."
)


def _cookie_name(flow_id: str) -> str:
    return f"mcp_elicit_{hashlib.sha256(flow_id.encode()).hexdigest()[:16]}"


def _csrf(cookie: str, flow_id: str) -> str:
    return hmac.new(cookie.encode(), f"csrf:{flow_id}".encode(), hashlib.sha256).hexdigest()[:32]


def _set_flow_cookie(
    response: Response,
    request: Request,
    url_mode: UrlMode,
    flow: Flow,
    value: str,
    path: str,
    samesite: Literal["strict", "lax"],
) -> None:
    """The browser's flow cookie; ``Secure`` when the browser is on https, which behind a
    proxy that ends TLS only the public URL tells."""
    public = url_mode.public_url or ""
    response.set_cookie(
        _cookie_name(flow.id),
        value,
        max_age=max(math.ceil(flow.expires - url_mode.clock()), 1),  # not before the flow ends
        path=cookie_path(path),
        secure=request.url.scheme == "https" or public.lower().startswith("https://"),
        httponly=True,
        samesite=samesite,
    )


def _to_the_page(request: Request, here: str, asking: str) -> Response:
    """The link's answer: on to the page ``here``. A redirect keeps the page the link was
    followed from as the initiator, so when that page is of another site the browser
    would not send the SameSite=Strict cookie back: then a short page steps to it itself
    (``Refresh: 0``, no script)."""
    if request.headers.get("sec-fetch-site") != "cross-site":
        return RedirectResponse(here, status_code=303, headers=HEADERS)
    who = html.escape(asking)
    return html_page(
        f"Opening the page · {asking}",
        f'<h1>Opening the page of {who}…</h1><p><a href="{html.escape(here)}">Continue to the page</a></p>',
        headers={"Refresh": f"0; url={here}"},
    )


def pages_app(server: Server, *, body_timeout: float | None = BODY_TIMEOUT) -> Starlette:
    """The pages of ``server``'s URL-mode flows; a form must arrive within
    ``body_timeout`` seconds (None: no limit), read from the app's ``state.body_timeout``
    at each form, so that setting that changes it."""
    url_mode = server.url_mode
    asking = server.title or server.name  # in every page's title: which server asks

    def expiry(flow: Flow) -> str:
        return expiry_notice(flow.expires - url_mode.clock(), url_mode.flow_ttl)

    def refuse(status: int, title: str, text: str) -> HTMLResponse:
        return refusal_page(status, title, text, server=asking)

    def stamped(flow: Flow) -> str:
        return stamp(server.sealer, flow, url_mode.clock())

    def whose(flow: Flow) -> str:
        """The line saying which server asks, and for whom (escaped HTML)."""
        who = html.escape(asking)
        if flow.principal is None:
            return f'<p class="muted" id="whose">Requested by the server <strong>{who}</strong>.</p>'
        user = html.escape(flow.principal)
        return (
            f'<p class="muted" id="whose">Requested by the server <strong>{who}</strong> '
            f"for the user <strong>{user}</strong>. If that is not you, close this page.</p>"
        )

    async def who_may_act(request: Request, flow: Flow) -> Response | None:
        """None when this browser's user may act on ``flow``; else the refusal."""
        if url_mode.page_auth is not None:
            subject = await url_mode.page_auth.subject(request.headers, request.cookies)
            if subject is None:
                return refuse(
                    401, "Please sign in", "Sign in to this server in this browser, then open the link again."
                )
            # as bytes: compare_digest refuses str with non-ASCII, and names may have it
            if flow.principal is None or not hmac.compare_digest(
                subject.encode("utf-8", "surrogatepass"), flow.principal.encode("utf-8", "surrogatepass")
            ):
                log.warning("flow %s: refused a browser signed in as a different user", flow.id[:6])
                return refuse(
                    403, "Not your request", "This page belongs to a request started by another user."
                )
            return None
        client = request.client.host if request.client else None
        if not loopback_host(client):
            return refuse(
                403, "Not available", "This page can only be opened on the machine running the server."
            )
        return None

    async def flow_page(request: Request) -> Response:
        flow_id = request.path_params["flow_id"]
        token = request.query_params.get("t")
        cookie_name = _cookie_name(flow_id)
        here = f"{_pages(url_mode, request)}/flows/{flow_id}"
        if token is not None:
            flow = await url_mode.flows.get(flow_id)
            if flow is not None and flow.owns(request.cookies.get(cookie_name)):
                # opened again in the browser that claimed it: its page (which checks again)
                return RedirectResponse(here, status_code=303, headers=HEADERS)
            if flow is None or flow.done:
                return refuse(410, "This link has expired", "Go back to your application and try again.")
            refusal = await who_may_act(request, flow)
            if refusal is not None:
                return refusal
            if request.method == "HEAD":  # a link checker or preview: it must not use the link up
                return Response(status_code=200, headers=HEADERS, media_type="text/html")
            try:
                claimed = await url_mode.flows.claim(flow_id, token)
            except ClaimsExhausted:
                log.warning("flow %s: its link was opened too many times; refused", flow_id[:6])
                return refuse(
                    429,
                    "This link was opened too many times",
                    "Go back to the browser you opened it in first, or to your application to start again.",
                )
            if claimed is None:
                return refuse(
                    403,
                    "This link was already used",
                    "Each link works once. Go back to your application and try again.",
                )
            flow, new_cookie = claimed
            response = _to_the_page(request, here, asking)
            _set_flow_cookie(response, request, url_mode, flow, new_cookie, here, "strict")
            return response
        current = await url_mode.flows.get(flow_id)
        cookie = request.cookies.get(cookie_name)
        if (
            current is not None
            and not current.owns(cookie)
            and await url_mode.flows.claiming(current, cookie)
        ):
            # back with a pending claim's cookie: the first browser back holds the page
            refusal = await who_may_act(request, current)
            if refusal is not None:
                return refusal
            if request.method == "HEAD":  # it must not use the link up either
                return Response(status_code=200, headers=HEADERS, media_type="text/html")
            assert cookie is not None
            current = await url_mode.flows.confirm(current, cookie)
            if current is not None and current.browser is not None and not current.owns(cookie):
                return refuse(403, "This page is not available", _ELSEWHERE)
        if current is None or not current.owns(cookie):
            if request.method == "POST":
                return await late_form(request, flow_id, current)
            return refuse(403, "This page is not available", _GONE)
        refusal = await who_may_act(request, current)
        if refusal is not None:
            return refusal
        if current.done:  # a form that came once it ended changes nothing, and says so
            return done_page(asking, current, late=request.method == "POST")
        assert cookie is not None
        if request.method == "POST":
            return await submit(request, current, cookie)
        if current.kind == "oauth":
            return connect_page(
                current,
                _csrf(cookie, current.id),
                stamped(current),
                whose(current),
                asking,
                expiry(current),
                _pages(url_mode, request),
            )
        return secret_form(
            current, _csrf(cookie, current.id), stamped(current), whose(current), asking, expiry(current)
        )

    async def start(request: Request) -> Response:
        """Send this browser to the provider: one new authorization request."""
        flow_id = request.path_params["flow_id"]
        flow = await url_mode.flows.get(flow_id)
        cookie = request.cookies.get(_cookie_name(flow_id))
        if flow is None or not flow.owns(cookie) or flow.kind != "oauth":
            return refuse(403, "This page is not available", _GONE)
        refusal = await who_may_act(request, flow)
        if refusal is not None:
            return refusal
        if flow.done:
            return done_page(asking, flow)
        assert cookie is not None
        try:
            redirect_uri = f"{await url_mode.base_url()}{PAGES_PATH}/oauth/callback"
            target = await url_mode.oauth.authorization_url(flow, redirect_uri)
        except ConfigError as exc:
            log.error("flow %s: cannot start the sign-in: %s", flow.id[:6], exc)
            return refuse(500, "Sign-in is not available", "The server is not set up for this provider.")
        response = RedirectResponse(target, status_code=303, headers=HEADERS)
        callback_path = f"{_pages(url_mode, request)}/oauth/callback"
        _set_flow_cookie(response, request, url_mode, flow, cookie, callback_path, "lax")
        return response

    def owns(request: Request, flow: Flow) -> bool:
        return flow.owns(request.cookies.get(_cookie_name(flow.id)))

    callback = callback_page(url_mode, asking, refuse, who_may_act, owns)

    async def form_in_time(request: Request, flow_id: str) -> dict[str, str] | Response | None:
        """The form sent, None when it cannot be read, or the 408 when it came too slowly."""
        body_timeout: float | None = app.state.body_timeout
        try:
            async with asyncio.timeout(body_timeout):
                return await _form(request)
        except TimeoutError:
            log.info("flow %s: the form did not arrive within %s s", flow_id[:6], body_timeout)
            return html_page(
                f"Please try again · {asking}",
                "<h1>Please try again</h1><p>The form took too long to arrive. Nothing was saved. "
                "Reload the page and send it again.</p>",
                408,
                {"Connection": "close"},
            )

    async def late_form(request: Request, flow_id: str, current: Flow | None) -> Response:
        """A form this browser may not act on. When its stamp says this server served it
        to this user for this flow, which is gone, the person is told it expired (or
        ended); anything else gets the refusal it gets without a stamp."""
        refused = refuse(403, "This page is not available", _GONE)
        form = await form_in_time(request, flow_id)
        if not isinstance(form, dict) or current is not None:
            return form if isinstance(form, Response) else refused
        now = url_mode.clock()
        said = open_stamp(server.sealer, form.get("page", ""), flow_id, now)
        if said is None or await who_may_act(request, said.flow) is not None:
            return refused
        if said.expired(now):
            log.info("flow %s: a form came after the flow expired; nothing was kept", flow_id[:6])
            return refuse(
                410,
                "This request has expired",
                "Nothing was saved. Go back to your application and start again: it gives you a new link.",
            )
        log.info("flow %s: a form came after the flow was gone; nothing was kept", flow_id[:6])
        return refuse(
            410,
            "This request has ended",
            "Nothing was saved. Go back to your application and start again: it gives you a new link.",
        )

    async def submit(request: Request, flow: Flow, cookie: str) -> Response:
        form = await form_in_time(request, flow.id)
        if isinstance(form, Response):
            return form
        if form is None:
            return refuse(400, "Please try again", "The form could not be read.")
        sent = str(form.get("csrf", "")).encode("utf-8", "surrogatepass")  # bytes: any text compares
        if not hmac.compare_digest(sent, _csrf(cookie, flow.id).encode("ascii")):
            return refuse(403, "Please try again", "The form was out of date. Reload the page.")
        action = form.get("action")
        if action == "decline":
            ended = await url_mode.flows.finish(flow, "declined")
        elif action == "cancel":
            ended = await url_mode.flows.finish(flow, "cancelled")
        elif action == "submit" and flow.kind == "secret":
            value = str(form.get("value", ""))
            if not value.strip() or len(value) > MAX_SECRET:
                return secret_form(
                    flow,
                    _csrf(cookie, flow.id),
                    stamped(flow),
                    whose(flow),
                    asking,
                    expiry(flow),
                    problem="Enter a value (at most 8192 characters).",
                )
            # the flow may have ended while the form was on its way (the request gave up,
            # it expired): then the value is not kept
            latest = await url_mode.flows.get(flow.id)
            if latest is None:
                return refuse(
                    410, "This request has ended", "Nothing was saved. Go back to your application."
                )
            if latest.done:
                return done_page(asking, latest, late=True)
            ended = await save_secret(url_mode, flow, value.encode("utf-8"))
        else:
            return refuse(400, "Unknown action", "Reload the page and try again.")
        if ended:  # else it had ended elsewhere: that instance said so, and the page shows how
            await url_mode.finished(flow)
        return done_page(asking, flow, late=not ended)  # not ended: what this form sent was not used

    app = Starlette(
        routes=[
            Route(
                f"{PAGES_PATH}/flows/{{flow_id}}", _store_guarded(flow_page, asking), methods=["GET", "POST"]
            ),
            Route(f"{PAGES_PATH}/flows/{{flow_id}}/start", _store_guarded(start, asking), methods=["GET"]),
            Route(f"{PAGES_PATH}/oauth/callback", _store_guarded(callback, asking), methods=["GET"]),
        ],
    )
    app.state.body_timeout = body_timeout
    return app


def _store_guarded(
    page: Callable[[Request], Awaitable[Response]], asking: str
) -> Callable[[Request], Awaitable[Response]]:
    """``page``, answering 503 (logged, the cause never shown; the title names the server
    ``asking``) when the store fails."""
    failures = backend_errors()

    async def guarded(request: Request) -> Response:
        try:
            return await page(request)
        except failures as exc:
            log.error("the pages cannot reach their storage: %s", str(exc) or type(exc).__name__)
            return refusal_page(
                503,
                "Please try again in a moment",
                "This server cannot reach its storage right now. Reload the page in a moment to try again.",
                server=asking,
            )

    return guarded


async def _form(request: Request) -> dict[str, str] | None:
    """The fields of an urlencoded form (bounded), without any multipart machinery."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > 4 * MAX_SECRET:
            return None
    try:
        pairs = urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None
    return dict(pairs)


def _pages(url_mode: UrlMode, request: Request) -> str:
    """Where the pages are as the browser sees them: under the public URL's path, if it
    has one (a proxy that strips it forwards ``/mcp-elicit/...`` here); else under the
    prefix the app is mounted at (``root_path``: Starlette's ``Mount``, ``--root-path``), as
    a URL's path (``mount_path``)."""
    public = url_mode.public_url
    if public:
        return urllib.parse.urlsplit(public).path.rstrip("/") + PAGES_PATH
    return mount_path(request.scope) + PAGES_PATH
