"""Keeping URL-mode secrets out of uvicorn's access log, however the app is served.

A page link's one-time token (``?t=``) and a sign-in callback's ``code`` and ``state``
travel in the query of the hosted pages' paths, and uvicorn's access log (on by default)
writes each request's path with its query. ``StreamableHTTP`` adds :class:`PageSecrets`
to the ``uvicorn.access`` logger at its lifespan start-up and at its first request (a
mounted app may get no lifespan events), once per process.

Rules: only a path whose (percent-decoded) path holds the pages' prefix
(``/mcp-elicit/``, under any mount) is touched; there, the value of each parameter named
``t``, ``code`` or ``state`` (names percent-decoded, as the pages read them) becomes
``…``, and the other parameters stay as they were. Another ASGI server's log is not
covered.
"""

from __future__ import annotations

import logging
from typing import Final
from urllib.parse import unquote, unquote_plus

from mcp_elicit.server.url_mode import PAGES_PATH

__all__ = ["SECRET_PARAMETERS", "PageSecrets", "keep_page_secrets_out", "redact_page_query"]

#: The query parameters of the pages that carry a secret.
SECRET_PARAMETERS: Final = frozenset({"t", "code", "state"})

_PAGES: Final = PAGES_PATH + "/"


def redact_page_query(target: str) -> str:
    """``target`` (a path and query as logged) with the pages' secret parameters hidden."""
    path, mark, query = target.partition("?")
    if not mark or _PAGES not in unquote(path):
        return target
    kept = []
    for part in query.split("&"):
        name, equals, _ = part.partition("=")
        kept.append(f"{name}=…" if equals and unquote_plus(name) in SECRET_PARAMETERS else part)
    return f"{path}?{'&'.join(kept)}"


class PageSecrets(logging.Filter):
    """Hides the pages' secret query parameters in a uvicorn access-log record, whose
    third argument is the path with its query."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], redact_page_query(args[2]), *args[3:])
        return True


_FILTER: Final = PageSecrets()


def keep_page_secrets_out() -> None:
    """Add :class:`PageSecrets` to the ``uvicorn.access`` logger, unless it is there."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, PageSecrets) for f in logger.filters):
        logger.addFilter(_FILTER)
