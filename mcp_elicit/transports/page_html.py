"""The HTML of the URL-mode pages (``transports.pages``), and the headers every page
carries. No I/O.

Rules:

* Server and flow text (the server's title or name, a secret's or provider's name, a
  user's name) is HTML-escaped wherever it goes; attributes are quoted.
* Every page: ``Cache-Control: no-store``, a strict Content-Security-Policy (no script
  but ``page_expiry``'s, by its hash; inline style only), no framing, no referrer.
* A page's title (its tab's name) says which server it is from.
"""

from __future__ import annotations

import html
from typing import Final

from starlette.responses import HTMLResponse

from mcp_elicit.server.flows import Flow
from mcp_elicit.transports.page_expiry import SCRIPT_SOURCE

__all__ = ["HEADERS", "connect_page", "done_page", "html_page", "refusal_page", "secret_form"]

#: What every page's response carries.
HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    f"frame-ancestors 'none'; base-uri 'none'; script-src {SCRIPT_SOURCE}",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}

_STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;
overflow-wrap:anywhere}
h1{font-size:1.4rem}.box{border:1px solid #ccc;border-radius:8px;padding:1rem 1.25rem}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}input[type=password]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
.row{display:flex;gap:.5rem;flex-wrap:wrap;margin-top:1rem}button{padding:.5rem 1rem;font-size:1rem;border-radius:6px;border:1px solid #888;background:#fff;cursor:pointer}
button.primary{background:#0b57d0;color:#fff;border-color:#0b57d0}.muted{color:#555;font-size:.9rem}
a.button{display:inline-block;padding:.5rem 1rem;font-size:1rem;border-radius:6px;text-decoration:none;background:#0b57d0;color:#fff}
"""


def html_page(
    title: str, body: str, status: int = 200, headers: dict[str, str] | None = None
) -> HTMLResponse:
    doc = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body><main>{body}</main></body></html>"
    )
    return HTMLResponse(doc, status_code=status, headers={**HEADERS, **(headers or {})})


def refusal_page(status: int, title: str, text: str, *, server: str) -> HTMLResponse:
    """A page refusing the request: ``title`` and ``text`` (escaped), with every page's
    headers; its tab's title also names the ``server`` that refused (its title, else its
    name), so that a person with several servers' pages open can tell which."""
    return html_page(
        f"{title} · {server}", f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>", status
    )


def secret_form(
    flow: Flow, csrf: str, stamp: str, whose: str, asking: str, expiry: str, problem: str | None = None
) -> HTMLResponse:
    """The page taking a secret: ``stamp`` is its form's (``page_stamp``); ``whose`` and
    ``expiry`` are the lines saying who asks and when the page expires (HTML);
    ``problem``, why the value sent was refused."""
    name = html.escape(flow.name)
    error = (
        f'<p id="problem" role="alert" style="color:#b00020">{html.escape(problem)}</p>' if problem else ""
    )
    body = f"""
<h1>Enter your {name}</h1>
{whose}
<div class="box">
<p>An application connected to this server needs <strong>{name}</strong>. It is stored encrypted on the
server, for you only; it is not shown to the application or its AI model.</p>
{error}
<form method="post">
<input type="hidden" name="csrf" value="{csrf}">
<input type="hidden" name="page" value="{html.escape(stamp)}">
<label for="value">{name}</label>
<input id="value" name="value" type="password" autocomplete="off" autofocus required maxlength="8192"
 {'aria-describedby="problem whose" aria-invalid="true"' if problem else 'aria-describedby="whose"'}>
<div class="row">
<button class="primary" name="action" value="submit" type="submit">Save</button>
<button name="action" value="decline" type="submit" formnovalidate>Decline</button>
<button name="action" value="cancel" type="submit" formnovalidate>Cancel</button>
</div>
</form>
</div>
{expiry}"""
    return html_page(f"{asking} asks for your {flow.name}", body)


def connect_page(
    flow: Flow, csrf: str, stamp: str, whose: str, asking: str, expiry: str, pages: str
) -> HTMLResponse:
    """The page leading to a third party's sign-in (under ``pages``, the pages' path);
    ``stamp`` is its form's (``page_stamp``)."""
    name = html.escape(flow.name)
    body = f"""
<h1>Connect to {name}</h1>
{whose}
<div class="box">
<p>An application connected to this server asks to use your <strong>{name}</strong> account. You sign in
on {name}'s own site; the access it grants is kept on the server, for you only, and is not shown to the
application or its AI model.</p>
<p><a class="button" href="{html.escape(pages)}/flows/{html.escape(flow.id)}/start">Continue to {name}</a></p>
<form method="post">
<input type="hidden" name="csrf" value="{csrf}">
<input type="hidden" name="page" value="{html.escape(stamp)}">
<div class="row">
<button name="action" value="decline" type="submit">Decline</button>
<button name="action" value="cancel" type="submit">Cancel</button>
</div>
</form>
</div>
{expiry}"""
    return html_page(f"{asking} asks to connect to {flow.name}", body)


def done_page(asking: str, flow: Flow, *, late: bool = False) -> HTMLResponse:
    """The page of a flow that ended, saying how; ``late``: the answer to a form that came
    once it had ended (sent twice, from another tab, back from history), which says that
    what the form sent was not used (409)."""
    if late:
        return _late_page(asking, flow)
    texts = {
        "complete": "Saved. You can close this tab and go back to your application.",
        "declined": "You declined. You can close this tab.",
        "cancelled": "Cancelled. You can close this tab.",
    }
    if flow.kind == "oauth":
        texts["complete"] = "Connected. You can close this tab."
        texts["failed"] = (
            f"Connecting to {flow.name} did not work. Go back to your application and try again."
        )
    text = texts.get(flow.status, "This request is finished. You can close this tab.")
    return html_page(f"Done · {asking}", f'<h1>Done</h1><p role="status">{html.escape(text)}</p>')


def _late_page(asking: str, flow: Flow) -> HTMLResponse:
    ended = {
        "complete": f"Your {flow.name} account had already been connected"
        if flow.kind == "oauth"
        else f"Your {flow.name} had already been saved",
        "declined": "This request had already been declined",
        "cancelled": "This request had already been cancelled",
    }.get(flow.status, "This request had already ended")
    text = (
        f"{ended} before this form arrived (sent twice, or from another tab), so what it sent was "
        "not used. You can close this tab."
    )
    return html_page(
        f"Already done · {asking}", f'<h1>Already done</h1><p role="status">{html.escape(text)}</p>', 409
    )
