"""Interop: clients built with the official SDKs complete elicitation flows on an mcp-elicit
server (tests/server/interop_app.py), over Streamable HTTP and stdio.

The clients run one plan format (what to declare, answer and do):

* the TypeScript SDK (tests/peers/ts/client.mjs): v2 (``@modelcontextprotocol/client``)
  negotiating 2026-07-28 (``auto``) or made to speak 2025-11-25 (``legacy``), and v1
  (``@modelcontextprotocol/sdk``, 2025-11-25 only: what most clients in the wild run);
  every message the server sent them is checked against the official schema of the
  revision spoken;
* the official Python SDK (tests/peers/sdk_plan_client.py), in its ``auto`` and ``legacy``
  modes; it offers no tap on every message, and it declares form and URL mode or nothing.

The TypeScript SDK's own ``listChanged`` option also hears a tool registered at run time:
over ``subscriptions/listen`` at 2026-07-28, on the session's GET stream at 2025-11-25.

The same handlers serve all of them. The peers are pinned (tests/peers/ts/package-lock.json,
tests/peers/requirements-mcp.txt); without them (offline, say), these tests skip.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.peers import TS_PEERS, sdk_python, ts_node
from support.procs import ROOT, HttpProcess, cli, http_process
from support.wire import WireChecker

__all__ = ["sdk_python", "ts_node"]  # fixtures

pytestmark = pytest.mark.slow

APP = ROOT / "tests" / "server" / "interop_app.py"
#: Each SDK's plan runner: the fixture giving its interpreter, its script, where it runs.
RUNNERS = {
    "v1": ("ts_node", TS_PEERS / "client.mjs", TS_PEERS),
    "v2": ("ts_node", TS_PEERS / "client.mjs", TS_PEERS),
    "python": ("sdk_python", ROOT / "tests" / "peers" / "sdk_plan_client.py", ROOT),
}
BOTH = {"form": {}, "url": {}}
#: (SDK, version negotiation) -> the revision the conversation must settle on.
CLIENTS = {
    ("v2", "auto"): "2026-07-28",
    ("v2", "legacy"): "2025-11-25",
    ("v1", "legacy"): "2025-11-25",
    ("python", "auto"): "2026-07-28",
    ("python", "legacy"): "2025-11-25",
}
#: The error a request gets when it needs a capability the client did not declare: the
#: 2026-07-28 code, at 2025-11-25 too (which has none of its own), with the same data.
MISSING_CAPABILITY = -32021
PROFILE = {
    "email": "ann@example.com",
    "born": "1990-02-28",
    "guests": 3,
    "budget": 120.5,
    "newsletter": True,
    "seat": "out",
    "size": "L",
    "diet": ["veg", "gf"],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpProcess]:
    with http_process(APP, log_dir=tmp_path_factory.mktemp("interop"), args=("--store", "memory://")) as proc:
        yield proc
    assert "Traceback" not in proc.stderr(), proc.stderr()[-3000:]


def run(request: pytest.FixtureRequest, tmp_path: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """Run the plan's client on it; its report, with every message the server sent it
    checked against the schema of the revision it settled on (where the client shows them)."""
    path = tmp_path / f"plan-{len(list(tmp_path.glob('plan-*')))}.json"
    path.write_text(json.dumps(plan))
    fixture, script, cwd = RUNNERS[plan["sdk"]]
    done = subprocess.run(
        [str(request.getfixturevalue(fixture)), str(script), str(path)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]  # a stdio server's stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    expected = CLIENTS[plan["sdk"], plan["era"]]
    assert report["protocolVersion"] == expected, report["protocolVersion"]
    checker = WireChecker.load(expected)
    methods = {m["id"]: m["method"] for m in report["sent"] if "method" in m and "id" in m}
    for message in report["received"]:
        checker.outgoing(message, methods.get(message.get("id")) if "method" not in message else None)
    assert checker.seen >= len(report["received"])
    assert report["received"] or plan["sdk"] == "python"
    return report


def plan_for(
    sdk: str, era: str, where: HttpProcess | None, steps: list[dict[str, Any]], answers: list[dict[str, Any]]
) -> dict[str, Any]:
    plan: dict[str, Any] = {"sdk": sdk, "era": era, "elicitation": BOTH, "steps": steps, "answers": answers}
    if where is None:
        plan["command"] = [*cli(), "serve", str(APP), "--store", "memory://"]
    else:
        plan["url"] = where.url
    return plan


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"op": "callTool", "name": name, "arguments": arguments}


def text(outcome: dict[str, Any]) -> str:
    assert "result" in outcome, outcome
    result = outcome["result"]
    if "content" in result:
        return str(result["content"][0]["text"])
    if "messages" in result:
        return str(result["messages"][0]["content"]["text"])
    return str(result["contents"][0]["text"])


@pytest.fixture(params=["http", "stdio"])
def where(request: pytest.FixtureRequest) -> HttpProcess | None:
    return request.getfixturevalue("server") if request.param == "http" else None


@pytest.mark.parametrize(("sdk", "era"), list(CLIENTS))
def test_forms_rounds_prompts_and_resources(
    request: pytest.FixtureRequest, tmp_path: Path, where: HttpProcess | None, sdk: str, era: str
) -> None:
    steps = [
        {"op": "listTools"},
        call("profile"),
        call("profile"),
        call("profile"),
        call("plan_trip", traveller="Bo"),
        {"op": "getPrompt", "name": "greeting"},
        {"op": "readResource", "uri": "note://today"},
        call("what_can_you_do"),
    ]
    answers = [
        {"action": "accept", "content": PROFILE},
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "accept", "content": {"city": "Lyon"}},
        {"action": "accept", "content": {"nights": 2}},
        {"action": "accept", "content": {"name": "Ann"}},
        {"action": "accept", "content": {"mood": "calm"}},
    ]
    report = run(request, tmp_path, plan_for(sdk, era, where, steps, answers))
    listed, accepted, declined, cancelled, trip, prompt, resource, caps = report["results"]
    assert {"profile", "plan_trip", "open_docs", "link_account", "use_key"} <= {
        t["name"] for t in listed["result"]["tools"]
    }
    # The accepted form reaches the handler with every value of its JSON type.
    assert json.loads(text(accepted)) == PROFILE
    assert text(declined) == "profile: declined, try another way"
    assert text(cancelled) == "profile: cancelled, ask later"
    assert text(trip) == "Bo: 2 nights in Lyon"
    assert text(prompt) == "Say hello to Ann"
    assert text(resource) == "A calm day"
    assert text(caps) == "form=True url=True"
    # What the SDK's handler was asked: the whole form, titles and formats included.
    schema = report["asked"][0]["requestedSchema"]
    assert schema["properties"]["seat"]["oneOf"] == [
        {"const": "in", "title": "Inside"},
        {"const": "out", "title": "Terrace"},
    ]
    assert schema["properties"]["born"]["format"] == "date"
    assert schema["properties"]["size"]["default"] == "M"
    assert report["asked"][4]["message"] == "How many nights in Lyon?"
    assert len(report["asked"]) == 7


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_a_required_field_left_out_takes_its_default(
    request: pytest.FixtureRequest, tmp_path: Path, where: HttpProcess | None, era: str
) -> None:
    """The SDK hands its callback the schema and sends what the callback returns, so a
    callback that sets only what the person changed leaves out the fields with defaults
    (required ones: `Boolean(default=False)` is required unless it says otherwise). The
    answer is the form's defaults for them, not "is required" twice and then cancel."""
    typed = {k: v for k, v in PROFILE.items() if k not in ("newsletter", "size")}
    answers = [{"action": "accept", "content": typed}]
    report = run(request, tmp_path, plan_for("python", era, where, [call("profile")], answers))
    assert json.loads(text(report["results"][0])) == {**typed, "newsletter": False, "size": "M"}
    assert len(report["asked"]) == 1  # not asked again


