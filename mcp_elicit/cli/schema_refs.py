"""The ``$ref``s in a JSON Schema that point to nothing in that schema. No I/O.

A client that compiles a tool's schema (Ajv, a model host) fails on a reference it cannot
resolve, so ``check`` names each one. The ``referencing`` library (which ``jsonschema``
uses) knows, for the schema's dialect (``$schema``, else 2020-12), which keywords hold
subschemas and where each ``$id`` sets a base, so a ``$ref`` inside data (``const``,
``enum``, ``default``, ``examples``), inside an unknown keyword (``example``, ``x-...``),
or a property named ``$ref``, is never taken for a reference. To say nothing false, only
a JSON Pointer that leads nowhere is named; anchors and other documents are left alone.

The walk is a loop, not recursion: ``tool_checks`` has bounded the depth already, and the
width (thousands of properties) costs one pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from referencing import Registry, Resource
from referencing.exceptions import PointerToNowhere, Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

__all__ = ["dangling_refs"]


def dangling_refs(schema: Mapping[str, Any], key: str) -> list[tuple[str, str]]:
    """Each ``(where, ref)``: a local ``$ref`` at ``where`` (``key.properties.a``) that
    points to nothing in ``schema``, in the order found. A schema its own dialect's
    meta-schema refuses (``tool_checks`` says so first) may come back with fewer."""
    dialect = schema.get("$schema")
    spec = specification_with(dialect if isinstance(dialect, str) else "", default=DRAFT202012)
    found: list[tuple[str, str]] = []
    try:
        root: Resource[Any] = spec.create_resource(schema)
        registry: Registry[Any] = Registry().with_resource(root.id() or "", root).crawl()
        stack = [(root, registry.resolver(root.id() or ""), key)]
        while stack:
            resource, resolver, where = stack.pop()
            ref = resource.contents.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and _nowhere(resolver, ref):
                found.append((where, ref))
            subs = {
                id(sub.contents): sub for sub in resource.subresources() if isinstance(sub.contents, Mapping)
            }
            children = [
                (subs.pop(id(child)), at)
                for at, child in _children(resource.contents, where)
                if id(child) in subs
            ]
            stack.extend((sub, resolver.in_subresource(sub), at) for sub, at in reversed(children))
    except (AttributeError, TypeError):  # e.g. a list where the dialect has a schema
        pass
    return found


def _children(node: Mapping[str, Any], where: str) -> Iterator[tuple[str, object]]:
    """Each value one or two steps below ``node``, with where it is: the candidates to
    match against the subschemas ``referencing`` finds, which it gives without a path."""
    for name, value in node.items():
        yield f"{where}.{name}", value
        if isinstance(value, Mapping):
            yield from ((f"{where}.{name}.{k}", v) for k, v in value.items())
        elif isinstance(value, list):
            yield from ((f"{where}.{name}[{n}]", v) for n, v in enumerate(value))


def _nowhere(resolver: Any, ref: str) -> bool:
    """Whether the JSON Pointer ``ref`` leads to nothing (not: cannot be followed here)."""
    try:
        resolver.lookup(ref)
    except (PointerToNowhere, ValueError, TypeError):  # TypeError, ValueError: a step past a leaf
        return True
    except Unresolvable:  # under a nested $id whose document is not this one
        return False
    return False
