"""A prompt's ``icons=`` and ``meta=``; a resource's and a template's ``icons=``,
``annotations=`` and ``meta=``, a fixed resource's ``size=``: given as the tool's are (a
mapping in the spec's words or the ``mcp_types`` model a server written with the official
SDK or FastMCP already passes), listed in ``prompts/list``, ``resources/list`` and
``resources/templates/list`` as each revision has them, refused at registration when the
listing cannot carry them.

The prompt and resource decorators took none of them: ``@app.prompt(icons=...)`` and
``@app.resource(uri, annotations=...)`` were a ``TypeError`` for an unexpected keyword.
Icons came with 2025-11-25, so 2025-06-18 and 2025-03-26 sessions are listed none; a
title, ``_meta`` and an annotation's ``lastModified`` came with 2025-06-18, so a
2025-03-26 session is listed none of them (it was listed the title and ``_meta``). Every
message is checked against the official schema of its revision (at 2025-06-18 and
2025-03-26, where it is present)."""

from __future__ import annotations

import datetime as dt
import json
import runpy
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from mcp_elicit import Server
from mcp_elicit.transports.stdio_client import connect_stdio

from support.memory import MemoryClient, SessionClient
from support.peers import sdk_python
from support.procs import ROOT, cli
from support.wire import WireChecker

__all__ = ["sdk_python"]  # a fixture

ICON = "https://example.com/notes.png"
STAMP = "2026-01-12T15:00:58Z"
REVISIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]

SERVED = f"""
import mcp_types
from mcp_elicit import Server

app = Server("extras")


@app.prompt(
    title="Plan an evening",
    icons=[mcp_types.Icon(src="{ICON}", mimeType="image/png", sizes=["48x48"])],
    meta={{"example.com/kind": "plan"}},
)
def plan(city: str) -> str:
    \"\"\"Plan an evening out.\"\"\"
    return f"Plan an evening out in {{city}}."


@app.resource(
    "notes://today",
    title="Today",
    mime_type="text/plain",
    size=11,
    annotations=mcp_types.Annotations(audience=["user"], priority=0.5, lastModified="{STAMP}"),
    icons=[{{"src": "{ICON}", "theme": "dark"}}],
    meta={{"example.com/shelf": 3}},
)
def today() -> str:
    \"\"\"Today's note.\"\"\"
    return "A calm day."


@app.resource("notes://{{day}}", annotations={{"lastModified": "{STAMP}"}}, icons=[{{"src": "{ICON}"}}])
def note(day: str) -> str:
    \"\"\"One day's note.\"\"\"
    return f"{{day}}: nothing yet"
"""

#: What the latest revisions list of each, in the spec's words.
PROMPT = {
    "name": "plan",
    "description": "Plan an evening out.",
    "title": "Plan an evening",
    "arguments": [{"name": "city", "required": True}],
    "icons": [{"src": ICON, "mimeType": "image/png", "sizes": ["48x48"]}],
    "_meta": {"example.com/kind": "plan"},
}
RESOURCE = {
    "uri": "notes://today",
    "name": "today",
    "title": "Today",
    "description": "Today's note.",
    "mimeType": "text/plain",
    "size": 11,
    "annotations": {"audience": ["user"], "priority": 0.5, "lastModified": STAMP},
    "icons": [{"src": ICON, "theme": "dark"}],
    "_meta": {"example.com/shelf": 3},
}
TEMPLATE = {
    "uriTemplate": "notes://{day}",
    "name": "note",
    "description": "One day's note.",
    "annotations": {"lastModified": STAMP},
    "icons": [{"src": ICON}],
}