def test_each_retry_is_a_new_request_carrying_the_answers_and_the_state(
    request: pytest.FixtureRequest, tmp_path: Path, server: HttpProcess
) -> None:
    answers = [
        {"action": "accept", "content": {"city": "Oslo"}},
        {"action": "accept", "content": {"nights": 4}},
    ]
    report = run(
        request, tmp_path, plan_for("v2", "auto", server, [call("plan_trip", traveller="Cy")], answers)
    )
    assert text(report["results"][0]) == "Cy: 4 nights in Oslo"
    calls = [m for m in report["sent"] if m.get("method") == "tools/call"]
    replies = {m["id"]: m["result"] for m in report["received"] if "result" in m}
    assert len(calls) == 3 and len({c["id"] for c in calls}) == 3
    for before, retry in itertools.pairwise(calls):
        asked = replies[before["id"]]
        assert asked["resultType"] == "input_required"
        assert retry["params"]["requestState"] == asked["requestState"]
        assert set(retry["params"]["inputResponses"]) == set(asked["inputRequests"])
    assert (
        "resultType" not in replies[calls[-1]["id"]] or replies[calls[-1]["id"]]["resultType"] == "complete"
    )


@pytest.mark.parametrize(("sdk", "era"), list(CLIENTS))
def test_a_secret_typed_into_the_servers_page(
    request: pytest.FixtureRequest, tmp_path: Path, server: HttpProcess, sdk: str, era: str
) -> None:
    """URL mode end to end: the SDK's handler agrees to open the page, the person types the
    key there, the tool gets it; the next call asks nothing. A 2025-11-25 client is told the
    step is complete (``notifications/elicitation/complete``) and here waits for that."""
    service = f"{sdk}-{era}"
    answers = [{"action": "accept", "secret": "sk-test-4321", "awaitComplete": True}]
    steps = [call("use_key", service=service), call("use_key", service=service)]
    report = run(request, tmp_path, plan_for(sdk, era, server, steps, answers))
    assert [text(r) for r in report["results"]] == ["key: 12 characters, ends 21"] * 2
    assert report["pages"] == [None]  # the page took the key
    (asked,) = report["asked"]
    assert asked["mode"] == "url" and asked["url"].startswith(server.url.removesuffix("/mcp"))
    if CLIENTS[sdk, era] == "2025-11-25":
        assert report["notices"] == [asked["elicitationId"]]
    else:
        assert "elicitationId" not in asked and report["notices"] == []


