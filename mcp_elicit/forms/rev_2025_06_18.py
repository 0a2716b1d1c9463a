"""A form as MCP 2025-06-18 says it: the ``requestedSchema`` of that revision.

2025-06-18 brought form elicitation with a smaller vocabulary than 2025-11-25: a field is
a string (length bounds, one of the four formats), a number or integer (bounds), a
boolean, or a single-select (``enum``, its titles as ``enumNames``). It has no
multi-select (``array``), no ``oneOf`` of titled options, and a ``default`` on a boolean
only.

Rules:

* A titled single-select is said as ``enum`` + ``enumNames``, in the options' order; an
  untitled one as ``enum``, as on 2025-11-25.
* A default other than a boolean's is left out: the client shows that field empty (the
  handler's default is not sent; nothing fills it in for the person).
* A form holding a multi-select cannot be said: ``unsayable`` names its first such field,
  and the caller refuses to ask it rather than send what the client cannot show.
* Everything else is sent as 2025-11-25 sends it (the same keys, in the same order), so a
  form is checked and its answers read by the same ``FormSchema``.
"""

from __future__ import annotations

from typing import Any

from mcp_elicit.forms.fields import Boolean, Choice, FieldSpec, MultiChoice
from mcp_elicit.forms.schema import FormSchema

__all__ = ["requested_schema", "unsayable"]


def unsayable(form: FormSchema) -> FieldSpec | None:
    """The first field of ``form`` that 2025-06-18 has no words for (a multi-select), or None."""
    return next((spec for spec in form.fields if isinstance(spec, MultiChoice)), None)


def requested_schema(form: FormSchema) -> dict[str, Any]:
    """``form``'s ``requestedSchema`` at 2025-06-18 (a fresh copy). ``form`` must hold no
    field ``unsayable`` names (a ``ValueError`` otherwise)."""
    wire = form.wire
    properties = {spec.name: _field(spec, wire["properties"][spec.name]) for spec in form.fields}
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if "required" in wire:
        out["required"] = list(wire["required"])
    return out


def _field(spec: FieldSpec, said: dict[str, Any]) -> dict[str, Any]:
    """``spec`` at 2025-06-18, from ``said``, its 2025-11-25 wire form."""
    if isinstance(spec, MultiChoice):
        raise ValueError(f"field {spec.name!r} is a multi-select, which MCP 2025-06-18 does not have")
    out = {key: value for key, value in said.items() if key not in ("oneOf", "default")}
    if isinstance(spec, Choice) and "oneOf" in said:
        out["enum"] = [option.value for option in spec.options]
        out["enumNames"] = [option.title for option in spec.options]
    if isinstance(spec, Boolean) and "default" in said:
        out["default"] = said["default"]
    return out
