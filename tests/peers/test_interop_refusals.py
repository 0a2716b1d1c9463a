"""Interop: the TypeScript SDK's clients at 2025-11-25 (v1, and v2 made to speak it) whose
elicitation handler does not answer as asked, against an mcp-elicit server
(tests/server/interop_app.py), over stdio and Streamable HTTP:

* the handler throws (the SDK answers ``elicitation/create`` with a JSON-RPC error): the
  tool reads it as ``cancel`` and says so;
* the handler answers with content that breaks the form twice: asked again once, with the
  reason leading the message, then ``cancel``;
* (v1) nobody answers and the SDK's own request timeout cancels the call: the server
  withdraws the question (``notifications/cancelled``, which aborts the handler), and the
  session goes on: the next call is asked and answered. (Tried with v2 at 2025-11-25, the
  call came back as the tool's ``cancel`` result, not as a timeout, and the handler was
  never aborted: the SDK's own doing, so it is not checked here.)

The same refusal and bad answers from the v2 client at 2026-07-28 and from the official
Python SDK's client (tests/peers/sdk_plan_client.py) at both revisions: where the SDK
answers ``input_required`` itself, the refusal fails the call inside the client; the bad
answers are asked again once, then read as ``cancel``.

Every message the server sent is checked against the schema of the revision spoken.
"""

from __future__ import annotations

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
RUN_TIMEOUT = 60
PYTHON_CLIENT = ROOT / "tests" / "peers" / "sdk_plan_client.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpProcess]:
    with http_process(
        APP, log_dir=tmp_path_factory.mktemp("refusals"), args=("--store", "memory://")
    ) as proc:
        yield proc
    assert "Traceback" not in proc.stderr(), proc.stderr()[-3000:]


#: A refusal, then answers that break the form twice, then (after any given in between)
#: the answers to the last call.
REFUSED_THEN_BAD = [
    {"refuse": "the window was closed"},
    {"action": "accept", "content": {"city": "Rome"}},
    {"action": "accept", "content": {"nights": 0}},
    {"action": "accept", "content": {"nights": "two"}},
]
LAST_ANSWERED = [
    {"action": "accept", "content": {"city": "Oslo"}},
    {"action": "accept", "content": {"nights": 2}},
]
ASKED_AGAIN = [
    "How many nights in Rome?",
    "Your previous answer was not accepted: nights: must be at least 1.\n\nHow many nights in Rome?",
]


