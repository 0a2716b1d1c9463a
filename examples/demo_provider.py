"""Demo Calendar: a tiny OAuth provider with a calendar API, for `make demo`.

    python examples/demo_provider.py --port 8766

The demo server's `share_to_calendar` tool connects to it with `ctx.connect("calendar")`:
the person goes from the MCP server's own page to this provider's consent page and back,
and the tool then adds the booking to the calendar with the access token it got. The
tokens stay on the MCP server; the MCP client and its model never see them.

It stands in for a real provider (Google Calendar, Outlook...) and is small enough to read:

* One user, Ada, always signed in; one registered client, the demo server, which may use
  any loopback redirect URI (any port: RFC 8252 section 7.3). Everything is in memory.
* `GET /authorize`: the authorization code grant with PKCE (S256 required). It shows a
  consent page saying who asks for what; the page continues by itself after two seconds
  (the demo's user always agrees), or the person presses Allow or Deny (`access_denied`).
* `POST /token`: `authorization_code` (the code once, within a minute, with the PKCE
  verifier and the same redirect URI) and `refresh_token`; the client authenticates with
  HTTP Basic. Access tokens live an hour.
* `GET /api/events` lists Ada's events, `POST /api/events` adds one: both need a valid
  Bearer token. `GET /` shows the calendar to a person.

It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import html
import ipaddress
import secrets
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

CLIENT_ID = "mcp-elicit-demo"
CLIENT_SECRET = "demo-client-secret"  # a demo: a real client secret lives in configuration, not code
USER = "Ada"
SCOPE = "calendar.events"
CODE_LIFETIME = 60.0
TOKEN_LIFETIME = 3600


@dataclass
class Grant:
    """What an authorization request asked for, and the code or token it became."""

    redirect_uri: str
    scope: str
    challenge: str
    expires: float = 0.0


@dataclass
class Calendar:
    """The provider's state: pending consents, codes, tokens, and Ada's events."""

    consents: dict[str, tuple[Grant, str]] = field(default_factory=dict)  # id -> (grant, state)
    codes: dict[str, Grant] = field(default_factory=dict)
    access: dict[str, float] = field(default_factory=dict)  # access token -> expiry
    refresh: set[str] = field(default_factory=set)
    events: list[dict[str, Any]] = field(default_factory=list)


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def loopback_redirect(uri: str) -> bool:
    """Any http://127.0.0.1:PORT/... (or localhost, [::1]) address: a local app's callback."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "http" or not parts.hostname or parts.fragment:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    style = (
        "body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}"
        "button{padding:.5rem 1rem;font-size:1rem;border-radius:6px;border:1px solid #888;margin-right:.5rem}"
        "#allow{background:#137333;color:#fff;border-color:#137333}"
    )
    return HTMLResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>",
        status_code=status,
        headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"},
    )


def back_to_client(grant: Grant, state: str, **params: str) -> Response:
    query = urllib.parse.urlencode({**params, "state": state})
    return RedirectResponse(f"{grant.redirect_uri}?{query}", status_code=303)


def token_error(error: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error}, status_code=status, headers={"Cache-Control": "no-store"})


def issue_tokens(calendar: Calendar, scope: str) -> JSONResponse:
    access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    calendar.access[access] = time.time() + TOKEN_LIFETIME
    calendar.refresh.add(refresh)
    answer = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": TOKEN_LIFETIME,
        "refresh_token": refresh,
        "scope": scope,
    }
    return JSONResponse(answer, headers={"Cache-Control": "no-store"})


async def read_form(request: Request) -> dict[str, str]:
    """An urlencoded form body (Starlette's own parser needs python-multipart)."""
    body = await request.body()
    if len(body) > 16384:
        return {}
    return dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def client_authenticated(request: Request) -> bool:
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        user, _, password = base64.b64decode(encoded).decode("utf-8").partition(":")
    except ValueError:
        return False
    client_id, client_secret = urllib.parse.unquote(user), urllib.parse.unquote(password)
    return client_id == CLIENT_ID and hmac.compare_digest(client_secret, CLIENT_SECRET)


