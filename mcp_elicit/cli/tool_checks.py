"""The verdict on each tool definition a server lists. No I/O.

Each tool gets ``Finding``s, each an ``error`` (clients will fail on it) or a ``warning``
(it works, but it is worse than it should be):

* ``definition`` (error): the tool does not fit the official ``Tool`` model (mcp-types).
* ``name`` (error): not 1 to 128 characters of ``A-Z a-z 0-9 _ - .`` (the 2025-11-25
  tool-name rule); ``duplicate-name`` (error): two tools of one name.
* ``description`` (warning): missing, empty, or only the name again; a model then has
  only the name to go by.
* ``input-schema`` (error): missing, not an object, ``type`` not ``"object"``, or not a
  valid JSON Schema (checked against the meta-schema of its ``$schema`` dialect, 2020-12
  when it names none), and no ``$ref`` within it points to nothing (``cli.schema_refs``;
  remote ones are never fetched). ``output-schema`` (error): the same
  for an ``outputSchema``, without the ``type`` rule. ``schema-dialect`` (warning): a
  ``$schema`` this checker does not know (checked as 2020-12).
* ``x-mcp-header`` (error at 2026-07-28, where the annotation exists; a warning on older
  revisions): an annotation a Streamable HTTP client must reject (the client's own rules,
  ``wire.headers``).

The meta-schema check is ``jsonschema``'s, imported on first use. It recurses, several
calls a level, so a schema nesting objects and arrays more than ``MAX_CHECKED_DEPTH`` (64)
levels deep is an error without being checked: the same verdict whatever the process's
recursion limit (jsonschema stops near 130 levels at Python's default; raised, it went on).
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from mcp_elicit.cli.output import SAID_MAX, fit
from mcp_elicit.cli.schema_refs import dangling_refs
from mcp_elicit.errors import shown_repr
from mcp_elicit.forms.parse import json_kind
from mcp_elicit.wire import headers as h
from mcp_elicit.wire.jsonrpc import nests_past
from mcp_elicit.wire.versions import is_modern

__all__ = ["MAX_CHECKED_DEPTH", "Finding", "Severity", "ToolVerdict", "check_tools", "wrong_types"]

Severity = Literal["error", "warning"]

#: The deepest a schema (or a value checked against one) nests and is still checked.
MAX_CHECKED_DEPTH: Final = 64
_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong: how bad, a stable code, and a sentence for a person."""

    severity: Severity
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"severity": self.severity, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ToolVerdict:
    """A tool as listed (name, title, description) and what is wrong with it."""

    name: str
    title: str | None
    description: str | None
    findings: tuple[Finding, ...]
    #: The argument names its ``inputSchema`` requires (what a call must give).
    required: tuple[str, ...] = ()

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "ok": not self.findings,
            "problems": [f.to_json() for f in self.findings],
        }


def check_tools(tools: Sequence[object], revision: str) -> list[ToolVerdict]:
    """A verdict per listed tool, in the order listed."""
    names = Counter(t.get("name") for t in tools if isinstance(t, Mapping) and isinstance(t.get("name"), str))
    return [_check(tool, revision, names) for tool in tools]


def _check(tool: object, revision: str, names: Counter[Any]) -> ToolVerdict:
    if not isinstance(tool, Mapping):
        finding = Finding("error", "definition", f"a tool must be a JSON object, not {json_kind(tool)}")
        return ToolVerdict("(not an object)", None, None, (finding,))
    findings: list[Finding] = []
    raw_name = tool.get("name")
    name = raw_name if isinstance(raw_name, str) else repr(raw_name)
    findings.extend(wrong_types(tool, _SHAPES))
    if isinstance(raw_name, str):
        if not _NAME.fullmatch(raw_name):
            findings.append(
                Finding(
                    "error",
                    "name",
                    f"the name {shown_repr(raw_name)} should be 1 to 128 characters of A-Z a-z 0-9 _ - . "
                    "(many clients refuse other names)",
                )
            )
        if names[raw_name] > 1:
            findings.append(
                Finding(
                    "error", "duplicate-name", f"{names[raw_name]} tools are named {shown_repr(raw_name)}"
                )
            )
    description = tool.get("description")
    if not isinstance(description, str) or not description.strip():
        findings.append(
            Finding("warning", "description", "no description: a model has only the name to go by")
        )
    elif isinstance(raw_name, str) and _words(description) == _words(raw_name):
        findings.append(
            Finding("warning", "description", "the description only repeats the name: say what the tool does")
        )
    input_schema = tool.get("inputSchema")
    findings.extend(_schema(input_schema, "input-schema", "inputSchema", need_object=True))
    if "outputSchema" in tool:
        findings.extend(_schema(tool["outputSchema"], "output-schema", "outputSchema", need_object=False))
    if isinstance(input_schema, Mapping):
        try:
            h.header_params(input_schema)
        except h.InvalidHeaderSpec as exc:
            severity: Severity = "error" if is_modern(revision) else "warning"
            findings.append(
                Finding(
                    severity, "x-mcp-header", f"{exc}; Streamable HTTP clients at 2026-07-28 drop this tool"
                )
            )
    title = tool.get("title")
    required = input_schema.get("required") if isinstance(input_schema, Mapping) else None
    return ToolVerdict(
        name,
        title if isinstance(title, str) else None,
        description if isinstance(description, str) else None,
        tuple(_dedupe(findings)),
        tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else (),
    )


