"""Reading a form some other program wrote: keywords beyond the flat subset, taken in.

The official SDKs render ordinary models with JSON Schema keywords the subset does not
have (pydantic's ``Field(pattern=...)`` gives ``pattern``). Both revisions' schema.json
take such a form, JSON Schema ignores keywords a reader does not know, and the server
checks the answer anyway: a client that refused the form would leave the person nothing
to answer. :func:`relax` rewrites a ``requestedSchema`` into the subset before it is
parsed, and says what it did. Forms this toolkit's server defines never come here.

Rules:

- Only a keyword beside the ``type`` it applies to is taken in, and only when its value
  is well formed; anything else is left for the parser, which refuses it by name as
  before (nesting, ``$ref``, unknown types and formats are never taken in).
- ``pattern`` on a text field is dropped and never run: it is an ECMA-262 regular
  expression, which Python's ``re`` reads differently and a hostile server can make
  take exponential time. The person is told the pattern, so they can follow it.
- Each note names its field and is written for the person answering.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_elicit.errors import ValidationProblem

__all__ = ["Relaxed", "relax"]

#: At most this many characters of a pattern are shown to the person.
_SHOWN = 200


@dataclass(frozen=True, slots=True)
class Relaxed:
    """A ``requestedSchema`` rewritten into the subset, and what was dropped on the way."""

    schema: object
    notes: tuple[ValidationProblem, ...] = ()


def relax(obj: object) -> Relaxed:
    """``obj`` with the keywords beyond the subset that a reader can take in, taken in."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("properties"), Mapping):
        return Relaxed(obj)
    notes: list[ValidationProblem] = []
    properties = {
        name: _relax_field(name, prop, notes) if isinstance(prop, Mapping) else prop
        for name, prop in obj["properties"].items()
    }
    return Relaxed({**obj, "properties": properties}, tuple(notes))


def _relax_field(name: str, prop: Mapping[str, Any], notes: list[ValidationProblem]) -> Mapping[str, Any]:
    out = dict(prop)
    kind = out.get("type")
    if kind == "string" and isinstance(out.get("pattern"), str):
        pattern = out.pop("pattern")
        shown = pattern if len(pattern) <= _SHOWN else pattern[:_SHOWN] + "…"
        notes.append(
            ValidationProblem(
                name,
                f"should match the pattern {shown!r}, which this client does not check: "
                "the server may refuse an answer that does not",
            )
        )
    return out
