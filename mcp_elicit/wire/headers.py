"""Streamable HTTP request headers that mirror body fields (2026-07-28).

Rules:

* ``MCP-Protocol-Version`` mirrors ``_meta`` protocolVersion; ``Mcp-Method`` mirrors
  ``method``; ``Mcp-Name`` mirrors ``params.name`` (tools/call, prompts/get) or
  ``params.uri`` (resources/read) or ``params.taskId`` (tasks/get, tasks/update,
  tasks/cancel: the tasks extension); ``Mcp-Param-{Name}`` mirrors a tool argument whose
  schema carries ``x-mcp-header: Name``.
* A value that is not plain visible ASCII (or has leading/trailing whitespace, or looks
  like the sentinel itself) travels as ``=?base64?<base64 of UTF-8>?=``. A header value
  received with anything but visible ASCII, spaces and tabs is refused, never read as
  Latin-1 nor trimmed as Unicode white space (``OWS`` is all that is trimmed).
* ``x-mcp-header`` names are HTTP tokens, unique case-insensitively, on string, integer or
  boolean properties reachable from the root through ``properties`` only.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from mcp_elicit.errors import HeaderMismatch

__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "NOT_ASCII",
    "OWS",
    "PARAM_HEADER_PREFIX",
    "VERSION_HEADER",
    "InvalidHeaderSpec",
    "check_param_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "name_source",
    "param_value",
    "shown",
]

VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_HEADER_PREFIX: Final = "mcp-param-"

#: How much of a value an error message quotes: a header can be as long as the HTTP server
#: takes (tens of KB), and the error echoing it whole would be as long.
SHOWN_MAX: Final = 60


def shown(value: object) -> str:
    """``value`` as an error message quotes it: its repr, cut to ``SHOWN_MAX`` characters
    of the value, with how long it was when cut."""
    if isinstance(value, str) and len(value) > SHOWN_MAX:
        return f"{value[:SHOWN_MAX]!r}... ({len(value)} characters)"
    return repr(value)


_SENTINEL_START: Final = "=?base64?"
_SENTINEL_END: Final = "?="
_PLAIN = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?\Z")
#: A header a number is mirrored to: ASCII decimal digits, an optional sign, fraction and
#: exponent. Nothing else ``float()`` would take (``4_2``, other scripts' digits, ``nan``,
#: inner white space), each read differently or not at all by other parsers.
_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_MAX_SAFE_INT: Final = 2**53 - 1
_UNSAFE = re.compile(r"[^\t\x20-\x7e]")
#: The white space HTTP allows around a header value (RFC 9110 OWS): all that is trimmed.
OWS: Final = " \t"
#: What an error says of a header value holding other characters.
NOT_ASCII: Final = (
    "a header value holds only visible ASCII, spaces and tabs (no control characters); "
    "send any other value Base64-encoded, as =?base64?...?="
)


class InvalidHeaderSpec(ValueError):
    """A tool's ``x-mcp-header`` annotations break the rules; the message says which."""


def encode_value(value: str) -> str:
    """The header form of ``value``: as is when plain ASCII, else the Base64 sentinel."""
    if (
        value
        and _PLAIN.match(value)
        and not (value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END))
    ):
        return value
    return _SENTINEL_START + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SENTINEL_END


