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
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_elicit.cli.tool_checks import Finding, wrong_types
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
    names, said = _counts(prompts, "name"), set[str]()
    findings: list[Finding] = []
    for i, prompt in enumerate(prompts):
        if not isinstance(prompt, Mapping):
            findings.append(_not_an_object("prompt", i, prompt))
            continue
        who = _who("prompt", i, prompt, "name")
        findings += _required(who, prompt, "name")
        findings += wrong_types(prompt, _COMMON, who)
        findings += _duplicate(who, names, prompt.get("name"), "prompts are named", said)
        findings += _arguments(who, prompt.get("arguments"))
        description = prompt.get("description")
        if not isinstance(description, str) or not description.strip():
            findings.append(
                Finding(
                    "warning", "description", f"{who}: no description; a person has only the name to go by"
                )
            )
    return findings


def check_resources(resources: Sequence[object]) -> list[Finding]:
    """Findings on a ``resources/list`` listing, each naming its resource."""
    uris, said = _counts(resources, "uri"), set[str]()
    findings: list[Finding] = []
    for i, resource in enumerate(resources):
        if not isinstance(resource, Mapping):
            findings.append(_not_an_object("resource", i, resource))
            continue
        who = _who("resource", i, resource, "uri")
        findings += _required(who, resource, "name", "uri")
        findings += wrong_types(resource, _RESOURCE, who)
        size = resource.get("size")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
            findings.append(Finding("error", "definition", f"{who}: size must be an integer, not {size!r}"))
        uri = resource.get("uri")
        if isinstance(uri, str) and (not _SCHEME.match(uri) or _has_space(uri)):
            findings.append(
                Finding(
                    "error",
                    "uri",
                    f"{who}: not an absolute URI (it needs a scheme such as file: or https:, and no spaces)",
                )
            )
        findings += _duplicate(who, uris, uri, "resources have the URI", said)
    return findings


def check_resource_templates(templates: Sequence[object]) -> list[Finding]:
    """Findings on a ``resources/templates/list`` listing, each naming its template."""
    patterns, said = _counts(templates, "uriTemplate"), set[str]()
    findings: list[Finding] = []
    for i, template in enumerate(templates):
        if not isinstance(template, Mapping):
            findings.append(_not_an_object("resource template", i, template))
            continue
        who = _who("resource template", i, template, "uriTemplate")
        findings += _required(who, template, "name", "uriTemplate")
        findings += wrong_types(template, _RESOURCE, who)
        pattern = template.get("uriTemplate")
        if isinstance(pattern, str):
            problem = uri_template_problem(pattern)
            if problem is not None:
                findings.append(
                    Finding("error", "uri-template", f"{who}: not an RFC 6570 URI template: {problem}")
                )
        findings += _duplicate(who, patterns, pattern, "resource templates have the pattern", said)
    return findings


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
            return f"{template[end : close + 1]!r} is not a valid expression ({{var}}, {{+var}}, {{?a,b}}, {{var:3}}, {{list*}})"
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


def _who(kind: str, index: int, item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return f"{kind} {value!r}" if isinstance(value, str) else f"{kind} #{index + 1}"


def _not_an_object(kind: str, index: int, item: object) -> Finding:
    return Finding(
        "error", "definition", f"{kind} #{index + 1}: must be a JSON object, not {json_kind(item)}"
    )


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
        Finding("error", "duplicate", f"{who}: {counts[value]} {what} {value!r}; a client reaches only one")
    ]


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)
