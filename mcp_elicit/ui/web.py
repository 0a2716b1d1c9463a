"""The browser answerer: a person answers a server's questions on a page in their browser.

Each round of questions (one, or every elicitation of a 2026-07-28 round together, through
``elicit_many``) gets its own answer server on 127.0.0.1 (a random port, ``ui.web_serve``),
started for the round and stopped when it is answered (or kept a short while, answering
only how the round ended, for a page whose event stream was down then: ``ui.web_after``).
The page opens in the system browser: it says which server asks, during which request,
and why; it shows every field of the form, checked as the person types by the form's own
rules (the page asks the answer server, which runs ``FormSchema.validate``); then a review,
and Send, Decline or Cancel. A URL goes through
the same consent as in the terminal (``client.url_consent``): the full URL, its site
highlighted, every warning; "Open the page" opens it in a new tab (never a frame), then
"I'm done" answers ``accept``, as does the server saying the step is finished after the
person pressed Open (2025-11-25, ``request.finished``). A URL the client refuses never
reaches ``elicit`` (the client declines it) but gets a page of its own through
``refused``: it says why, has no Open, only Decline and Cancel, and the page saying it
was opened is refused (400). Nothing here fetches that URL.

Rules:

* The link is ``http://127.0.0.1:PORT/r/<token>``, the token ``secrets.token_urlsafe(32)``
  and single-use: the first visit swaps it for an HttpOnly, SameSite=Strict cookie and
  redirects to ``/form`` (reloading works, in that browser only); a second visit of the
  link is refused (410). Every POST also needs the page's CSRF token in a header and a
  JSON body of at most 16 MiB (as large as a server's message: the page sends back the
  defaults it was given), read no further than that (413), and received in full within
  30 s (408, and the connection closed).
* Refused before anything else: a ``Host`` other than ``127.0.0.1:PORT`` or
  ``localhost:PORT`` (421: DNS rebinding); an ``Origin`` other than the page's own (403);
  ``Sec-Fetch-Site`` other than ``same-origin`` or ``none`` (403: another site, or another
  port of this machine), except for the link itself opened in a tab, which may be followed
  from a web page (a notebook's output): its token is what counts, and it then answers a page that
  steps to ``/form`` itself (``Refresh``), as a redirect would keep the other site as the
  initiator and the ``SameSite=Strict`` cookie would not be sent. Each refusal, and a 404
  or 405, is a page laid out as the others (``web_pages.REFUSED``), as a person may land on
  it; its style is inline, as its stylesheet's request would be refused too.
* ``/favicon.ico``, which the browser asks for by itself, is 204 (no icon): a 404 would
  be an error in the page's console.
* Every response: ``Cache-Control: no-store``, a CSP allowing only this server's own
  script, style and requests (no inline code, save an ended page's one style, allowed by
  its hash: ``web_pages.END_STYLE``), no framing, no referrer, no DNS prefetch
  (browsers resolve a plain-http page's link hosts ahead of a click otherwise, which
  would tell a URL's owner it was shown before the person consented).
* The answer is checked again on the server before it is returned, so what reaches the
  client is exactly what the terminal answerer would give (``content`` without the
  defaults, which the client applies).
* The page's ending is true when it is said: "Sent" where the answer is the response to
  the server's request (2025-11-25); at 2026-07-28 that it goes with the retried request
  or the task's next update (``form_text.carried_by``), still to come.
* The page warns before ``timeout`` ends (half of it, at most a minute, before) and offers
  "More time" (``POST /api/more-time``): the whole ``timeout`` again, as often as asked.
* The page keeps an event stream open. When every stream of a page that was opened has
  been gone for ``grace`` seconds (the tab was closed), or ``timeout`` passes, every
  question of the round is answered ``cancel``; so is a cancelled ``elicit_many`` (the page
  says the server stopped when it was cancelled with ``SERVER_STOPPED``). A stream
  cut short (the event loop ends with the page open) ends its response, with no report.
* The browser is started by the injectable ``open_url`` (``ui.terminal.system_browser`` by
  default) in a daemon thread that nothing waits for (``webbrowser`` waits for a
  ``$BROWSER`` command it does not know to exit); the link is also printed (``announce``)
  for a person to open.
* While a 2026-07-28 request waits for a page the person accepted (``url_waiting``), that
  is announced in one line (``ui.page_wait``), not on a page: the round's answer server
  stopped once it was answered, so no page of it is left to show it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Literal

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from mcp_elicit.client.answerers import ElicitAnswer, cancel_sent, known_modes, server_stopped
from mcp_elicit.client.url_consent import UrlVerdict
from mcp_elicit.core.client_inputs import ElicitationRequest
from mcp_elicit.errors import ConfigError, UsageError
from mcp_elicit.transports.local import Opener, start_opener
from mcp_elicit.ui.form_text import TITLE_MAX, carried_by, fit
from mcp_elicit.ui.page_wait import waiting_line
from mcp_elicit.ui.server_text import for_encoding
from mcp_elicit.ui.terminal import interrupts_noted, sent_when_stopped, stopped_by, system_browser
from mcp_elicit.ui.web_after import Afterwards, ended
from mcp_elicit.ui.web_assets import STATIC, asset
from mcp_elicit.ui.web_pages import END_STYLE_SOURCE, REFUSED, continue_page, end_page, page
from mcp_elicit.ui.web_round import Round, finished_watch
from mcp_elicit.ui.web_serve import Receive, Scope, Send, cut_short, disconnected, serve_local
from mcp_elicit.wire.jsonrpc import nests_past

__all__ = ["WebAnswerer"]

log = logging.getLogger("mcp_elicit.ui.web")


_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; "
        f"style-src 'self' {END_STYLE_SOURCE}; connect-src 'self'; img-src 'self'; "
        "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    # a URL-mode link's host is not looked up before the person chooses to open it
    "X-DNS-Prefetch-Control": "off",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_POSTED: Final = frozenset({"/api/check", "/api/answer", "/api/opened", "/api/more-time"})
#: What the page may post: as much as a server's message the client reads (16 MiB), since
#: the page sends back the defaults it was given, and a text field may have no length limit.
_MAX_BODY: Final = 16 * 1024 * 1024
#: The deepest nesting an answer may have (a page sends a handful of levels): the same
#: verdict whatever depth this Python's json recursion reaches.
_MAX_DEPTH: Final = 64
_BODY_TIMEOUT = 30.0  # seconds an answer's body has to arrive in full (408 beyond)
_PING_SECONDS: Final = 15.0
#: The name a page gives itself, per load, on its event streams and posts (``Round.heard``).
_PAGE_NAME: Final = re.compile(r"[0-9A-Za-z_-]{1,64}")
_NO_BROWSER: Final = "mcp-elicit: could not start a browser here; open the address above yourself."


def _same_origin(request: Request) -> bool:
    """Whether a browser says the request comes from this page or from no page at all."""
    return request.headers.get("sec-fetch-site", "none") in ("same-origin", "none")


def _opens_a_tab(request: Request) -> bool:
    """Whether a browser says the request opens a page in a tab (not a frame, an image, a
    script's request)."""
    headers = request.headers
    return headers.get("sec-fetch-mode") == "navigate" and headers.get("sec-fetch-dest") == "document"


def _ended(status: int, heading: str, text: str, **headers: str) -> Response:
    """A page a person lands on with nothing to answer (``web_pages.end_page``)."""
    return HTMLResponse(end_page(heading, text), status_code=status, headers={**_HEADERS, **headers})


def _text(status: int, text: str) -> Response:
    """What a request of the page's own script is refused with (the page shows it)."""
    return Response(text + "\n", status_code=status, media_type="text/plain", headers=_HEADERS)


class _App:
    """The answer server of one round, as a plain ASGI callable (see the module rules)."""

    def __init__(self, round_: Round, port: int) -> None:
        self.round = round_
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        path, method = scope["path"], scope["method"]
        link = method == "GET" and path.startswith("/r/")
        response = self._refusal(request, link=link and _opens_a_tab(request))
        if response is None:
            if link:
                response = self._claim(path[3:], request)
            elif method == "GET" and path == "/form":
                response = self._page(request)
            elif method == "GET" and path in STATIC:
                response = Response(asset(path), media_type=STATIC[path], headers=_HEADERS)
            elif method == "GET" and path == "/favicon.ico":  # asked by the browser itself
                response = Response(status_code=204, headers=_HEADERS)
            elif method == "GET" and path == "/api/events":
                if self._allowed(request):
                    await self._events(send, receive, _page_name(request.query_params.get("page")))
                    return
                response = _ended(403, *REFUSED["no-cookie"])
            elif method == "POST" and path in _POSTED:
                response = await self._post(request, path)
            elif path in _POSTED:
                response = _ended(405, *REFUSED["wrong-method"], Allow="POST")
            elif path in ("/form", "/api/events", *STATIC) or path.startswith("/r/"):
                response = _ended(405, *REFUSED["wrong-method"], Allow="GET")
            else:
                response = _ended(404, *REFUSED["not-found"])
        await response(scope, receive, send)

    def _refusal(self, request: Request, *, link: bool = False) -> Response | None:
        """Why ``request`` is refused before anything else, or None. The link itself may be
        followed from another site (it is shown in a notebook, a web terminal): its token
        is what it needs."""
        host = request.headers.get("host", "")
        if host not in self.hosts:
            return _ended(421, *REFUSED["other-host"])
        origin = request.headers.get("origin")
        if origin is not None and origin != f"http://{host}":
            return _ended(403, *REFUSED["other-site"])
        if not link and not _same_origin(request):
            return _ended(403, *REFUSED["other-site"])
        return None

    def _allowed(self, request: Request, *, csrf: bool = False) -> bool:
        cookie = request.cookies.get(self.round.cookie_name, "")
        if not self.round.claimed or not hmac.compare_digest(cookie.encode(), self.round.cookie.encode()):
            return False
        if csrf:
            given = request.headers.get("x-mcp-elicit-csrf", "")
            return hmac.compare_digest(given.encode(), self.round.csrf.encode())
        return True

    def _claim(self, token: str, request: Request) -> Response:
        if not hmac.compare_digest(token.encode(), self.round.token.encode()):  # a link cut short
            return _ended(
                404,
                "No question has this link",
                "Check that the whole link was copied: a terminal may break a long one across lines.",
            )
        if self.round.answers.done():  # kept for a page after the end: nothing to answer
            return _ended(410, "This question is no longer open", "There is nothing left to answer here.")
        if self.round.claimed:
            return _ended(
                410,
                "This link was already opened",
                "Answer in the tab it opened in: the link works once, so nobody else can answer with it.",
            )
        self.round.opened()
        response: Response
        if _same_origin(request):
            response = RedirectResponse("/form", status_code=303, headers=_HEADERS)
        else:  # a redirect keeps the other site as initiator: the SameSite cookie would not go
            asker = self.round.requests[0].server
            response = HTMLResponse(
                continue_page(asker.title or asker.name), headers={**_HEADERS, "Refresh": "0; url=/form"}
            )
        self._cookie(response)
        return response

    def _cookie(self, response: Response) -> None:
        """The page's cookie, kept as long as the round waits (cookies are not per port:
        it goes soon after)."""
        response.set_cookie(
            self.round.cookie_name,
            self.round.cookie,
            max_age=int(self.round.left()) + 60,
            path="/",
            httponly=True,
            samesite="strict",
        )

    def _page(self, request: Request) -> Response:
        if not self._allowed(request):
            return _ended(
                403,
                "This page opens from its link only",
                "Open it from the link mcp-elicit gave; it works in one browser only.",
            )
        if self.round.answers.done():  # a page reloaded after the end: it hears how now
            self.round.heard()
            carried = carried_by(self.round.requests[0])
            return _ended(410, "This question is no longer open", ended(self.round.reason, carried))
        body = page(
            self.round.requests, csrf=self.round.csrf, left=self.round.left(), draft=self.round.cookie_name
        )
        return HTMLResponse(body, headers=_HEADERS)

    async def _post(self, request: Request, path: str) -> Response:
        if not self._allowed(request, csrf=True):
            return _ended(403, *REFUSED["no-cookie"])
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _text(415, "Send JSON.")
        try:
            body = await _read_capped(request)
        except TimeoutError:  # a stalled sender holds nothing: say so and close the connection
            late = _text(
                408, f"Too slow: the answer did not arrive within {_BODY_TIMEOUT:g} s. Send it again."
            )
            late.headers["connection"] = "close"
            return late
        if body is None:
            return _text(413, f"Too large: an answer is at most {_MAX_BODY // 1024 // 1024} MiB.")
        try:
            data = json.loads(body)
        except ValueError:
            return _text(400, "Not JSON.")
        except RecursionError:  # json reads arrays and objects by recursion
            return _text(400, "Not JSON: nested too deeply.")
        if nests_past(data, _MAX_DEPTH):  # where recursion stops differs by Python and its limit
            return _text(400, "Not JSON: nested too deeply.")
        if not isinstance(data, dict):
            return _text(400, "Send a JSON object.")
        named = _page_name(request.headers.get("x-mcp-elicit-page"))
        if self.round.answers.done():
            self.round.heard(named)
            return JSONResponse({"ok": False, "ended": self.round.reason}, 409, headers=_HEADERS)
        if path == "/api/opened":  # the person pressed Open on a URL question
            refusal = self.round.not_openable(data.get("question"))
            if refusal is not None:  # no Open on the page: the server's "finished" cannot accept it
                return _text(400, refusal)
            self.round.url_opened.set()
            return JSONResponse({"ok": True}, headers=_HEADERS)
        if path == "/api/more-time":
            response = JSONResponse({"ok": True, "left": self.round.more_time()}, headers=_HEADERS)
            self._cookie(response)  # as long as the new wait
            return response
        if path == "/api/answer" and data.get("action") in ("decline", "cancel"):
            action: Literal["decline", "cancel"] = "decline" if data["action"] == "decline" else "cancel"
            self._finish(self.round.every(action), action, named)
            return JSONResponse({"ok": True}, headers=_HEADERS)
        questions, answers = self.round.judge(data.get("questions"))
        if path == "/api/check":
            return JSONResponse({"ok": answers is not None, "questions": questions}, headers=_HEADERS)
        if data.get("action") != "accept":
            return _text(400, "The action is accept, decline or cancel.")
        if answers is None:
            return JSONResponse({"ok": False, "questions": questions}, 422, headers=_HEADERS)
        declined = all(answer.action == "decline" for answer in answers)  # each one by one
        self._finish(answers, "decline" if declined else "answered", named)
        return JSONResponse({"ok": True}, headers=_HEADERS)

    def _finish(self, answers: list[ElicitAnswer], reason: str, page: str) -> None:
        """The page's own post ends the round: it hears how, even without a live stream."""
        streaming = self.round.streams > 0
        self.round.finish(answers, reason)
        if page or not streaming:  # unnamed, it cannot be told from the pages streaming
            self.round.heard(page)

    async def _events(self, send: Send, receive: Receive, page: str) -> None:
        """An event stream of page ``page`` that says when the round ends, and whose end says
        the page went."""
        headers = [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
        headers.append((b"content-type", b"text/event-stream"))
        self.round.stream_opened(page)
        gone = asyncio.ensure_future(disconnected(receive))
        ended = asyncio.ensure_future(self.round.ended.wait())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"retry: 1000\n\n", "more_body": True})
            while True:
                done, _ = await asyncio.wait(
                    {gone, ended}, timeout=_PING_SECONDS, return_when="FIRST_COMPLETED"
                )
                if gone in done:
                    return
                if ended in done:
                    data = json.dumps({"reason": self.round.reason})
                    body = f"event: end\ndata: {data}\n\n".encode()
                    await send({"type": "http.response.body", "body": body, "more_body": False})
                    self.round.heard(page)
                    return
                await send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
        except OSError:  # the browser went away while we wrote
            return
        except asyncio.CancelledError:  # the event loop ends (or the server is cut short)
            await cut_short(send)
        finally:
            gone.cancel()
            ended.cancel()
            self.round.stream_closed(page)