def as_listed(revision: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The prompt, resource and template as ``revision`` lists them: no icons before
    2025-11-25; no title, ``_meta`` nor ``lastModified`` (and so no annotations for the
    template) before 2025-06-18."""
    prompt, resource, template = dict(PROMPT), dict(RESOURCE), dict(TEMPLATE)
    if revision in ("2025-06-18", "2025-03-26"):
        for entry in (prompt, resource, template):
            del entry["icons"]
    if revision == "2025-03-26":
        for entry in (prompt, resource):
            del entry["title"], entry["_meta"]
        resource["annotations"] = {"audience": ["user"], "priority": 0.5}
        del template["annotations"]
    return prompt, resource, template


def served(tmp_path: Path) -> Server:
    """The server of ``SERVED``, written to ``extras.py`` (for ``mcp-elicit serve``) and run."""
    path = tmp_path / "extras.py"
    path.write_text(SERVED, encoding="utf-8")
    app = runpy.run_path(str(path))["app"]
    assert isinstance(app, Server)
    return app


def checker(revision: str) -> WireChecker | None:
    """The schema check of ``revision``: the two latest always (else the test skips, saying
    so), 2025-06-18 and 2025-03-26 where their schemas are present. Either way the entries
    are compared key by key with what each revision's schema defines (``as_listed``)."""
    if revision in ("2026-07-28", "2025-11-25"):
        return WireChecker.load(revision)
    return WireChecker.if_present(revision)


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_each_revision_is_listed_what_its_schema_has(tmp_path: Path, revision: str) -> None:
    app, wire = served(tmp_path), checker(revision)
    if revision == "2026-07-28":
        client: MemoryClient | SessionClient = MemoryClient(app, checker=wire, revision=revision)
    else:
        client = SessionClient(app, checker=wire, version=revision, capabilities={})  # none to ask
        await client.open()
    prompts = await client.result("prompts/list")
    resources = await client.result("resources/list")
    templates = await client.result("resources/templates/list")
    assert (prompts["prompts"], resources["resources"], templates["resourceTemplates"]) == tuple(
        [entry] for entry in as_listed(revision)
    )
    if wire is not None:
        assert wire.seen >= 3


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_client_is_listed_them_over_stdio(tmp_path: Path, revision: str) -> None:
    served(tmp_path)
    async with connect_stdio(
        [*cli(), "serve", "extras.py"], cwd=str(tmp_path), versions=(revision,), timeout=30
    ) as client:
        assert client.revision == revision
        listed = (
            await client.list_prompts(),
            await client.list_resources(),
            await client.list_resource_templates(),
        )
    assert listed == tuple([entry] for entry in as_listed(revision))


@pytest.mark.slow
@pytest.mark.parametrize(("era", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_official_sdk_client_reads_them(
    sdk_python: Path, tmp_path: Path, era: str, revision: str
) -> None:
    """The SDK reads each entry into its models (``Prompt``, ``Resource``,
    ``ResourceTemplate``) and writes them back as it read them: every key kept."""
    served(tmp_path)
    steps = [{"op": "listPrompts"}, {"op": "listResources"}, {"op": "listResourceTemplates"}]
    plan = {
        "era": era,
        "command": [*cli(), "serve", str(tmp_path / "extras.py")],
        "elicitation": None,
        "steps": steps,
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    done = subprocess.run(
        [str(sdk_python), str(ROOT / "tests" / "peers" / "sdk_plan_client.py"), str(tmp_path / "plan.json")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["protocolVersion"] == revision
    prompts, resources, templates = (outcome["result"] for outcome in report["results"])
    prompt, resource, template = as_listed(revision)
    assert prompts["prompts"] == [prompt]
    assert resources["resources"] == [resource]
    assert templates["resourceTemplates"] == [template]


def prompt(**options: Any) -> Callable[[Server], object]:
    return lambda app: app.prompt(**options)


def resource(uri: str = "notes://today", **options: Any) -> Callable[[Server], object]:
    return lambda app: app.resource(uri, **options)


@pytest.mark.parametrize(
    ("register", "expected"),
    [
        # the model's Python names, which no client reads
        (
            prompt(icons=[{"src": ICON, "mime_type": "image/png"}]),
            "app.prompt(): icons[0]: mime_type is written mimeType",
        ),
        (
            resource(annotations={"last_modified": STAMP}),
            "app.resource(): annotations: last_modified is written lastModified",
        ),
        # a key the spec does not define: _meta is the spec's place for one of your own
        (
            prompt(icons=[{"src": ICON, "x-scale": 2}]),
            "app.prompt(): icons[0]: 'x-scale' is not one of the spec's (src, mimeType, sizes, theme); "
            "a key of your own goes in the prompt's meta=",
        ),
        (
            resource(annotations={"readOnlyHint": True}),
            "app.resource(): annotations: 'readOnlyHint' is not one of the spec's (audience, priority, "
            "lastModified); a key of your own goes in the resource's meta=",
        ),
        # a tool's annotations are not a resource's
        (
            resource(annotations=mcp_types.ToolAnnotations(readOnlyHint=True)),
            "app.resource(): annotations: a ToolAnnotations has 'readOnlyHint', which is not one of the "
            "spec's (audience, priority, lastModified): give an mcp_types.Annotations or a mapping",
        ),
        # values the spec's types refuse
        (
            resource(annotations={"priority": 2}),
            "app.resource(): annotations: priority: Input should be less than or equal to 1",
        ),
        (
            resource(annotations={"audience": ["bot"]}),
            "app.resource(): annotations: audience.0: Input should be 'user' or 'assistant'",
        ),
        (
            resource(annotations={"audience": "user"}),
            "app.resource(): annotations: audience: Input should be a valid list",
        ),
        (
            resource(annotations={"lastModified": dt.datetime(2026, 1, 12, tzinfo=dt.UTC)}),
            "app.resource(): annotations: lastModified: Input should be a valid string",
        ),
        (
            resource(annotations={"lastModified": "yesterday"}),
            "app.resource(): annotations: lastModified 'yesterday' is not an ISO 8601 date-time "
            "(2025-01-12T15:00:58Z)",
        ),
        (
            resource("notes://{day}", icons=[{"theme": "dark"}]),
            "app.resource(): icons[0]: src: Field required",
        ),
        (
            resource(icons=[{"src": ICON, "theme": "blue"}]),
            "app.resource(): icons[0]: theme: Input should be 'light' or 'dark'",
        ),
        # a size is a fixed resource's, in bytes
        *(
            (
                resource(size=size),
                f"app.resource(): size {size!r}: expected None or the resource's size in bytes, "
                "a whole number from 0 to 2**53 - 1",
            )
            for size in (-1, 1.5, "11", True, 2**53, 2**64)
        ),
        (
            resource("notes://{day}", size=11),
            "app.resource(): size: a resource template has no size (the resources it serves differ); "
            "give size= to a fixed resource",
        ),
        # the wrong kind altogether
        (prompt(icons="icon.png"), "app.prompt(): icons 'icon.png': expected None or a list of mappings"),
        (prompt(meta=["x"]), "app.prompt(): meta ['x']: expected None or a mapping"),
        (resource(meta="x"), "app.resource(): meta 'x': expected None or a mapping"),
        (resource(annotations="user"), "app.resource(): annotations 'user': expected None or a mapping"),
    ],
)
def test_what_the_listing_cannot_carry_is_refused_at_registration(
    register: Callable[[Server], object], expected: str
) -> None:
    app = Server("extras")
    with pytest.raises(TypeError) as refused:
        register(app)
    assert str(refused.value) == expected
    assert app.names("prompts") == app.names("resources") == []


def test_a_prompt_takes_them_bare_only_in_its_call() -> None:
    app = Server("extras")

    def plan() -> str:
        return "Plan."

    with pytest.raises(TypeError, match=r"give the options in the call above the function"):
        app.prompt(plan, icons=[{"src": ICON}])  # type: ignore[call-overload]
    assert app.names("prompts") == []


@pytest.mark.anyio
async def test_the_largest_size_every_reader_holds_is_listed() -> None:
    """A size past 2**64 was taken, and then no ``resources/list`` could be written: every
    caller got -32603 for every resource. The bound is 2**53 - 1, which every JSON reader
    holds exactly; that size is listed as given."""
    app = Server("extras")
    app.resource("notes://huge", name="huge", size=2**53 - 1)(lambda: "x")
    app.resource("notes://small", name="small", size=0)(lambda: "x")
    client = MemoryClient(app, checker=WireChecker.load("2026-07-28"))
    listed = await client.result("resources/list")
    assert [r["size"] for r in listed["resources"]] == [2**53 - 1, 0]