@pytest.mark.parametrize(("sdk", "era"), list(CLIENTS))
def test_a_step_required_first_and_a_page_declined(
    request: pytest.FixtureRequest, tmp_path: Path, server: HttpProcess, sdk: str, era: str
) -> None:
    answers = [{"action": "accept"}, {"action": "decline"}] if era == "auto" else [{"action": "decline"}]
    steps = [call("link_account", provider="gh"), call("open_docs", topic="forms")]
    report = run(request, tmp_path, plan_for(sdk, era, server, steps, answers))
    linked, docs = report["results"]
    if CLIENTS[sdk, era] == "2025-11-25":
        # -32042: the request cannot go on until the step at the URL is done.
        assert linked["error"]["code"] == -32042
        (step,) = linked["error"]["data"]["elicitations"]
        assert step == {
            "mode": "url",
            "message": "Sign in to gh",
            "url": "https://example.com/link/gh",
            "elicitationId": "link-gh",
        }
    else:
        assert text(linked) == "link: accept"
    assert text(docs) == "docs: declined, try another way"


@pytest.mark.parametrize(("sdk", "era"), list(CLIENTS))
def test_a_step_the_handler_raises_itself_is_held_until_its_page_is_done(
    request: pytest.FixtureRequest, tmp_path: Path, server: HttpProcess, sdk: str, era: str
) -> None:
    """The SDK's pattern, ``raise URLElicitationRequired`` until the handler's own record
    says the work is done: at 2026-07-28 the step is asked once, the SDK's accepted retry
    is held until the page's backend completes it, and the handler, run again, answers;
    at 2025-11-25 it is -32042 naming the step, and the notice follows."""
    provider = f"{sdk}-{era}"
    answers = [{"action": "accept"}]
    report = run(
        request, tmp_path, plan_for(sdk, era, server, [call("link_raised", provider=provider)], answers)
    )
    (linked,) = report["results"]
    if CLIENTS[sdk, era] == "2025-11-25":
        assert linked["error"]["code"] == -32042, linked
        (step,) = linked["error"]["data"]["elicitations"]
        assert step == {
            "mode": "url",
            "message": f"Sign in to {provider}",
            "url": f"https://example.com/link/{provider}",
            "elicitationId": f"raised-{provider}",
        }
    else:
        assert text(linked) == f"linked {provider}"
        (asked,) = report["asked"]  # once: held while the page was open, not asked again
        assert asked == {
            "mode": "url",
            "message": f"Sign in to {provider}",
            "url": f"https://example.com/link/{provider}",
        }