def _run(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    kind: str,
    plan: dict[str, Any],
    argv: list[str],
    cwd: Path,
) -> dict[str, Any]:
    """Run a peer client on ``plan`` against the app (the module's server over HTTP, or a
    process of its own over stdio); the report it prints, once it ended cleanly."""
    if kind == "http":
        plan["url"] = request.getfixturevalue("server").url
    else:
        plan["command"] = [*cli(), "serve", str(APP), "--store", "memory://"]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    done = subprocess.run(
        [*argv, str(path)], cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _check_wire(report: dict[str, Any], revision: str) -> None:
    """Every message the server sent, against the schema of ``revision``."""
    checker = WireChecker.load(revision)
    methods = {m["id"]: m["method"] for m in report["sent"] if "method" in m and "id" in m}
    for message in report["received"]:
        checker.outgoing(message, methods.get(message.get("id")) if "method" not in message else None)


def _call(traveller: str, **extra: Any) -> dict[str, Any]:
    return {"op": "callTool", "name": "plan_trip", "arguments": {"traveller": traveller}, **extra}


@pytest.mark.parametrize("sdk", ["v1", "v2"])
@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_refused_bad_and_unanswered_questions(
    request: pytest.FixtureRequest, ts_node: Path, tmp_path: Path, sdk: str, kind: str
) -> None:
    hangs = sdk == "v1"
    plan: dict[str, Any] = {
        "sdk": sdk,
        "era": "legacy",
        "elicitation": {"form": {}},
        "steps": [_call("Al"), _call("Bo"), *([_call("Cy", timeoutMs=1500)] if hangs else []), _call("Di")],
        "answers": [*REFUSED_THEN_BAD, *([{"hang": True}] if hangs else []), *LAST_ANSWERED],
    }
    report = _run(request, tmp_path, kind, plan, [str(ts_node), str(TS_PEERS / "client.mjs")], TS_PEERS)
    refused, bad, *unanswered, answered = report["results"]
    assert refused["result"]["content"][0]["text"] == "trip: cancelled, ask later"
    assert bad["result"]["content"][0]["text"] == "trip: cancelled, ask later"
    assert answered["result"]["content"][0]["text"] == "Di: 2 nights in Oslo"
    if hangs:
        assert unanswered[0].get("error", {}).get("code") == -32001, unanswered  # the SDK's own timeout
        assert report["withdrawn"] == ["Where does Cy go?"]
    assert [a["message"] for a in report["asked"]][2:4] == ASKED_AGAIN
    _check_wire(report, "2025-11-25")
    cancelled = [m for m in report["received"] if m.get("method") == "notifications/cancelled"]
    assert len(cancelled) == (1 if hangs else 0), cancelled


#: Clients whose handler refuses and answers badly, beyond the TypeScript ones at 2025-11-25:
#: (SDK, era) -> the revision spoken.
MORE_CLIENTS = {
    ("v2", "auto"): "2026-07-28",
    ("python", "auto"): "2026-07-28",
    ("python", "legacy"): "2025-11-25",
}


@pytest.mark.parametrize(("sdk", "era"), list(MORE_CLIENTS), ids=[f"{s}-{e}" for s, e in MORE_CLIENTS])
@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_refused_and_bad_answers_of_more_clients(
    request: pytest.FixtureRequest, tmp_path: Path, sdk: str, era: str, kind: str
) -> None:
    """The v2 client at 2026-07-28 and the Python SDK's at both revisions. Where the SDK
    answers ``input_required`` itself (2026-07-28), a handler that fails fails the call
    inside the client (no retry reaches the server); at 2025-11-25 the server reads the
    error as ``cancel``. Answers that break the form (neither SDK checks them) are asked
    again once, the reason leading the message, then read as ``cancel``; the session goes on."""
    revision = MORE_CLIENTS[sdk, era]
    plan: dict[str, Any] = {
        "sdk": sdk,
        "era": era,
        "elicitation": {"form": {}} if sdk == "v2" else {"form": {}, "url": {}},
        "steps": [_call("Al"), _call("Bo"), _call("Di")],
        "answers": [*REFUSED_THEN_BAD, *LAST_ANSWERED],
    }
    if sdk == "v2":
        argv, cwd = [str(request.getfixturevalue("ts_node")), str(TS_PEERS / "client.mjs")], TS_PEERS
    else:
        argv, cwd = [str(request.getfixturevalue("sdk_python")), str(PYTHON_CLIENT)], ROOT
    report = _run(request, tmp_path, kind, plan, argv, cwd)
    assert report["protocolVersion"] == revision
    refused, bad, answered = report["results"]
    if revision == "2026-07-28":
        assert refused["error"]["message"] == "the window was closed"
    else:
        assert refused["result"]["content"][0]["text"] == "trip: cancelled, ask later"
    assert bad["result"]["content"][0]["text"] == "trip: cancelled, ask later"
    assert answered["result"]["content"][0]["text"] == "Di: 2 nights in Oslo"
    assert [a["message"] for a in report["asked"]][2:4] == ASKED_AGAIN
    if sdk == "v2":  # the Python SDK offers no tap on its messages
        calls = [m for m in report["sent"] if m.get("method") == "tools/call"]
        assert [c["params"]["arguments"]["traveller"] for c in calls] == ["Al", *["Bo"] * 4, *["Di"] * 3]
        _check_wire(report, revision)


def test_a_call_the_client_gives_up_before_anything_streamed_ends_quietly(
    request: pytest.FixtureRequest, ts_node: Path, tmp_path: Path
) -> None:
    """(v1) The SDK's own timeout cancels a call whose tool has said nothing yet (its
    response still to be JSON): the response the server then ends is one the SDK takes (an
    event stream with no event), not one it reports as a transport error ("Unexpected
    content type"); the session goes on. (v2 at 2025-11-25 aborts its own fetch as it
    cancels, and reports that abort when it wins the race: the SDK's own doing.)"""
    plan: dict[str, Any] = {
        "sdk": "v1",
        "era": "legacy",
        "elicitation": {"form": {}},
        "steps": [
            {"op": "callTool", "name": "mull", "arguments": {"seconds": 20}, "timeoutMs": 500},
            _call("Di"),
        ],
        "answers": LAST_ANSWERED,
    }
    report = _run(request, tmp_path, "http", plan, [str(ts_node), str(TS_PEERS / "client.mjs")], TS_PEERS)
    given_up, answered = report["results"]
    assert "timed out" in given_up.get("error", {}).get("message", ""), given_up  # the SDK's own timeout
    assert answered["result"]["content"][0]["text"] == "Di: 2 nights in Oslo"
    assert report["errors"] == []
    _check_wire(report, "2025-11-25")