def build(calendar: Calendar | None = None) -> Starlette:
    """The provider as an ASGI app (``calendar`` holds its state; tests may pass their own)."""
    cal = calendar if calendar is not None else Calendar()

    async def authorize(request: Request) -> Response:
        q = request.query_params
        redirect_uri = q.get("redirect_uri", "")
        if q.get("client_id") != CLIENT_ID or not loopback_redirect(redirect_uri):
            # never redirect to an address we cannot vouch for: say so here instead
            return page("Sign-in refused", "<p>Unknown application or return address.</p>", 400)
        state = q.get("state", "")
        grant = Grant(redirect_uri, SCOPE, q.get("code_challenge", ""))
        if q.get("response_type") != "code":
            return back_to_client(grant, state, error="unsupported_response_type")
        if q.get("code_challenge_method") != "S256" or len(grant.challenge) != 43:
            return back_to_client(
                grant, state, error="invalid_request", error_description="PKCE S256 required"
            )
        consent = secrets.token_urlsafe(16)
        cal.consents[consent] = (grant, state)
        body = f"""
<p>Signed in as <strong>{USER}</strong>.</p>
<p><strong>mcp-elicit demo</strong> asks to add events to your calendar ({SCOPE}).</p>
<form method="post" action="/authorize/decide">
<input type="hidden" name="consent" value="{consent}">
<button id="allow" name="decision" value="allow">Allow</button>
<button name="decision" value="deny">Deny</button>
</form>
<p><small>A demo provider: it allows by itself in two seconds.</small></p>
<script>setTimeout(() => document.getElementById("allow").click(), 2000)</script>"""
        return page("Demo Calendar", body)

    async def decide(request: Request) -> Response:
        form = await read_form(request)
        pending = cal.consents.pop(str(form.get("consent", "")), None)
        if pending is None:
            return page("This request has ended", "<p>Go back to the application and try again.</p>", 400)
        grant, state = pending
        if form.get("decision") != "allow":
            return back_to_client(grant, state, error="access_denied")
        code = secrets.token_urlsafe(24)
        grant.expires = time.time() + CODE_LIFETIME
        cal.codes[code] = grant
        return back_to_client(grant, state, code=code)

    async def token(request: Request) -> Response:
        if not client_authenticated(request):
            return token_error("invalid_client", 401)
        form = await read_form(request)
        kind = form.get("grant_type")
        if kind == "authorization_code":
            grant = cal.codes.pop(str(form.get("code", "")), None)  # single use, even when wrong
            verifier = str(form.get("code_verifier", ""))
            if (
                grant is None
                or grant.expires < time.time()
                or grant.redirect_uri != form.get("redirect_uri")
                or not hmac.compare_digest(s256(verifier), grant.challenge)
            ):
                return token_error("invalid_grant")
            return issue_tokens(cal, grant.scope)
        if kind == "refresh_token":
            old = str(form.get("refresh_token", ""))
            if old not in cal.refresh:
                return token_error("invalid_grant")
            cal.refresh.discard(old)  # rotated: each refresh token works once
            return issue_tokens(cal, SCOPE)
        return token_error("unsupported_grant_type")

    async def events(request: Request) -> Response:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        expiry = cal.access.get(value.strip()) if scheme.lower() == "bearer" else None
        if expiry is None or expiry < time.time():
            return JSONResponse(
                {"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        if request.method == "GET":
            return JSONResponse({"owner": USER, "events": cal.events})
        event = await request.json()
        if not isinstance(event, dict) or not isinstance(event.get("title"), str):
            return JSONResponse({"error": "an event needs a title"}, status_code=400)
        added = {"id": len(cal.events) + 1, "title": event["title"][:200], "date": str(event.get("date", ""))}
        cal.events.append(added)
        return JSONResponse({"owner": USER, **added}, status_code=201)

    async def home(request: Request) -> Response:
        rows = "".join(f"<li>{html.escape(e['date'])}: {html.escape(e['title'])}</li>" for e in cal.events)
        return page(f"{USER}'s Demo Calendar", f"<ul>{rows or '<li>Nothing planned yet.</li>'}</ul>")

    return Starlette(
        routes=[
            Route("/", home),
            Route("/authorize", authorize),
            Route("/authorize/decide", decide, methods=["POST"]),
            Route("/token", token, methods=["POST"]),
            Route("/api/events", events, methods=["GET", "POST"]),
        ]
    )


app = build()


def main() -> None:
    parser = argparse.ArgumentParser(description="Demo Calendar: a tiny OAuth provider for make demo")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    print(f"demo provider: Demo Calendar at http://127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
