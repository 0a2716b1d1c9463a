"""What a listing entry carries beside a name and text: the ``icons=``, ``annotations=`` and
``meta=`` of ``app.tool``, ``app.prompt`` and ``app.resource`` (a fixed resource's ``size=``
too), and what each revision is listed of them.

Rules:
- Icons and annotations are each given as a mapping in the spec's words
  (``{"readOnlyHint": True}``) or as the ``mcp_types`` model a server written with the
  official SDK already builds: ``Icon``; ``ToolAnnotations`` for a tool, ``Annotations``
  (audience, priority, lastModified) for a resource or template. A prompt has no
  annotations. Any pydantic model is read by its aliases, its unset fields left out.
- Only the spec's keys: a model's Python name (``read_only_hint``) is refused saying the
  spec's name, and a key of one's own saying to put it in the same decorator's ``meta=``
  (``_meta`` is where the spec lets a server add its own). The schema would carry such a
  key (it does not close these objects), so this is a choice: a misspelt hint
  (``readonlyHint``) is caught, and nothing is moved to ``_meta`` behind the author's back.
- Each spec field is checked against its type, strictly, and a field set to None is left
  out (the schema has no null there); ``lastModified`` must read as an ISO 8601 date-time,
  as the spec's text asks. A ``size`` is a fixed resource's, in bytes, a whole number
  from 0 to 2**53 - 1 (what every JSON reader holds exactly); a template has none (its
  resources differ). What the listing cannot carry is a ``TypeError`` at registration,
  ``app.<decorator>(): ...``, naming the option, the icon and the field. ``meta=`` is
  copied as the listing writes it (a later change to the caller's mapping changes no
  listing): a key that is not a string, NaN or an infinity (orjson would write null), a
  value JSON cannot carry or a nesting past 200 levels is refused naming where in it
  (``meta['a'][0]``). An empty list or mapping adds nothing.
- Revisions (``listed``): an entry is listed with the keys its revision's Tool, Prompt,
  Resource or ResourceTemplate has (``LACKS``). Icons came with 2025-11-25, so a session
  of 2025-06-18 or 2025-03-26 is listed every entry without them; ``title``, ``_meta`` and
  an annotation's ``lastModified`` came with 2025-06-18, so a 2025-03-26 session's
  entries leave them out (and annotations left empty). The rest goes to every revision
  the server speaks as it is (a tool's ``outputSchema`` too, which 2025-03-26 lacks: it
  goes with the ``structuredContent`` of the tool's results, not a listing's choice).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import mcp_types
import orjson
from pydantic import BaseModel, ValidationError

from mcp_elicit.wire.versions import REV_2025_06_18

__all__ = ["LACKS", "listed", "listing_extras"]

#: What the Tool, Prompt, Resource and ResourceTemplate of a revision the server speaks
#: lack of the keys it lists ("annotations.lastModified": that key of the annotations).
LACKS: dict[str, frozenset[str]] = {
    REV_2025_06_18: frozenset({"icons"}),
    "2025-03-26": frozenset({"icons", "title", "_meta", "annotations.lastModified"}),
}

#: The largest ``size`` listed: the largest integer every JSON reader keeps exact (RFC
#: 7493); past 2**64 the listing could not be written at all.
_MOST_BYTES = 2**53 - 1

#: How many levels of mappings and lists ``meta=`` may nest: the listing's message holds
#: it four levels down, and orjson writes no message nesting past 254.
_DEPTH = 200

#: The annotations each decorator takes (a prompt takes none).
_ANNOTATIONS: dict[str, type[BaseModel]] = {
    "tool": mcp_types.ToolAnnotations,
    "resource": mcp_types.Annotations,
}


def listed(wires: Iterable[dict[str, Any]], revision: str) -> list[dict[str, Any]]:
    """The listing entries (tools, prompts, resources or templates) as ``revision`` has them
    (see the rules)."""
    lacks = LACKS.get(revision)
    if lacks is None:
        return list(wires)
    return [_as_of(wire, lacks) for wire in wires]


def _as_of(wire: dict[str, Any], lacks: frozenset[str]) -> dict[str, Any]:
    annotations: dict[str, Any] = wire.get("annotations") or {}
    stale = "annotations.lastModified" in lacks and "lastModified" in annotations
    if lacks.isdisjoint(wire) and not stale:
        return wire
    entry = {key: value for key, value in wire.items() if key not in lacks}
    if stale:
        kept = {key: value for key, value in annotations.items() if key != "lastModified"}
        if kept:
            entry["annotations"] = kept
        else:
            del entry["annotations"]
    return entry


def listing_extras(
    decorator: Literal["tool", "prompt", "resource"],
    *,
    icons: object = None,
    annotations: object = None,
    meta: Mapping[str, Any] | None = None,
    size: object = None,
    template: bool = False,
) -> dict[str, Any]:
    """What ``app.<decorator>(...)``'s options add to its listing entry, in the spec's words
    (``icons``, ``annotations``, ``_meta``, ``size``), each only when given and not empty;
    ``TypeError`` naming what the listing cannot carry (see the rules). ``meta`` is a
    mapping already (``decorator_args.check_options``); ``template``: the resource is one."""
    try:
        icon_list = _icons(decorator, icons)
        annotated = {} if annotations is None else _annotations(decorator, annotations)
        sized = None if size is None else _size(size, template)
        written = _written("meta", meta, 0) if meta else None
    except TypeError as exc:
        raise TypeError(f"app.{decorator}(): {exc}") from None
    extras: dict[str, Any] = {}
    if sized is not None:
        extras["size"] = sized
    if annotated:
        extras["annotations"] = annotated
    if icon_list:
        extras["icons"] = icon_list
    if written:
        extras["_meta"] = written
    return extras


def _annotations(decorator: str, annotations: object) -> dict[str, Any]:
    model = _ANNOTATIONS[decorator]
    if not isinstance(annotations, Mapping | BaseModel):
        raise TypeError(f"annotations {annotations!r}: expected None or a mapping")
    wire = _checked(decorator, "annotations", annotations, model)
    stamp = wire.get("lastModified")
    if stamp is not None:
        try:
            dt.datetime.fromisoformat(stamp)
        except ValueError:
            raise TypeError(
                f"annotations: lastModified {stamp!r} is not an ISO 8601 date-time (2025-01-12T15:00:58Z)"
            ) from None
    return wire


def _icons(decorator: str, icons: object) -> list[dict[str, Any]]:
    if icons is None:
        return []
    if not isinstance(icons, list):
        raise TypeError(f"icons {icons!r}: expected None or a list of mappings")
    checked: list[dict[str, Any]] = []
    for n, icon in enumerate(icons):
        if not isinstance(icon, Mapping | BaseModel):
            raise TypeError(f"icons[{n}] {icon!r}: expected a mapping or an mcp_types.Icon")
        checked.append(_checked(decorator, f"icons[{n}]", icon, mcp_types.Icon))
    return checked


def _size(size: object, template: bool) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= _MOST_BYTES:
        raise TypeError(
            f"size {size!r}: expected None or the resource's size in bytes, a whole number "
            "from 0 to 2**53 - 1"
        )
    if template:
        raise TypeError(
            "size: a resource template has no size (the resources it serves differ); "
            "give size= to a fixed resource"
        )
    return size


def _written(where: str, value: object, depth: int) -> Any:
    """``value`` as the listing writes it, a copy of its own (what the caller's mapping holds
    may change later); ``TypeError`` naming where in it is what JSON cannot carry."""
    if value is None or type(value) in (str, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):  # orjson would write null
        raise TypeError(f"{_shown(where)} is {value!r}; JSON has no NaN or infinity: give None or a string")
    if isinstance(value, Mapping | list | tuple) and depth >= _DEPTH:
        raise TypeError(f"{_shown(where)}: nests deeper than {_DEPTH} levels (does it hold itself?)")
    if isinstance(value, Mapping):
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{_shown(where)}: the key {key!r} is not a string, as every JSON key is")
            copied[key] = _written(f"{where}[{key!r}]", item, depth + 1)
        return copied
    if isinstance(value, list | tuple):
        return [_written(f"{where}[{n}]", item, depth + 1) for n, item in enumerate(value)]
    try:  # a number, or what the wire's encoder writes of it (a datetime, an enum member...)
        return orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError as exc:
        raise TypeError(
            f"{_shown(where)} {value!r}: {exc}; give JSON values (text, numbers, lists, mappings)"
        ) from None


def _shown(where: str) -> str:
    """A path into ``meta=`` as a message shows it: cut at 200 characters."""
    return where if len(where) <= 200 else f"{where[:200]}..."


def _checked(
    decorator: str, where: str, given: Mapping[str, Any] | BaseModel, model: type[BaseModel]
) -> dict[str, Any]:
    if isinstance(given, BaseModel):
        wire: dict[str, Any] = given.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        wire = {key: value for key, value in given.items() if value is not None}
    spec_names = {info.alias or name: name for name, info in model.model_fields.items()}
    for key in wire:
        if key in spec_names:
            continue
        written = next((alias for alias, name in spec_names.items() if name == key), None)
        if written is not None:
            raise TypeError(f"{where}: {key} is written {written}")
        if isinstance(given, BaseModel) and type(given).__name__ != model.__name__:
            kind = type(given).__name__
            article = "an" if kind[:1] in "AEIOU" else "a"
            raise TypeError(
                f"{where}: {article} {kind} has {key!r}, which is not one of the spec's "
                f"({', '.join(spec_names)}): give an mcp_types.{model.__name__} or a mapping"
            )
        raise TypeError(
            f"{where}: {key!r} is not one of the spec's ({', '.join(spec_names)}); "
            f"a key of your own goes in the {decorator}'s meta="
        )
    try:
        model.model_validate(wire, strict=True)
    except ValidationError as exc:
        fault = exc.errors()[0]
        path = ".".join(str(part) for part in fault["loc"])
        raise TypeError(f"{where}: {path}: {fault['msg']}") from None
    return wire