def _words(text: str) -> str:
    return " ".join(re.split(r"[\s_.\-]+", text.strip().casefold()))


_SHAPES: dict[str, tuple[type, ...]] = {
    "title": (str,),
    "description": (str,),
    "annotations": (Mapping,),
    "icons": (list,),
    "execution": (Mapping,),
    "_meta": (Mapping,),
}


def wrong_types(
    item: Mapping[str, Any], shapes: Mapping[str, tuple[type, ...]], who: str = ""
) -> list[Finding]:
    """The members of a definition that are present without the JSON type the schema
    gives them (``who`` prefixes each message).

    (Checked by hand rather than with mcp_types' models: importing mcp_types builds every
    wire model, which would double the connection test's own start-up.)"""
    findings = []
    for key, kinds in shapes.items():
        value = item.get(key)
        if value is not None and not isinstance(value, kinds):
            want = _WANT.get(kinds, "an object")
            where = f"{who}: {key}" if who else key
            findings.append(
                Finding("error", "definition", f"{where}: must be {want}, not {json_kind(value)}")
            )
    return findings


_WANT: dict[tuple[type, ...], str] = {(str,): "a string", (list,): "an array", (bool,): "true or false"}


def _schema(schema: object, code: str, key: str, *, need_object: bool) -> list[Finding]:
    if schema is None:
        return [Finding("error", code, f"no {key}")]
    if not isinstance(schema, Mapping):
        return [Finding("error", code, f"{key} must be a JSON object, not {json_kind(schema)}")]
    findings: list[Finding] = []
    if need_object and schema.get("type") != "object":
        findings.append(
            Finding(
                "error",
                code,
                f'{key} must have "type": "object" at its root, not {shown_repr(schema.get("type"))}',
            )
        )
    jsonschema: Any = importlib.import_module("jsonschema")  # untyped; imported on first use
    validator = jsonschema.validators.validator_for(dict(schema), default=None)
    if validator is None:
        if "$schema" in schema:
            findings.append(
                Finding(
                    "warning",
                    "schema-dialect",
                    f"{key} names the unknown dialect {shown_repr(schema['$schema'])}; checked as JSON Schema 2020-12",
                )
            )
        validator = jsonschema.Draft202012Validator
    too_deep = Finding("error", code, f"{key} is nested too deeply to check as a JSON Schema")
    if nests_past(schema, MAX_CHECKED_DEPTH):
        return [*findings, too_deep]
    try:
        validator.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        where = exc.json_path.replace("$", key, 1)
        findings.append(
            Finding(
                "error",
                code,
                f"{key} is not a valid JSON Schema: at {fit(where, SAID_MAX)}, {fit(exc.message, SAID_MAX, length=True)}",
            )
        )
    except RecursionError:  # within MAX_CHECKED_DEPTH, on a stack already deep
        findings.append(too_deep)
    else:
        for where, ref in dangling_refs(schema, key):
            said = f"{key} has a $ref {fit(repr(ref), SAID_MAX)} at {fit(where, SAID_MAX)}"
            findings.append(Finding("error", code, f"{said} that points to nothing in the schema"))
    return findings


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str]] = set()
    out = []
    for finding in findings:
        key = (finding.code, finding.message)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out
