"""The browser answerer's box for a URL-mode question. No I/O.

Rules: a URL is shown in full, split into ``client.url_consent`` parts (host and
registrable domain highlighted) with every warning; a refused URL gets no link at all.
The link opens a new top-level tab (``target="_blank"``, ``rel="noopener noreferrer"``),
written with two slashes after its scheme (``_link``) so the page's own address cannot
make it a path on this answer server.
Server text is made inert with ``form_text.clean``, then HTML-escaped, as on the rest of
the page (``web_pages``), and bounded: the URL shown keeps its host whole and cuts the rest
short past ``form_text.URL_MAX`` characters (``url_shown``); the link opens all of it.
The URL's paragraph is read right after the one saying what it is: a paragraph has no name
(ARIA prohibits naming it, and screen readers ignore an ``aria-labelledby`` on it).
"""

from __future__ import annotations

import html
from typing import Final

from mcp_elicit.client.url_consent import UrlVerdict, judge_url
from mcp_elicit.ui.form_text import SAID_MAX, clean, fit, url_shown

__all__ = ["url_box", "url_html"]


def _e(text: str, *, joiners: bool = True) -> str:
    """Server text, made inert and escaped for HTML text or a quoted attribute (a name in an
    address with every joiner by its code: ``joiners=False``)."""
    return html.escape(clean(text, joiners=joiners), quote=True)


_PART_CLASS: Final = {
    "scheme": "p-scheme",
    "userinfo": "p-userinfo",
    "host": "p-host",
    "domain": "p-domain",
    "port": "p-port",
    "rest": "p-rest",
}


def url_html(verdict: UrlVerdict) -> str:
    """The URL, each part in a span of its role (host and domain highlighted), the host
    whole and the rest cut short past ``URL_MAX`` characters (``form_text.url_shown``)."""
    parts, cut = url_shown(verdict)
    if verdict.refused:
        return html.escape("".join(text for _, text in parts) + cut, quote=True)
    spans = "".join(f'<span class="{_PART_CLASS[role]}">{html.escape(text)}</span>' for role, text in parts)
    return spans + html.escape(cut)


def url_box(qid: str, url: str, server: str) -> str:
    """A URL-mode question's box: the URL, where it goes, its warnings, and its link."""
    verdict = judge_url(url, server=server)
    out = [
        f'<div class="url-box{" refused" if verdict.refused else ""}" data-js hidden>',
        f'<p id="{qid}-url-label">The server asks you to open this web page:</p>',
        f'<p class="url" id="{qid}-url">{url_html(verdict)}</p>',
    ]
    if verdict.refused:
        out.extend(
            f'<p class="warning refuse">✗ {_e(fit(w.text, SAID_MAX))}</p>'
            if w.refuses
            else f'<p class="warning">⚠ {_e(fit(w.text, SAID_MAX))}</p>'
            for w in verdict.warnings
        )
        out.append('<p class="warning refuse"><strong>This address will not be opened.</strong></p>')
    else:
        rows = [f'<dt>Site</dt><dd class="site-name">{_e(verdict.site, joiners=False)}</dd>']
        if verdict.host != verdict.site:
            rows.append(f"<dt>Page on</dt><dd>{_e(verdict.host, joiners=False)}</dd>")
        if verdict.ascii_host != verdict.host:
            rows.append(f"<dt>To DNS</dt><dd>{_e(verdict.ascii_host, joiners=False)}</dd>")
        out.append(f'<dl class="site">{"".join(rows)}</dl>')
        if verdict.warnings:
            items = "".join(
                f'<li class="warning" data-code="{_e(w.code)}">{_e(fit(w.text, SAID_MAX))}</li>'
                for w in verdict.warnings
            )
            out.append(f'<ul class="warnings" aria-label="Warnings about this address">{items}</ul>')
        out.append(
            '<p class="muted">Nothing is opened or fetched unless you say so; it opens in a new tab '
            "of this browser, and you come back here when you are done.</p>"
        )
        out.append(
            f'<div class="actions url-actions"><a class="button primary open" id="{qid}-open" '
            f'href="{html.escape(_link(url), quote=True)}" target="_blank" rel="noopener noreferrer">Open the page</a>'
            f'<button type="button" class="done" id="{qid}-done" hidden>I&#39;m done</button></div>'
        )
        out.append(f'<p class="url-state" id="{qid}-state"></p>')
    out.append("</div>")
    return "\n".join(out)


def _link(url: str) -> str:
    """Where an http(s) URL's link goes, with exactly two slashes after its scheme. A browser
    given the URL alone skips however many slashes come there (``http:evil.example`` is
    evil.example, as the verdict says); read against this page's address, a URL of the
    page's own scheme (http) written with fewer would be a path on this answer server."""
    scheme, _, rest = url.partition(":")
    return f"{scheme.lower()}://{rest.lstrip('/')}"
