"""The ``$ref``s in a JSON Schema that point to nothing in that schema. No I/O.

A client that compiles a tool's schema (Ajv, a model host) fails on a reference it cannot
resolve, so ``check`` names each one. Rules, to say nothing false:

* only references within the schema are followed: ``#`` and JSON Pointers ``#/...``
  (percent-decoded, then ``~1`` and ``~0`` unescaped); anchors (``#name``) and other
  documents are left alone;
* a subschema with its own ``$id`` sets another base, so nothing under it is followed;
* the values of ``const``, ``enum``, ``default`` and ``examples`` are data, not schemas;
  under ``properties``, ``$defs`` and the like every key is a name, whatever it spells.

The walk is a loop, not recursion: ``tool_checks`` has bounded the depth already, and the
width (thousands of properties) costs one pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import unquote

__all__ = ["dangling_refs"]

#: Keywords whose value is data: a ``$ref`` in it is a value, not a reference.
_DATA: Final = frozenset({"const", "enum", "default", "examples"})
#: Keywords whose value maps names to schemas: every key in it is a name.
_NAMED: Final = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def dangling_refs(schema: Mapping[str, object], key: str) -> list[tuple[str, str]]:
    """Each ``(where, ref)``: a local ``$ref`` at ``where`` (``key.properties.a``) that
    points to nothing in ``schema``, in the order found."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[object, str, bool]] = [(schema, key, False)]  # node, where, names only
    while stack:
        node, where, names = stack.pop()
        if isinstance(node, list):
            stack.extend((item, f"{where}[{n}]", False) for n, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, Mapping) or (node is not schema and not names and "$id" in node):
            continue
        ref = node.get("$ref")
        if not names and isinstance(ref, str) and not _resolves(schema, ref):
            found.append((where, ref))
        for name, value in reversed(list(node.items())):
            if names or name not in _DATA:
                stack.append((value, f"{where}.{name}", not names and name in _NAMED))
    return found


def _resolves(schema: Mapping[str, object], ref: str) -> bool:
    """Whether ``ref`` points into ``schema``; True for one this module does not follow."""
    if ref == "#":
        return True
    if not ref.startswith("#/"):
        return True  # an anchor, or another document
    node: object = schema
    for token in ref[2:].split("/"):
        step = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return False
    return True
