"""Interop: a 2025-11-25 client of an official SDK (TypeScript v1 and v2, Python) keeps its
call when a proxy cuts the call's SSE stream while the person is still answering.

nginx in front of an mcp-elicit server (tests/server/interop_app.py) gives up on a silent
response after one second (its ``proxy_read_timeout``), much less than the server's
keep-alive: the stream carrying the question is cut, and so is every resumed one, while
the person takes a few seconds over the answer. The SDK comes back with ``Last-Event-ID``
each time, and the TypeScript SDK only knows where to come back from while each resumed
stream names an event: a resumed stream that says nothing before it is cut again must
still start with one, or the SDK loses the call (it comes back without ``Last-Event-ID``,
to the session's standalone stream) and never hears the next question nor the result.
The Python SDK declares URL mode too, and shows no messages (``received`` stays empty).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.nginx import SKIP_REASON, Nginx, nginx_available, nginx_balancer
from support.peers import TS_PEERS, sdk_python, ts_node
from support.procs import ROOT, HttpProcess, http_process
from support.wire import WireChecker

__all__ = ["sdk_python", "ts_node"]  # fixtures

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not nginx_available(), reason=SKIP_REASON)]

APP = ROOT / "tests" / "server" / "interop_app.py"
#: nginx's proxy_read_timeout, s; the person answers after several of these.
CUT_AFTER = 1.0
THINKING_MS = 3500
#: Each SDK's plan runner: the fixture giving its interpreter, its script, where it runs.
RUNNERS = {
    "v1": ("ts_node", TS_PEERS / "client.mjs", TS_PEERS),
    "v2": ("ts_node", TS_PEERS / "client.mjs", TS_PEERS),
    "python": ("sdk_python", ROOT / "tests" / "peers" / "sdk_plan_client.py", ROOT),
}
#: Bounds the client's run; a client that lost its call would wait out its own 60 s timeout.
RUN_TIMEOUT = 50


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpProcess, Nginx]]:
    logs = tmp_path_factory.mktemp("resume")
    with (
        http_process(APP, log_dir=logs, args=("--store", "memory://")) as server,
        nginx_balancer([server.port], logs / "nginx", read_timeout=CUT_AFTER) as nginx,
    ):
        yield server, nginx
    assert "Traceback" not in server.stderr(), server.stderr()[-3000:]


@pytest.mark.parametrize(("sdk", "era"), [("v1", "legacy"), ("v2", "legacy"), ("python", "legacy")])
def test_a_question_answered_after_the_proxy_cut_its_stream(
    request: pytest.FixtureRequest, tmp_path: Path, proxied: tuple[HttpProcess, Nginx], sdk: str, era: str
) -> None:
    _, nginx = proxied
    plan: dict[str, Any] = {
        "sdk": sdk,
        "era": era,
        "url": f"{nginx.base}/mcp",
        "elicitation": {"form": {}, "url": {}} if sdk == "python" else {"form": {}},
        "steps": [{"op": "callTool", "name": "plan_trip", "arguments": {"traveller": sdk}}],
        "answers": [
            {"action": "accept", "content": {"city": "Oslo"}, "delayMs": THINKING_MS},
            {"action": "accept", "content": {"nights": 2}},
        ],
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    fixture, script, cwd = RUNNERS[sdk]
    try:
        done = subprocess.run(
            [str(request.getfixturevalue(fixture)), str(script), str(path)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"the {sdk} client lost its call: no result in {RUN_TIMEOUT} s; nginx served {nginx.served()}"
        )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    (outcome,) = report["results"]
    assert outcome.get("result", {}).get("content") == [
        {"type": "text", "text": f"{sdk}: 2 nights in Oslo"}
    ], outcome
    assert [a["message"] for a in report["asked"]] == [
        "Where does " + sdk + " go?",
        "How many nights in Oslo?",
    ]
    # The cut happened: the call's stream was resumed (GET with Last-Event-ID) at least once.
    assert len([s for s in nginx.served() if s.method == "GET"]) >= 2
    checker = WireChecker.load("2025-11-25")
    methods = {m["id"]: m["method"] for m in report["sent"] if "method" in m and "id" in m}
    for message in report["received"]:
        checker.outgoing(message, methods.get(message.get("id")) if "method" not in message else None)
