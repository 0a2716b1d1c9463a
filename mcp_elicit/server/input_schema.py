"""Arguments checked against a tool's explicit ``input_schema=`` (and structured results
against its ``outputSchema``, given or derived from its return type, the same way).

A schema derived from the type hints is enforced by binding the arguments to the
signature. An explicit one says more than the signature can (``if``/``then``, ``anyOf``,
``additionalProperties``, patterns...), so the arguments are validated against it first,
with ``jsonschema``, before they are bound.

Rules:

* The schema is checked against its meta-schema when the tool is defined: a schema that
  is not valid JSON Schema is refused there, naming the tool, the place and the rule.
* The dialect is the one ``$schema`` names; without it, or for a dialect ``jsonschema``
  does not know (logged), 2020-12 (the MCP default).
* ``format`` is an annotation, as JSON Schema 2020-12 says by default: not asserted.
* References resolve inside the schema only (and to the dialects' meta-schemas, which
  ship with ``jsonschema``); a remote ``$ref`` is never fetched, and a call that needs one
  is answered with a tool error saying so (and logged).
* A failed check is a tool result with ``isError`` listing what is wrong (at most
  ``MAX_FAULTS`` faults, each with its place), so the model can correct the call.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["MAX_FAULTS", "ArgumentsCheck", "compile_input_schema"]

log = logging.getLogger("mcp_elicit.server")

MAX_FAULTS: Final = 5

#: ``check(arguments)``: None when they fit, else what is wrong, for the model to read.
ArgumentsCheck = Callable[[Any], str | None]


def _where(root: str, path: Any) -> str:
    return root + "".join(f"[{p!r}]" if isinstance(p, str) else f"[{p}]" for p in path)


def compile_input_schema(
    tool: str, schema: Mapping[str, Any], *, field: str = "input_schema", root: str = "arguments"
) -> ArgumentsCheck:
    """Check ``schema`` and return the check of a call's arguments (or, with ``field`` and
    ``root`` naming them, of another value: ``output_schema``, ``structuredContent``)
    against it.

    Raises ValueError, naming ``tool``, when ``schema`` is not valid JSON Schema."""
    jsonschema: Any = importlib.import_module("jsonschema")  # untyped; loaded only when a tool needs it
    unresolvable: Any = importlib.import_module("referencing.exceptions").Unresolvable
    cls = jsonschema.validators.validator_for(schema, default=None)
    if cls is None:
        if "$schema" in schema:
            log.warning(
                "tool %s: %s names the unknown dialect %r; checked as JSON Schema 2020-12",
                tool,
                field,
                schema["$schema"],
            )
        cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the root"
        raise ValueError(
            f"tool {tool!r}: {field} is not a valid JSON Schema at {where}: {exc.message}"
        ) from None
    # The meta-schemas only: without a registry, jsonschema falls back on a resolver that
    # fetches any other URL a $ref names (the spec forbids fetching by default).
    validator = cls(dict(schema), registry=importlib.import_module("jsonschema_specifications").REGISTRY)

    def check(value: Any) -> str | None:
        value = dict(value) if isinstance(value, Mapping) else value
        try:
            faults = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path)))
        except unresolvable as exc:
            log.error("tool %s: its %s has a reference that cannot be resolved: %s", tool, field, exc)
            return (
                f"the tool's {field} has a $ref that cannot be resolved ({exc}); references "
                "are resolved inside the schema only and never fetched"
            )
        if not faults:
            return None
        shown = [f"{_where(root, f.absolute_path)}: {f.message}" for f in faults[:MAX_FAULTS]]
        more = len(faults) - MAX_FAULTS
        return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")

    return check
