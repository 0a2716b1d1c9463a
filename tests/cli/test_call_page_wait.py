"""``mcp-elicit call`` while the person is slow to finish a page they agreed to open
(2026-07-28): the server answers state-only rounds until the page is done, more than
``RoundLimits.max_state_only``; the call waits, says once on stderr that it waits for the
page at its host, and prints the result once the page is finished. Real processes: the
CLI and ``mcp-elicit serve`` over stdio; the page filled over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from mcp_elicit.client import RoundLimits

from support.procs import ROOT, _env, cli
from support.url_mode import SECRET, _fill_page

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("slow_page_server.py")
WAITING = re.compile(
    r"^… waiting for the page at (\S+) to be finished \(Slow page asks, during tools/call use_key\)$"
)
#: More state-only rounds in a row than the client takes with no page pending.
PAST_THE_COUNT = RoundLimits().max_state_only + 2


def state_only(line: str) -> bool:
    """Whether a ``--trace`` line is a state-only result the client received."""
    return line.startswith("← ") and '"resultType":"input_required"' in line and '"inputRequests"' not in line


async def test_a_slow_page_is_waited_for_and_said_once(tmp_path: Path) -> None:
    answers = tmp_path / "url_accept.json"
    answers.write_text(json.dumps({"answers": [{"mode": "url"}]}))
    argv = [
        *cli(),
        "call",
        "use_key",
        "--answers",
        str(answers),
        "--trace",
        "--",
        *cli(),
        "serve",
        str(SERVER),
    ]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(ROOT),
        env={**_env(), "MCP_ELICIT_STORE": "memory://"},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    err: list[str] = []
    try:
        assert proc.stderr is not None and proc.stdout is not None
        async with asyncio.timeout(120):
            url, rounds, waiting = None, 0, 0
            while url is None or rounds < PAST_THE_COUNT or not waiting:
                raw = await proc.stderr.readline()
                assert raw, "the call ended before the page was filled:\n" + "".join(err[-30:])
                line = raw.decode().rstrip("\n")
                err.append(line + "\n")
                if found := re.match(r"^  url: (\S+)", line):
                    url = found.group(1)
                rounds += state_only(line)
                waiting += bool(WAITING.match(line))
            async with httpx.AsyncClient(timeout=10) as browser:
                page = await _fill_page(browser, url)
            assert page.status_code == 200, page.text
            out, rest = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    err.extend(rest.decode().splitlines(keepends=True))
    assert proc.returncode == 0, "".join(err[-30:])
    assert out.decode().strip() == f"key accepted ({len(SECRET)} characters)"
    said = [m for line in err if (m := WAITING.match(line.rstrip("\n")))]
    assert [m.group(1) for m in said] == ["127.0.0.1"], "said once, naming the page's host"
    assert sum(state_only(line) for line in err) > RoundLimits().max_state_only


@pytest.mark.parametrize(("tool", "host"), [("use_key", "127.0.0.1"), ("far_page", "bücher.example")])
def test_a_call_timed_out_while_an_accepted_page_is_unfinished_says_so(
    tmp_path: Path, tool: str, host: str
) -> None:
    """2025-11-25: the script accepts the page and nobody finishes it, so the server's request
    waits in place for the page and the call runs out of --timeout. The failure says the
    server may be waiting for that page, not only that it may be slow, naming its host as
    the question showed it (``site:``, the waiting line): a punycode host as it reads."""
    answers = tmp_path / "url_accept.json"
    answers.write_text(json.dumps({"answers": [{"mode": "url"}]}))
    argv = [
        *cli(),
        "call",
        tool,
        "--protocol",
        "2025-11-25",
        "--timeout",
        "5",
        "--answers",
        str(answers),
    ]
    done = subprocess.run(
        [*argv, "--", *cli(), "serve", str(SERVER)],
        cwd=str(ROOT),
        env={**_env(), "MCP_ELICIT_STORE": "memory://"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr[-3000:]
    assert f"(site: {host})" in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"The server may be waiting for the page at {host} that was accepted to be finished: "
        "accepting a page does not finish it. Finish the page, or decline pages nobody will finish "
        '(an --answers entry {"mode": "url", "action": "decline"}).'
    ), done.stderr[-3000:]