def _page_name(given: str | None) -> str:
    """The name a page gives itself (``_PAGE_NAME``), or "" for none or a malformed one."""
    return given if given is not None and _PAGE_NAME.fullmatch(given) else ""


async def _read_capped(request: Request) -> bytes | None:
    """The request's body, or None once it is over ``_MAX_BODY`` (read no further);
    TimeoutError when it has not arrived in full within ``_BODY_TIMEOUT`` seconds."""
    declared = request.headers.get("content-length", "")
    # ASCII digits only ("²" is a digit int() cannot read), and past 18 of them over any limit
    # (int() refuses thousands)
    if declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > _MAX_BODY):
        return None
    parts: list[bytes] = []
    size = 0
    async with asyncio.timeout(_BODY_TIMEOUT):
        async for chunk in request.stream():
            size += len(chunk)
            if size > _MAX_BODY:
                return None
            parts.append(chunk)
    return b"".join(parts)


def _stderr(text: str) -> None:
    """``text`` on stderr as its encoding can show it (``server_text.for_encoding``)."""
    print(for_encoding(text, getattr(sys.stderr, "encoding", None)), file=sys.stderr, flush=True)


class WebAnswerer:
    """Answers elicitations on a page in the browser; see the module docstring."""

    def __init__(
        self,
        *,
        open_url: Opener = system_browser,
        modes: Iterable[str] = ("form", "url"),
        timeout: float = 600.0,
        grace: float = 5.0,
        announce: Callable[[str], None] = _stderr,
    ) -> None:
        self.open_url = open_url
        self.timeout = timeout
        self.grace = grace
        self.announce = announce
        self._after = Afterwards()
        try:
            self._modes = known_modes(modes)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None

    @property
    def modes(self) -> frozenset[str]:
        return self._modes

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        return (await self.elicit_many([request]))[0]

    async def refused(self, request: ElicitationRequest, verdict: UrlVerdict) -> ElicitAnswer:
        """A URL the client refuses, on a page of its own: why, and only Decline or Cancel."""
        return await self.elicit(request)

    async def elicit_many(self, requests: Sequence[ElicitationRequest]) -> list[ElicitAnswer]:
        """Every question on one page; one answer per question, in order. Stopped while the
        page waits, it says what stopped it, as the terminal does (``stopped_by``): the
        person's Ctrl-C, a SIGTERM, the server stopping, or the server taking it back."""
        with interrupts_noted() as interrupts:
            try:
                return await self._on_a_page(requests) if requests else []
            except asyncio.CancelledError as exc:
                self.announce(f"mcp-elicit: {stopped_by(interrupts, exc)}; {sent_when_stopped(exc)}.")
                raise

    async def _on_a_page(self, requests: Sequence[ElicitationRequest]) -> list[ElicitAnswer]:
        round_ = Round(requests, grace=self.grace, lifetime=self.timeout)
        running = await serve_local(lambda port: _App(round_, port))
        watch: asyncio.Future[None] | None = None
        try:
            url = f"http://127.0.0.1:{running.port}/r/{round_.token}"
            server = requests[0].server
            asks = f"{fit(server.title or server.name, TITLE_MAX, length=True)} asks"
            self.announce(f"mcp-elicit: {asks}; answer in your browser: {url}")
            self._open(url)
            watch = finished_watch(round_)
            try:
                async with asyncio.timeout(self.timeout) as deadline:
                    round_.deadline = deadline  # "More time" moves it
                    answers = await asyncio.shield(round_.answers)
            except TimeoutError:
                round_.finish(round_.every("cancel"), "timeout")
                self.announce(f"mcp-elicit: no answer within {self.timeout:g} s; cancelled.")
                answers = round_.answers.result()
        except asyncio.CancelledError as exc:  # the page says the server stopped, as the terminal does
            how = "stopped" if server_stopped(exc) else "withdrawn" if cancel_sent(exc) else "cancelled"
            round_.finish(round_.every("cancel"), how)
            raise
        finally:
            round_.finish(round_.every("cancel"), "cancelled")
            if watch is not None:
                watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch
            await asyncio.sleep(0)  # let the event streams say how it ended
            await self._after.end(running, round_)
        if round_.reason == "closed":
            self.announce("mcp-elicit: the page was closed; cancelled.")
        return answers

    def _open(self, url: str) -> None:
        """Start the browser, waited for by nothing (see :func:`start_opener`); say so when
        none could be started."""

        def told(opened: asyncio.Future[bool]) -> None:
            if not opened.result():
                self.announce(_NO_BROWSER)

        start_opener(self.open_url, url).add_done_callback(told)

    async def url_done(self, request: ElicitationRequest) -> None:
        """At once: the person said they were done before ``accept`` went out."""
        return None

    async def url_waiting(self, request: ElicitationRequest) -> None:
        """Announce that the request waits for the page of ``request`` to be finished."""
        self.announce(f"mcp-elicit: {waiting_line(request)}")