@pytest.mark.parametrize(("sdk", "era"), list(CLIENTS))
def test_the_server_elicits_only_what_the_client_declared(
    request: pytest.FixtureRequest, tmp_path: Path, server: HttpProcess, sdk: str, era: str
) -> None:
    form_only = plan_for(
        sdk,
        era,
        server,
        [call("what_can_you_do"), call("open_docs", topic="x"), call("plan_trip", traveller="Di")],
        [{"action": "accept", "content": {"city": "Rome"}}, {"action": "accept", "content": {"nights": 1}}],
    )
    form_only["elicitation"] = {}  # an empty object: form mode only
    if sdk != "python":  # the Python SDK declares both modes or none
        report = run(request, tmp_path, form_only)
        caps, docs, trip = report["results"]
        assert text(caps) == "form=True url=False"
        assert docs["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}, docs
        assert docs["error"]["code"] == MISSING_CAPABILITY, docs
        assert text(trip) == "Di: 1 nights in Rome"
        assert all(a.get("mode", "form") == "form" for a in report["asked"])

    nothing = plan_for(sdk, era, server, [call("what_can_you_do"), call("profile")], [])
    nothing["elicitation"] = None  # no elicitation capability at all
    report = run(request, tmp_path, nothing)
    caps, profile = report["results"]
    assert text(caps) == "form=False url=False"
    assert profile["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}, profile
    assert profile["error"]["code"] == MISSING_CAPABILITY, profile
    assert report["asked"] == []


@pytest.mark.parametrize(("sdk", "era"), [("v2", "auto"), ("v2", "legacy"), ("v1", "legacy")])
def test_the_sdk_hears_the_tool_list_change_and_refetches_it(
    request: pytest.FixtureRequest, tmp_path: Path, where: HttpProcess | None, sdk: str, era: str
) -> None:
    """The TypeScript SDK's own listChanged machinery: at 2026-07-28 it opens a
    subscriptions/listen stream on its own, at 2025-11-25 it reads the session's GET
    stream; either way the change reaches it and it lists the tools again."""
    sprout = f"sprout_{sdk}_{era}_{'http' if where else 'stdio'}"
    plan = plan_for(sdk, era, where, [call("grow", tool=sprout), {"op": "toolsChanged"}], [])
    plan["listChanged"] = True
    report = run(request, tmp_path, plan)
    grown, changed = report["results"]
    assert text(grown) == f"grew {sprout}"
    assert "tools" in changed.get("result", {}), changed
    assert sprout in changed["result"]["tools"] and "profile" in changed["result"]["tools"]
    heard = [m for m in report["received"] if m.get("method") == "notifications/tools/list_changed"]
    assert heard, "the change did not come as notifications/tools/list_changed"
    if era == "auto":
        listens = [m for m in report["sent"] if m.get("method") == "subscriptions/listen"]
        assert listens and listens[0]["params"]["notifications"] == {"toolsListChanged": True}
        sub = "io.modelcontextprotocol/subscriptionId"
        assert heard[0]["params"]["_meta"][sub] == listens[0]["id"]
