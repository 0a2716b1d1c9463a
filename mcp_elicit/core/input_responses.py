"""The ``inputResponses`` a request carries (a multi round-trip retry, ``tasks/update``):
what every one of them must be before any answer in it is read. No I/O.

Rules:

* It is bounded: at most ``MAX_INPUT_RESPONSES`` entries, ``MAX_INPUT_RESPONSES_BYTES``
  encoded and ``MAX_INPUT_RESPONSES_DEPTH`` levels of objects and arrays; past any of
  them, -32602 naming the limit and by how much.
* Each value is a result (the schema's ``InputResponse``, an object), under any key,
  asked or not: any other value is -32602 naming the key and what it got. Whether an
  object answers its question is the question's to judge; an object under a key nobody
  asked is the request's to ignore.
* A key is quoted as JSON writes a string: a ``"`` or ``\\`` in it escaped, and so is
  every character a terminal could act on (a control character, a line or direction
  mark), so a key cannot end the quote early nor act on a log; cut at ``QUOTED``
  characters, its length said.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Final

import orjson

from mcp_elicit.core.quoting import QUOTED
from mcp_elicit.errors import InvalidParams
from mcp_elicit.forms.parse import json_kind
from mcp_elicit.wire.jsonrpc import nests_past

__all__ = [
    "MAX_INPUT_RESPONSES",
    "MAX_INPUT_RESPONSES_BYTES",
    "MAX_INPUT_RESPONSES_DEPTH",
    "check_input_responses",
]

MAX_INPUT_RESPONSES_BYTES: Final = 256 * 1024
MAX_INPUT_RESPONSES: Final = 64
#: Levels of nesting an ``inputResponses`` value may have: well within what the state's
#: encoder takes (about 250), which the answers it records must pass through again.
MAX_INPUT_RESPONSES_DEPTH: Final = 64


def check_input_responses(responses: dict[str, Any]) -> None:
    """-32602 when an ``inputResponses`` object is past the limits (entries, bytes, levels of
    nesting, the object itself the first), or holds a value that is not an object (the
    schema's ``InputResponse`` is a result) under any key, asked or not; the same for every
    request that carries one. An object under a key nobody asked is left to be ignored."""
    if len(responses) > MAX_INPUT_RESPONSES:
        raise _too_large(f"{len(responses)} entries, at most {MAX_INPUT_RESPONSES}")
    try:
        size = len(orjson.dumps(responses))
    except orjson.JSONEncodeError:  # nested past what the encoder takes
        raise _too_deep_error() from None
    if size > MAX_INPUT_RESPONSES_BYTES:
        raise _too_large(f"{size:,} bytes encoded, at most {MAX_INPUT_RESPONSES_BYTES:,}")
    # each level takes two bytes at least ("[]"): a short value cannot be too deep
    if size > 2 * MAX_INPUT_RESPONSES_DEPTH and nests_past(responses, MAX_INPUT_RESPONSES_DEPTH):
        raise _too_deep_error()
    for key, value in responses.items():
        if not isinstance(value, dict):
            raise InvalidParams(
                f"Invalid params: {_entry(key)} must be an object "
                f"(the result answering that input request), not {json_kind(value)}"
            )


def _too_large(what: str) -> InvalidParams:
    """The -32602 for an ``inputResponses`` past the limit ``what`` says it passed."""
    return InvalidParams(f"Invalid params: inputResponses is too large: {what}")


def _too_deep_error() -> InvalidParams:
    return InvalidParams(
        "Invalid params: inputResponses is nested too deeply (at most "
        f"{MAX_INPUT_RESPONSES_DEPTH} levels of objects and arrays)"
    )


def _entry(key: str) -> str:
    """``inputResponses["key"]`` as a message names an entry: the key a JSON string, cut
    at ``QUOTED`` characters (its length then said after it)."""
    cut = key if len(key) <= QUOTED else f"{key[:QUOTED]}…"
    if not cut.isprintable() or '"' in cut or "\\" in cut:
        cut = "".join(_json_char(ch) for ch in cut)
    entry = f'inputResponses["{cut}"]'
    return entry if len(key) <= QUOTED else f"{entry} (a key of {len(key)} characters)"


def _json_char(ch: str) -> str:
    """``ch`` as it stands in a JSON string a terminal shows inert: as it is when it is
    printable (a space of any kind is), else as JSON escapes it (``\\u``, a surrogate pair
    past the Basic Multilingual Plane)."""
    if (ch.isprintable() or unicodedata.category(ch) == "Zs") and ch not in '"\\':
        return ch
    return json.dumps(ch)[1:-1]
