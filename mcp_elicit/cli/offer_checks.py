"""The verdict on the prompts, resources and resource templates a server lists. No I/O.

Clients parse a whole listing at once (the TypeScript SDK rejects the page), so one
malformed entry can hide every other one. Each entry gets ``Finding``s, named after it:

* ``definition`` (error): not an object, a required member missing (a prompt's ``name``;
  a resource's ``name`` and ``uri``; a template's ``name`` and ``uriTemplate``) or a member
  of the wrong JSON type (``title``, ``description``, ``mimeType``, ``size``, ``icons``,
  ``annotations``, ``_meta``; a prompt argument's ``name``, ``title``, ``description``,
  ``required``). The rules are the same at 2025-11-25 and 2026-07-28.
* ``uri`` (error): a resource URI that is not absolute (no scheme) or holds spaces;
  ``uri-template`` (error): a template that is not RFC 6570 syntax (braces, operators,
  variable names, ``:n`` and ``*`` modifiers).
* ``duplicate`` (error): two prompts of one name, two resources at one URI, two templates
  of one pattern, or two arguments of one name in a prompt; a client can reach only one.
* ``description`` (warning): a prompt without one; a person picking it has only the name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from mcp_elicit.cli.tool_checks import Finding, wrong_types
from mcp_elicit.core.quoting import quoted
from mcp_elicit.errors import shown_repr
from mcp_elicit.forms.parse import json_kind

__all__ = ["check_prompts", "check_resource_templates", "check_resources"]

_COMMON: Final[dict[str, tuple[type, ...]]] = {
    "title": (str,),
    "description": (str,),
    "icons": (list,),
    "_meta": (Mapping,),
}
_RESOURCE: Final = {**_COMMON, "mimeType": (str,), "annotations": (Mapping,)}
_ARGUMENT: Final[dict[str, tuple[type, ...]]] = {
    "title": (str,),
    "description": (str,),
    "required": (bool,),
}
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_VARCHAR: Final = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC: Final = rf"{_VARCHAR}(?:\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\*)?"
_EXPRESSION: Final = re.compile(rf"\{{[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*\}}")
# RFC 6570 literals: anything but controls, space, and " ' < > \ ^ ` { | } (and % only
# as the start of a percent-encoding).
_LITERALS: Final = re.compile(r"(?:[^\x00-\x20\x7f\"'%<>\\^`{|}]|%[0-9A-Fa-f]{2})*")


def check_prompts(prompts: Sequence[object]) -> list[Finding]:
    """Findings on a ``prompts/list`` listing, each naming its prompt."""
    return _judge(prompts, "prompt", "name", ("name",), _COMMON, "prompts are named", _prompt)


def check_resources(resources: Sequence[object]) -> list[Finding]:
    """Findings on a ``resources/list`` listing, each naming its resource."""
    return _judge(
        resources, "resource", "uri", ("name", "uri"), _RESOURCE, "resources have the URI", _resource
    )


def check_resource_templates(templates: Sequence[object]) -> list[Finding]:
    """Findings on a ``resources/templates/list`` listing, each naming its template."""
    return _judge(
        templates,
        "resource template",
        "uriTemplate",
        ("name", "uriTemplate"),
        _RESOURCE,
        "resource templates have the pattern",
        _template,
    )


def _judge(
    items: Sequence[object],
    kind: str,
    key: str,
    required: tuple[str, ...],
    shapes: Mapping[str, tuple[type, ...]],
    repeated: str,
    more: Callable[[str, Mapping[str, Any]], list[Finding]],
) -> list[Finding]:
    """The findings on each entry of a listing, named after it by its ``key`` (else its
    position): required members, member types, what ``more`` finds, then repeats of
    ``key``."""
    counts, said = _counts(items, key), set[str]()
    findings: list[Finding] = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            findings.append(
                Finding(
                    "error", "definition", f"{kind} #{i + 1}: must be a JSON object, not {json_kind(item)}"
                )
            )
            continue
        value = item.get(key)
        who = f"{kind} {shown_repr(value)}" if isinstance(value, str) else f"{kind} #{i + 1}"
        findings += _required(who, item, *required)
        findings += wrong_types(item, shapes, who)
        findings += more(who, item)
        findings += _duplicate(who, counts, value, repeated, said)
    return findings


def _prompt(who: str, prompt: Mapping[str, Any]) -> list[Finding]:
    findings = _arguments(who, prompt.get("arguments"))
    description = prompt.get("description")
    if not isinstance(description, str) or not description.strip():
        findings.append(
            Finding("warning", "description", f"{who}: no description; a person has only the name to go by")
        )
    return findings


def _resource(who: str, resource: Mapping[str, Any]) -> list[Finding]:
    findings = []
    size = resource.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
        findings.append(Finding("error", "definition", f"{who}: size must be an integer, not {quoted(size)}"))
    uri = resource.get("uri")
    if isinstance(uri, str) and (not _SCHEME.match(uri) or _has_space(uri)):
        findings.append(
            Finding(
                "error",
                "uri",
                f"{who}: not an absolute URI (it needs a scheme such as file: or https:, and no spaces)",
            )
        )
    return findings


def _template(who: str, template: Mapping[str, Any]) -> list[Finding]:
    pattern = template.get("uriTemplate")
    problem = uri_template_problem(pattern) if isinstance(pattern, str) else None
    if problem is None:
        return []
    return [Finding("error", "uri-template", f"{who}: not an RFC 6570 URI template: {problem}")]


def uri_template_problem(template: str) -> str | None:
    """What makes ``template`` something other than an RFC 6570 URI template, or None."""
    position = 0
    while position < len(template):
        literal = _LITERALS.match(template, position)
        end = literal.end() if literal is not None else position
        if end == len(template):
            return None
        if template[end] != "{":
            return f"{template[end]!r} at offset {end} is not allowed outside an expression"
        expression = _EXPRESSION.match(template, end)
        if expression is None:
            close = template.find("}", end)
            if close < 0:
                return f"the brace at offset {end} is never closed"
            return f"{shown_repr(template[end : close + 1])} is not a valid expression ({{var}}, {{+var}}, {{?a,b}}, {{var:3}}, {{list*}})"
        position = expression.end()
    return None


def _arguments(who: str, arguments: object) -> list[Finding]:
    if arguments is None:
        return []
    if not isinstance(arguments, list):
        return [
            Finding("error", "definition", f"{who}: arguments must be an array, not {json_kind(arguments)}")
        ]
    names, said = _counts(arguments, "name"), set[str]()
    findings: list[Finding] = []
    for i, argument in enumerate(arguments):
        where = f"{who}, arguments[{i}]"
        if not isinstance(argument, Mapping):
            findings.append(
                Finding("error", "definition", f"{where}: must be an object, not {json_kind(argument)}")
            )
            continue
        findings += _required(where, argument, "name")
        findings += wrong_types(argument, _ARGUMENT, where)
        findings += _duplicate(who, names, argument.get("name"), "arguments are named", said)
    return findings


def _counts(items: Sequence[object], key: str) -> Counter[Any]:
    return Counter(i.get(key) for i in items if isinstance(i, Mapping) and isinstance(i.get(key), str))


def _required(who: str, item: Mapping[str, Any], *keys: str) -> list[Finding]:
    return [
        Finding(
            "error",
            "definition",
            f"{who}: no {key}"
            if key not in item
            else f"{who}: {key} must be a string, not {json_kind(item[key])}",
        )
        for key in keys
        if not isinstance(item.get(key), str)
    ]


def _duplicate(who: str, counts: Counter[Any], value: object, what: str, said: set[str]) -> list[Finding]:
    """One finding per repeated value (on its first entry), however many repeat it."""
    if not isinstance(value, str) or counts[value] < 2 or value in said:
        return []
    said.add(value)
    return [
        Finding(
            "error",
            "duplicate",
            f"{who}: {counts[value]} {what} {shown_repr(value)}; a client reaches only one",
        )
    ]


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)
