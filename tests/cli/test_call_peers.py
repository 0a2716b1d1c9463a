"""``mcp-elicit call`` with an answer script (``--answers``) against servers nobody here
wrote: over stdio the official TypeScript SDK (v1 and v2), the official Python SDK and
FastMCP; over Streamable HTTP the TypeScript v2 and Python SDK servers. Each question the
server asks is answered from the script, and what the server's handler received comes back
in the result: accepted forms (defaults filled in), declines, URL steps, at each revision
the server speaks."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client.ts_peer import PROFILE, PROFILE_SENT, v1_http, v2_http

from support.peers import TS_PEERS, fastmcp_python, peer_http, sdk_python, ts_node
from support.procs import ROOT, cli

__all__ = ["fastmcp_python", "sdk_python", "ts_node", "v1_http", "v2_http"]  # fixtures

pytestmark = pytest.mark.slow

MODERN, LEGACY = "2026-07-28", "2025-11-25"
#: Each peer: the fixture giving its interpreter, and its script.
SERVERS = {
    "ts-v1": ("ts_node", TS_PEERS / "server_v1.mjs"),
    "ts-v2": ("ts_node", TS_PEERS / "server_v2.mjs"),
    "python-sdk": ("sdk_python", ROOT / "tests" / "peers" / "sdk_server.py"),
    "fastmcp": ("fastmcp_python", ROOT / "tests" / "peers" / "fastmcp_server.py"),
}
#: The TypeScript servers' profile form: (peer, revision).
TS_CASES = [("ts-v2", MODERN), ("ts-v2", LEGACY), ("ts-v1", LEGACY)]


@pytest.fixture(scope="module")
def sdk_http(sdk_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Python SDK server over Streamable HTTP on a free loopback port."""
    log = tmp_path_factory.mktemp("sdk") / "sdk-http.log"
    with peer_http(
        lambda port: [str(sdk_python), str(SERVERS["python-sdk"][1]), "--http", str(port)], log
    ) as url:
        yield url


def call(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    peer: str,
    revision: str,
    answers: list[Any],
    *words: str,
    url: str | None = None,
) -> dict[str, Any]:
    """Run ``mcp-elicit call --json`` on the peer's stdio server, or at ``url``; its JSON report,
    and what it printed on stderr under ``"stderr"``."""
    (tmp_path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    argv = ["call", *words, "--answers", str(tmp_path / "answers.json"), "--json", "--protocol", revision]
    if url is None:
        fixture, script = SERVERS[peer]
        interpreter: Path = request.getfixturevalue(fixture)
        argv = [*argv, "--", str(interpreter), str(script)]
    else:
        argv = [argv[0], url, *argv[1:]]
    done = subprocess.run(
        [*cli(), *argv],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "FASTMCP_LOG_LEVEL": "WARNING",
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},  # this tree's code
        },
        check=False,
    )
    assert done.stdout, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["revision"] == revision, report
    report["stderr"] = done.stderr
    return report


def text(report: dict[str, Any]) -> str:
    assert report["exit_code"] == 0, report
    (block,) = report["result"]["content"]
    return str(block["text"])


@pytest.mark.parametrize("kind", ["stdio", "http"])
@pytest.mark.parametrize(("peer", "revision"), TS_CASES, ids=[f"{p}-{r}" for p, r in TS_CASES])
def test_a_form_of_every_field_kind_from_a_script(
    request: pytest.FixtureRequest, tmp_path: Path, peer: str, revision: str, kind: str
) -> None:
    """Over HTTP, each server is the one its module-scoped fixture started (``client.ts_peer``)."""
    url = request.getfixturevalue(f"{peer.removeprefix('ts-')}_http") if kind == "http" else None
    answers = [{"fields": ["email"], "content": PROFILE}]
    report = call(request, tmp_path, peer, revision, answers, "profile", url=url)
    assert json.loads(text(report))["content"] == PROFILE_SENT
    (shown,) = report["rounds"]  # kept and shown as sent: the defaults filled in
    assert shown["content"] == PROFILE_SENT
    for filled in ('nickname="friend"', "guests=2", "newsletter=false", 'size="M"', 'diet=["veg"]'):
        assert filled in report["stderr"], report["stderr"]


@pytest.mark.parametrize(("peer", "revision"), TS_CASES, ids=[f"{p}-{r}" for p, r in TS_CASES])
def test_a_declined_form_from_a_script(
    request: pytest.FixtureRequest, tmp_path: Path, peer: str, revision: str
) -> None:
    report = call(request, tmp_path, peer, revision, [{"fields": ["email"], "action": "decline"}], "profile")
    assert text(report) == "profile: decline"
    (shown,) = report["rounds"]
    assert shown["action"] == "decline" and "content" not in shown, shown


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
def test_the_python_sdks_defaults_and_resolver(
    request: pytest.FixtureRequest, tmp_path: Path, revision: str
) -> None:
    defaults = call(
        request, tmp_path, "python-sdk", revision, [{"fields": ["name"], "content": {}}], "preferences"
    )
    assert text(defaults) == '{"name":"John Doe","age":30,"verified":true}'
    answers = [{"fields": ["party_size"], "content": {"party_size": 4, "date": "2026-12-31"}}]
    booked = call(request, tmp_path, "python-sdk", revision, answers, "book_table", "restaurant=noma")
    assert text(booked) == "Booked noma for 4 on 2026-12-31"


def test_fastmcp_at_each_revision(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    answers = [{"fields": ["name"], "content": {"name": "Ann", "age": 33}}]
    registered = call(request, tmp_path, "fastmcp", LEGACY, answers, "register")
    assert json.loads(text(registered)) == {
        "action": "accept",
        "data": {"name": "Ann", "age": 33, "subscribe": False},
    }
    guarded = call(
        request,
        tmp_path,
        "fastmcp",
        MODERN,
        [{"fields": ["city"], "content": {"city": "Oslo"}}],
        "guarded",
        "name=Ann",
    )
    assert text(guarded) == "Ann lives in Oslo"


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
def test_the_python_sdks_defaults_over_http(
    request: pytest.FixtureRequest, tmp_path: Path, sdk_http: str, revision: str
) -> None:
    defaults = [{"fields": ["name"], "content": {}}]
    preferences = call(request, tmp_path, "python-sdk", revision, defaults, "preferences", url=sdk_http)
    assert text(preferences) == '{"name":"John Doe","age":30,"verified":true}'
    (shown,) = preferences["rounds"]
    assert shown["content"] == {"name": "John Doe", "age": 30, "verified": True}


def test_a_url_step_the_v1_server_finishes(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    report = call(
        request,
        tmp_path,
        "ts-v1",
        LEGACY,
        [{"mode": "url", "action": "accept"}],
        "connect_calendar",
        "provider=home",
    )
    assert text(report).startswith("calendar: home connected (")


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
def test_a_url_step_of_the_v2_server(request: pytest.FixtureRequest, tmp_path: Path, revision: str) -> None:
    """At 2026-07-28 the step comes in an input_required result (-32042 is gone from that
    revision), at 2025-11-25 as elicitation/create; either way it is kept as sent."""
    answers = [{"mode": "url", "action": "accept"}]
    report = call(request, tmp_path, "ts-v2", revision, answers, "connect_calendar", "provider=work")
    assert text(report) == "calendar: work connected"
    (shown,) = report["rounds"]
    assert (shown["mode"], shown["action"], shown["url"]) == (
        "url",
        "accept",
        "https://calendar.example.com/consent/work",
    )
    assert "content" not in shown, shown
