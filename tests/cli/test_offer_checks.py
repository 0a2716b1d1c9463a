"""The connection test's verdict on listed prompts, resources and resource templates."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_elicit.cli.offer_checks import (
    check_prompts,
    check_resource_templates,
    check_resources,
    uri_template_problem,
)
from mcp_elicit.cli.tool_checks import Finding


def said(findings: list[Finding]) -> list[tuple[str, str, str]]:
    return [(f.severity, f.code, f.message) for f in findings]


# ---- prompts -------------------------------------------------------------------------------


def test_well_formed_prompts_pass() -> None:
    prompts = [
        {
            "name": "plan",
            "description": "Plan an evening.",
            "arguments": [{"name": "city", "required": True}],
        },
        {
            "name": "greet",
            "title": "Greet",
            "description": "Say hello.",
            "icons": [],
            "_meta": {"x": 1},
            "arguments": [{"name": "who", "title": "Who", "description": "a name", "required": False}],
        },
        {"name": "bare", "description": "No arguments at all."},
    ]
    assert check_prompts(prompts) == []


def test_each_fault_of_a_prompt_is_named_with_the_prompt() -> None:
    prompts: list[Any] = [
        "plan",
        {"description": "No name."},
        {"name": 7, "description": "A number for a name."},
        {"name": "typed", "title": 3, "description": ["x"], "icons": {}, "_meta": "m"},
        {"name": "args", "description": "Bad arguments.", "arguments": {"city": {}}},
        {
            "name": "each_arg",
            "description": "Each argument wrong.",
            "arguments": ["city", {"title": "No name"}, {"name": "n", "required": "yes", "description": 1}],
        },
    ]
    assert said(check_prompts(prompts)) == [
        ("error", "definition", "prompt #1: must be a JSON object, not a string"),
        ("error", "definition", "prompt #2: no name"),
        ("error", "definition", "prompt #3: name must be a string, not a number"),
        ("error", "definition", "prompt 'typed': title: must be a string, not a number"),
        ("error", "definition", "prompt 'typed': description: must be a string, not an array"),
        ("error", "definition", "prompt 'typed': icons: must be an array, not an object"),
        ("error", "definition", "prompt 'typed': _meta: must be an object, not a string"),
        ("warning", "description", "prompt 'typed': no description; a person has only the name to go by"),
        ("error", "definition", "prompt 'args': arguments must be an array, not an object"),
        ("error", "definition", "prompt 'each_arg', arguments[0]: must be an object, not a string"),
        ("error", "definition", "prompt 'each_arg', arguments[1]: no name"),
        (
            "error",
            "definition",
            "prompt 'each_arg', arguments[2]: description: must be a string, not a number",
        ),
        (
            "error",
            "definition",
            "prompt 'each_arg', arguments[2]: required: must be true or false, not a string",
        ),
    ]


def test_repeated_names_are_said_once_each() -> None:
    prompts = [
        {"name": "plan", "description": "One."},
        {"name": "plan", "description": "Two."},
        {"name": "plan", "description": "Three."},
        {
            "name": "trip",
            "description": "Arguments twice.",
            "arguments": [{"name": "city"}, {"name": "day"}, {"name": "city"}],
        },
    ]
    assert said(check_prompts(prompts)) == [
        ("error", "duplicate", "prompt 'plan': 3 prompts are named 'plan'; a client reaches only one"),
        ("error", "duplicate", "prompt 'trip': 2 arguments are named 'city'; a client reaches only one"),
    ]


@pytest.mark.parametrize("description", [None, "", "   "])
def test_a_prompt_without_a_description_is_a_warning(description: str | None) -> None:
    prompt: dict[str, Any] = {"name": "plan"}
    if description is not None:
        prompt["description"] = description
    (finding,) = check_prompts([prompt])
    assert (finding.severity, finding.code) == ("warning", "description")


# ---- resources -----------------------------------------------------------------------------


def test_well_formed_resources_pass() -> None:
    resources = [
        {"uri": "file:///notes.txt", "name": "notes"},
        {
            "uri": "bookings://restaurants",
            "name": "restaurants",
            "title": "Restaurants",
            "description": "All of them.",
            "mimeType": "application/json",
            "size": 120,
            "annotations": {"audience": ["user"], "priority": 0.5},
            "icons": [],
            "_meta": {},
        },
        {"uri": "urn:isbn:0451450523", "name": "a book"},
    ]
    assert check_resources(resources) == []


def test_each_fault_of_a_resource_is_named_with_the_resource() -> None:
    resources: list[Any] = [
        None,
        {"name": "nowhere"},
        {"uri": "file:///a.txt"},
        {"uri": "notes.txt", "name": "relative"},
        {"uri": "file:///my notes.txt", "name": "spaced"},
        {"uri": "file:///b", "name": "typed", "mimeType": 1, "size": "12", "annotations": []},
        {"uri": "file:///c", "name": "flag", "size": True},
        {"uri": "file:///d", "name": "d1"},
        {"uri": "file:///d", "name": "d2"},
    ]
    assert said(check_resources(resources)) == [
        ("error", "definition", "resource #1: must be a JSON object, not null"),
        ("error", "definition", "resource #2: no uri"),
        ("error", "definition", "resource 'file:///a.txt': no name"),
        (
            "error",
            "uri",
            "resource 'notes.txt': not an absolute URI (it needs a scheme such as file: or https:, and no spaces)",
        ),
        (
            "error",
            "uri",
            "resource 'file:///my notes.txt': not an absolute URI "
            "(it needs a scheme such as file: or https:, and no spaces)",
        ),
        ("error", "definition", "resource 'file:///b': mimeType: must be a string, not a number"),
        ("error", "definition", "resource 'file:///b': annotations: must be an object, not an array"),
        ("error", "definition", "resource 'file:///b': size must be an integer, not '12'"),
        ("error", "definition", "resource 'file:///c': size must be an integer, not True"),
        (
            "error",
            "duplicate",
            "resource 'file:///d': 2 resources have the URI 'file:///d'; a client reaches only one",
        ),
    ]


# ---- resource templates --------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "bookings://menu/{restaurant}",
        "file:///{+path}",
        "https://example.com/search{?q,lang}",
        "https://example.com/{#section}",
        "db://{schema}.{table}{;keys*}",
        "x://{a}/{b:3}{/path*}{&more}",
        "x://{user.name}/%20{%41b}",
        "{+base}/items",
        "no-variables-at-all:here",
    ],
)
def test_rfc_6570_templates_pass(template: str) -> None:
    assert uri_template_problem(template) is None
    assert check_resource_templates([{"uriTemplate": template, "name": "t"}]) == []


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("x://{id", "the brace at offset 4 is never closed"),
        ("x://{}", "'{}' is not a valid expression"),
        ("x://{a b}", "'{a b}' is not a valid expression"),
        ("x://{a-b}", "'{a-b}' is not a valid expression"),
        ("x://{a:0}", "'{a:0}' is not a valid expression"),
        ("x://{a:10000}", "'{a:10000}' is not a valid expression"),
        ("x://{a,}", "'{a,}' is not a valid expression"),
        ("x://{!a}", "'{!a}' is not a valid expression"),
        ("x://{a..b}", "'{a..b}' is not a valid expression"),
        ("x://a}", "'}' at offset 5 is not allowed outside an expression"),
        ("x://a b/{c}", "' ' at offset 5 is not allowed outside an expression"),
        ("x://a/%zz", "'%' at offset 6 is not allowed outside an expression"),
        ("x://{{a}}", "'{{a}' is not a valid expression"),
    ],
)
def test_what_is_not_rfc_6570_is_said_precisely(template: str, problem: str) -> None:
    found = uri_template_problem(template)
    assert found is not None and found.startswith(problem), found
    (finding,) = check_resource_templates([{"uriTemplate": template, "name": "t"}])
    assert finding.severity == "error" and finding.code == "uri-template"
    assert finding.message.startswith(
        f"resource template {template!r}: not an RFC 6570 URI template: {problem}"
    )


def test_each_fault_of_a_template_is_named_with_the_template() -> None:
    templates: list[Any] = [
        ["x://{a}"],
        {"name": "no pattern"},
        {"uriTemplate": "x://{a}"},
        {"uriTemplate": "x://{b}", "name": "b", "mimeType": [], "description": 5},
        {"uriTemplate": "x://{c}", "name": "c1"},
        {"uriTemplate": "x://{c}", "name": "c2"},
    ]
    assert said(check_resource_templates(templates)) == [
        ("error", "definition", "resource template #1: must be a JSON object, not an array"),
        ("error", "definition", "resource template #2: no uriTemplate"),
        ("error", "definition", "resource template 'x://{a}': no name"),
        ("error", "definition", "resource template 'x://{b}': description: must be a string, not a number"),
        ("error", "definition", "resource template 'x://{b}': mimeType: must be a string, not an array"),
        (
            "error",
            "duplicate",
            "resource template 'x://{c}': 2 resource templates have the pattern 'x://{c}'; a client reaches only one",
        ),
    ]
