"""A tool's icons and annotations: what ``app.tool(icons=..., annotations=...)`` lists.

Rules:
- Each is given as a mapping in the spec's words (``{"readOnlyHint": True}``) or as the
  ``mcp_types`` model (``ToolAnnotations``, ``Icon``) a server written with the official
  SDK already builds; any pydantic model is read by its aliases, its unset fields left out.
- Only the spec's keys: a model's Python name (``read_only_hint``) is refused saying the
  spec's name, and a key of one's own saying to put it in the tool's ``meta=`` (``_meta``
  is where the spec lets a server add its own). The schema would carry such a key (it
  does not close these objects), so this is a choice: a misspelt hint (``readonlyHint``)
  is caught, and nothing is moved to ``_meta`` behind the author's back.
- Each spec field is checked against its type, strictly, and a field set to None is left
  out (the schema has no null there): what the listing cannot carry is a ``TypeError`` at
  registration, naming the option, the icon and the field.
- Icons came with 2025-11-25: a session of an earlier revision (2025-06-18, 2025-03-26)
  is listed its tools without them (``listed_tools``), since its Tool has no such key. The
  annotations go to every revision as they are: each one the server speaks has the same five.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types
from pydantic import BaseModel, ValidationError

from mcp_elicit.wire.versions import REV_2025_06_18

#: The revisions the server speaks whose Tool has no ``icons``.
WITHOUT_ICONS = frozenset({REV_2025_06_18, "2025-03-26"})


def listed_tools(wires: Iterable[dict[str, Any]], revision: str) -> list[dict[str, Any]]:
    """The tools' listing entries as ``revision`` has them (see the rules)."""
    if revision not in WITHOUT_ICONS:
        return list(wires)
    return [{k: v for k, v in wire.items() if k != "icons"} if "icons" in wire else wire for wire in wires]


def tool_annotations(annotations: object) -> dict[str, Any] | None:
    """``annotations`` as the listing's ``annotations`` object (None: none)."""
    if annotations is None:
        return None
    if not isinstance(annotations, Mapping | BaseModel):
        raise TypeError(f"annotations {annotations!r}: expected None or a mapping")
    return _checked("annotations", annotations, mcp_types.ToolAnnotations)


def tool_icons(icons: object) -> list[Mapping[str, Any]] | None:
    """``icons`` as the listing's ``icons`` array (None: none)."""
    if icons is None:
        return None
    if not isinstance(icons, list):
        raise TypeError(f"icons {icons!r}: expected None or a list of mappings")
    listed: list[Mapping[str, Any]] = []
    for n, icon in enumerate(icons):
        if not isinstance(icon, Mapping | BaseModel):
            raise TypeError(f"icons[{n}] {icon!r}: expected a mapping or an mcp_types.Icon")
        listed.append(_checked(f"icons[{n}]", icon, mcp_types.Icon))
    return listed


def _checked(where: str, given: Mapping[str, Any] | BaseModel, model: type[BaseModel]) -> dict[str, Any]:
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
        raise TypeError(
            f"{where}: {key!r} is not one of the spec's ({', '.join(spec_names)}); "
            "a key of your own goes in the tool's meta="
        )
    try:
        model.model_validate(wire, strict=True)
    except ValidationError as exc:
        fault = exc.errors()[0]
        path = ".".join(str(part) for part in fault["loc"])
        raise TypeError(f"{where}: {path}: {fault['msg']}") from None
    return wire