def decode_value(raw: str) -> str:
    """The value a header carries; raises ``ValueError`` on a malformed sentinel."""
    raw = raw.strip(OWS)
    if raw.startswith(_SENTINEL_START) and raw.endswith(_SENTINEL_END) and len(raw) >= 11:
        encoded = raw[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError("malformed Base64 sentinel value") from None
    # isascii/isprintable first: far cheaper than the expression, and true of most values.
    if not (raw.isascii() and raw.isprintable()) and _UNSAFE.search(raw):
        raise ValueError(NOT_ASCII)
    return raw


def name_source(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The body value ``Mcp-Name`` mirrors for ``method``, or None when it has none."""
    if params is None:
        return None
    if method in ("tools/call", "prompts/get"):
        value = params.get("name")
    elif method == "resources/read":
        value = params.get("uri")
    elif method in ("tasks/get", "tasks/update", "tasks/cancel"):
        value = params.get("taskId")
    else:
        return None
    return value if isinstance(value, str) else None


def param_value(value: object) -> str | None:
    """The string form of an argument mirrored into ``Mcp-Param-*``; None means omit."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


def header_params(input_schema: Mapping[str, Any]) -> dict[tuple[str, ...], str]:
    """Map each ``x-mcp-header`` property path to its header name; raise if any is invalid.
    The schema is walked with a stack of its own, not by recursion: a server's tool may nest
    it as deep as a JSON message goes (a client reads every tool's annotations)."""
    found: dict[tuple[str, ...], str] = {}
    seen: dict[str, tuple[str, ...]] = {}
    # (schema, path, reachable), the next to look at last: depth first, in document order
    stack: list[tuple[object, tuple[str, ...], bool]] = [(input_schema, (), True)]
    while stack:
        schema, path, reachable = stack.pop()
        if isinstance(schema, Mapping):
            _check_annotation(schema, path, found, seen, reachable=reachable)
            stack.extend(reversed(_subschemas(schema, path, reachable=reachable)))
    return found


_TYPES_OK: Final = frozenset({"string", "integer", "boolean"})
_NESTING_KEYS: Final = (
    "items",
    "prefixItems",
    "additionalProperties",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
    "contains",
    "patternProperties",
    "dependentSchemas",
)


def _check_annotation(
    schema: Mapping[str, Any],
    path: tuple[str, ...],
    found: dict[tuple[str, ...], str],
    seen: dict[str, tuple[str, ...]],
    *,
    reachable: bool,
) -> None:
    if "x-mcp-header" not in schema:
        return
    where = ".".join(path) or "(root)"
    name = schema["x-mcp-header"]
    if not reachable or not path:
        raise InvalidHeaderSpec(f"x-mcp-header on {where} is not reachable through properties alone")
    if not isinstance(name, str) or not name:
        raise InvalidHeaderSpec(f"x-mcp-header on {where} must be a non-empty string")
    if not _TOKEN.match(name):
        raise InvalidHeaderSpec(f"x-mcp-header {name!r} on {where} is not a valid HTTP header name token")
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _TYPES_OK:
        raise InvalidHeaderSpec(
            f"x-mcp-header {name!r} on {where} must annotate a string, integer or boolean, not {kind!r}"
        )
    folded = name.lower()
    if folded in seen:
        raise InvalidHeaderSpec(f"x-mcp-header {name!r} on {where} duplicates another (case-insensitive)")
    seen[folded] = path
    found[path] = name


def _subschemas(
    schema: Mapping[str, Any], path: tuple[str, ...], *, reachable: bool
) -> list[tuple[object, tuple[str, ...], bool]]:
    """The schemas right under ``schema``, in document order: its properties (reachable when
    it is), then those under the other keywords (never reachable)."""
    out: list[tuple[object, tuple[str, ...], bool]] = []
    props = schema.get("properties")
    if isinstance(props, Mapping):
        out += [(sub, (*path, str(key)), reachable) for key, sub in props.items()]
    for key in _NESTING_KEYS:
        sub = schema.get(key)
        if isinstance(sub, Mapping):
            if key in ("$defs", "definitions", "patternProperties", "dependentSchemas"):
                out += [(inner, path, False) for inner in sub.values()]
            else:
                out.append((sub, path, False))
        elif isinstance(sub, list):
            out += [(inner, path, False) for inner in sub]
    return out


def integer_in_range(value: object) -> bool:
    """True when an integer argument may be mirrored (JavaScript safe range)."""
    return isinstance(value, int) and not isinstance(value, bool) and -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT


def check_param_headers(
    specs: Mapping[tuple[str, ...], str], arguments: Mapping[str, Any], headers: Mapping[str, str]
) -> None:
    """Check each ``Mcp-Param-*`` header against the argument it mirrors (HeaderMismatch).

    A value present needs its header; a header needs a value equal to it after decoding
    (numbers compared exactly as numbers: ``42.0`` is ``42``, ``42.0000000000000001`` is
    not); a null or absent value needs no header.
    """
    for path, name in specs.items():
        value: Any = arguments
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        raw = headers.get(PARAM_HEADER_PREFIX + name.lower())
        expected = param_value(value)
        if raw is None:
            if expected is not None:
                raise HeaderMismatch(
                    f"Header mismatch: the Mcp-Param-{name} header is required (argument {'.'.join(path)})"
                )
            continue
        try:
            got = decode_value(raw)
        except ValueError as exc:
            raise HeaderMismatch(f"Header mismatch: Mcp-Param-{name} is invalid: {exc}") from None
        if expected is None or not _same(got, value, expected):
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Param-{name} header value {shown(got)} does not match the argument value"
            )


def _same(header: str, value: object, expected: str) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if _NUMBER.match(header) is None:
            return False
        try:
            return Decimal(header) == Decimal(value)
        except ArithmeticError:  # an exponent beyond what Decimal holds: no such argument
            return False
    return header == expected
