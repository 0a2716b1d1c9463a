"""Pagination of list results (``tools/list``, ``prompts/list``...).

Rules: items come in registration order, ``page_size`` at a time; ``nextCursor`` is opaque
to the client (an encoded offset, naming the list it belongs to). Only a cursor the server
could have given for this list is taken, spelled exactly as given: anything else (another
list's, a negative or reshaped offset, extra characters) is -32602 saying to pass
``nextCursor`` back as received, and one at or past the end of a list that shrank is
-32602 saying to start again. A page that is for no shared cache (``private``) marks its
``nextCursor`` so, and a page asked for with such a cursor is private too
(``cursor_private``). The spec makes each page a cacheable response of its own, with no
consistency across pages; this is our own choice: the cursor came from a list that could
differ by caller, and what the list holds may have changed between pages, so a page it
asks for is kept from shared caches rather than judged again.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from mcp_elicit.errors import InvalidParams

__all__ = ["cursor_private", "paginate"]

#: The list method each result key answers, for messages.
_METHODS = {
    "tools": "tools/list",
    "prompts": "prompts/list",
    "resources": "resources/list",
    "resourceTemplates": "resources/templates/list",
}
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*={0,2}")
_OFFSET = re.compile(r"[1-9][0-9]{0,9}")
_PRIVATE = "private"


def paginate(
    params: Mapping[str, Any], key: str, page_size: int, items: list[dict[str, Any]], *, private: bool = False
) -> dict[str, Any]:
    """The page of ``items`` the request's ``cursor`` asks for, under ``key``; its
    ``nextCursor`` carries ``private`` (or the cursor's own mark) on to the next page."""
    cursor = params.get("cursor")
    start = 0
    if cursor is not None:
        start, marked = _decode_cursor(cursor, key)
        private = private or marked
        if start >= len(items):
            raise InvalidParams(
                f"Invalid params: the cursor is past the end of {_METHODS.get(key, key)} (the list changed "
                "since it was given); list again without a cursor"
            )
    end = start + page_size
    result: dict[str, Any] = {key: items[start:end]}
    if end < len(items):
        result["nextCursor"] = _encode_cursor(key, end, private)
    return result


def cursor_private(params: Mapping[str, Any], key: str) -> bool:
    """Whether the request's ``cursor`` is one a private page of ``key`` gave (a cursor
    that is not this server's is refused by ``paginate``)."""
    cursor = params.get("cursor")
    try:
        return cursor is not None and _decode_cursor(cursor, key)[1]
    except InvalidParams:
        return False


def _encode_cursor(key: str, offset: int, private: bool) -> str:
    text = f"{key}:{offset}:{_PRIVATE}" if private else f"{key}:{offset}"
    return base64.urlsafe_b64encode(text.encode()).decode("ascii")


def _decode_cursor(cursor: object, key: str) -> tuple[int, bool]:
    """The offset in ``cursor`` and whether it is private, when it is exactly as this
    server gives them for ``key``."""
    if isinstance(cursor, str) and _BASE64URL.fullmatch(cursor):
        try:
            text = base64.urlsafe_b64decode(cursor).decode("ascii")
        except (ValueError, binascii.Error, UnicodeError):
            text = ""
        name, _, rest = text.partition(":")
        offset, _, mark = rest.partition(":")
        private = mark == _PRIVATE
        if name == key and _OFFSET.fullmatch(offset) and _encode_cursor(key, int(offset), private) == cursor:
            return int(offset), private
    raise InvalidParams(
        f"Invalid params: the cursor is not one {_METHODS.get(key, key)} gave; pass back a nextCursor "
        "exactly as received, or list again without a cursor"
    )
