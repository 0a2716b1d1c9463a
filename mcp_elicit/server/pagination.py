"""Pagination of list results (``tools/list``, ``prompts/list``...).

Rules: items come in registration order, ``page_size`` at a time; ``nextCursor`` is opaque
to the client (an encoded offset); a cursor the server did not issue, or one past the end
of a list that shrank, is -32602 saying what to do.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from mcp_elicit.errors import InvalidParams

__all__ = ["paginate"]


def paginate(
    params: Mapping[str, Any], key: str, page_size: int, items: list[dict[str, Any]]
) -> dict[str, Any]:
    """The page of ``items`` the request's ``cursor`` asks for, under ``key``."""
    cursor = params.get("cursor")
    start = 0
    if cursor is not None:
        start = _decode_cursor(cursor)
        if start > len(items):
            raise InvalidParams("Invalid params: the cursor is out of range (the list may have changed)")
    end = start + page_size
    result: dict[str, Any] = {key: items[start:end]}
    if end < len(items):
        result["nextCursor"] = base64.urlsafe_b64encode(f"o{end}".encode()).decode("ascii")
    return result


def _decode_cursor(cursor: object) -> int:
    try:
        if not isinstance(cursor, str):
            raise ValueError
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        if not text.startswith("o"):
            raise ValueError
        return int(text[1:])
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidParams(
            "Invalid params: unknown cursor; pass back a nextCursor exactly as received"
        ) from None
