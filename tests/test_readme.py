"""The README, run: what it shows a new user must be true.

Every Python block of ``README.md`` is covered: the server file (``# app.py``) is served
for real, over stdio (``mcp-elicit serve app.py``) and Streamable HTTP on 127.0.0.1, and
the project's client runs its form flow on both revisions (accept, decline, cancel); the
fragments are executed with the names they assume supplied here, minus what needs a
network beyond 127.0.0.1. The documented ``mcp-elicit`` commands that need nothing beyond
127.0.0.1 are run, and their exit codes and output checked against what the README shows.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from integration.instances import Modern

from mcp_elicit import Server
from mcp_elicit.cli.loader import load_server
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.http_client import connect_http
from mcp_elicit.transports.stdio_client import connect_stdio

from support.procs import ROOT, _stop, cli, free_port, http_process, wait_listening
from support.readme import README, REVISIONS, block_starting, blocks

DEMO = "examples/demo_server.py"
RUN_TIMEOUT = 30.0
DAY = dt.date.today() + dt.timedelta(days=3)


def commands() -> list[str]:
    """Every command line of the README's ``sh`` blocks, continuation lines joined."""
    out: list[str] = []
    for block in blocks("sh"):
        for line in block.text.replace("\\\n", " ").splitlines():
            if line.strip():
                out.append(line.split("  #")[0].strip())
    return out


@pytest.fixture
def app_py(tmp_path: Path) -> Path:
    """The README's ``app.py``, written where a user would save it."""
    block = block_starting("python", "# app.py")
    path = tmp_path / "app.py"
    path.write_text(block.text, encoding="utf-8")
    return path


@dataclass
class Person:
    """Answers each question with the next action in ``actions`` and notes what was asked."""

    actions: list[str]
    asked: list[ElicitationRequest] = field(default_factory=list)
    modes: frozenset[str] = frozenset({"form"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.asked.append(request)
        action = self.actions.pop(0)
        if action == "accept":
            return ElicitAnswer.accept(guests=4, date=DAY.isoformat(), seating="terrace")
        return ElicitAnswer(action)  # type: ignore[arg-type]

    async def url_done(self, request: ElicitationRequest) -> None:
        raise AssertionError("the README's app.py asks no URL-mode question")


BOOKED = f"Booked noma for 4 on {DAY:%A %d %B}"
DECLINED = "No booking made. Call me again with a different restaurant?"
CANCELLED = "Booking not finished; ask me again when you are ready."


async def book_three_times(client: Any, person: Person, revision: str) -> None:
    assert client.revision == revision
    assert [t["name"] for t in await client.list_tools()] == ["book_table"]
    texts = []
    for _ in range(3):
        result = await client.call_tool("book_table", {"restaurant": "noma"})
        assert not result.get("isError"), result
        texts.append(result["content"][0]["text"])
    assert texts == [BOOKED, DECLINED, CANCELLED]
    assert [r.message for r in person.asked] == ["How many people, and when?"] * 3
    assert person.asked[0].fields == ("guests", "date", "seating")


def test_app_py_loads_as_a_server(app_py: Path) -> None:
    server = load_server(str(app_py))
    assert isinstance(server, Server)
    assert server.name == "bookings"


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_app_py_over_stdio(app_py: Path, revision: str) -> None:
    assert "mcp-elicit serve app.py" in commands()
    person = Person(["accept", "decline", "cancel"])
    async with asyncio.timeout(2 * RUN_TIMEOUT):
        async with connect_stdio(
            [*cli(), "serve", "app.py"],
            cwd=str(app_py.parent),
            env=environ(app_py.parent),
            answerer=person,
            versions=(revision,),
            timeout=RUN_TIMEOUT,
        ) as client:
            await book_three_times(client, person, revision)


@pytest.mark.anyio
async def test_app_py_over_http(app_py: Path, tmp_path: Path) -> None:
    assert "mcp-elicit serve app.py --http 127.0.0.1:8000" in commands()
    with http_process(app_py, log_dir=tmp_path) as server:
        async with asyncio.timeout(2 * RUN_TIMEOUT):
            for revision in REVISIONS:
                person = Person(["accept", "decline", "cancel"])
                async with connect_http(
                    server.url, answerer=person, versions=(revision,), timeout=RUN_TIMEOUT
                ) as client:
                    await book_three_times(client, person, revision)
            assert "mcp-elicit check http://127.0.0.1:8000/mcp" in commands()
            done = await run(["check", server.url], cwd=tmp_path)
    assert done.code == 0, done
    assert "OK: the server answers and lists its tools." in done.out
    assert re.search(r"^  ✓ book_table +Book a table; asks the user how many and when\.$", done.out, re.M)


@dataclass
class Done:
    code: int
    out: str
    err: str


def test_client_py_books_through_app_py(app_py: Path) -> None:
    """The README's ``client.py``, saved beside ``app.py`` and run as a user runs it."""
    (app_py.parent / "client.py").write_text(block_starting("python", "# client.py").text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "client.py"],
        cwd=app_py.parent,
        env=environ(app_py.parent),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=2 * RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "bookings asks: How many people, and when? ('guests', 'date', 'seating')",
        "Booked noma for 2 on Thursday 24 December",
    ], done.stdout


def environ(home: Path) -> dict[str, str]:
    """This environment, with the user's state and data directories moved to ``home``."""
    env = dict(os.environ)
    env.pop("MCP_ELICIT_STATE_KEYS", None)
    env.pop("MCP_ELICIT_STORE", None)
    env.pop("COLUMNS", None)  # the width a pipe gets, as in the README
    env.update(
        PYTHONUNBUFFERED="1",
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        MCP_ELICIT_TOKENS=str(home / "tokens.json"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    return env


async def run(args: Sequence[str], *, cwd: Path = ROOT, home: Path | None = None) -> Done:
    """``mcp-elicit ARGS`` with no terminal, stopped if it outlives RUN_TIMEOUT."""
    proc = await asyncio.create_subprocess_exec(
        *cli(),
        *args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=environ(home or cwd),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return Done(proc.returncode, out.decode(), err.decode())


async def run_all(*runs: tuple[Sequence[str], Path]) -> list[Done]:
    """Several ``run``s at once (each process is bounded by RUN_TIMEOUT)."""
    return list(await asyncio.gather(*(run(args, cwd=cwd) for args, cwd in runs)))


def timings(text: str) -> str:
    """``text`` with the measured times, which differ from run to run, as ``N``."""
    return re.sub(r"\d+(\.\d+)? ms", "N ms", text)


@pytest.mark.anyio
async def test_check_prints_what_the_readme_shows(app_py: Path) -> None:
    """The sample output is the demo server's, whose check starts by naming it."""
    assert "mcp-elicit check -- mcp-elicit serve app.py" in commands()
    (sample,) = [b for b in blocks("") if b.first.startswith("mcp-elicit check ")]
    assert sample.first.split() == ["mcp-elicit", "check", "mcp-elicit", "serve", DEMO, "(stdio)"], (
        sample.first
    )
    own, demo = await run_all(
        (["check", "--", "mcp-elicit", "serve", "app.py"], app_py.parent),
        (["check", "--", "mcp-elicit", "serve", DEMO], ROOT),
    )
    assert own.code == 0, own
    assert "OK: the server answers and lists its tools." in own.out
    assert demo.code == 0, demo
    assert timings(demo.out) == timings(sample.text)


@pytest.mark.anyio
async def test_call_prompt_and_read_as_documented(tmp_path: Path) -> None:
    documented = commands()
    stdio = ["--", "mcp-elicit", "serve", DEMO]
    for line in [
        f"mcp-elicit call book_table restaurant=noma -- mcp-elicit serve {DEMO}",
        f"mcp-elicit prompt plan_evening city=Oslo -- mcp-elicit serve {DEMO}",
        f"mcp-elicit read bookings://menu/noma -- mcp-elicit serve {DEMO}",
        "mcp-elicit call http://127.0.0.1:8000/mcp book_table restaurant=noma --answers answers.json",
    ]:
        assert line in documented, line
    # the script answers the demo's questions, so the server on port 8000 must be the demo
    (shown,) = [b for b in blocks("sh") if "--answers answers.json" in b.text]
    serving = shown.text.find(f"mcp-elicit serve {DEMO} --http 127.0.0.1:8000")
    assert 0 <= serving < shown.text.index("mcp-elicit call http://127.0.0.1:8000/mcp"), shown.text
    # the README's answer script as written: the demo refuses a past date, so the one shown
    # must stay to come for as long as the README is read (a year at the very least)
    shown_script = block_starting("json", '{"answers"').text
    booked = dt.date.fromisoformat(json.loads(shown_script)["answers"][0]["content"]["date"])
    assert booked >= dt.date.today() + dt.timedelta(days=366), f"{booked} is too close to come"
    (tmp_path / "answers.json").write_text(shown_script, encoding="utf-8")
    (tmp_path / "bad.json").write_text('{"answers": [{"action": "maybe"}]}', encoding="utf-8")
    with http_process(ROOT / DEMO, log_dir=tmp_path, args=("--store", "memory://")) as server:
        url = server.url
        call, prompt, read, scripted, unknown, bad_script, usage, nothing = await run_all(
            (["call", "book_table", "restaurant=noma", *stdio], ROOT),
            (["prompt", "plan_evening", "city=Oslo", *stdio], ROOT),
            (["read", "bookings://menu/noma", *stdio], ROOT),
            (["call", url, "book_table", "restaurant=noma", "--answers", "answers.json"], tmp_path),
            (["call", url, "no_such_tool"], tmp_path),
            (["call", url, "book_table", "--answers", "bad.json"], tmp_path),
            (["check", url, "--no-such-option"], tmp_path),
            (["check", f"http://127.0.0.1:{free_port()}/mcp"], tmp_path),
        )
    # without a terminal and without --answers the client declares no elicitation at all
    assert call.code == 0, call
    assert "Your client cannot show forms" in call.out
    assert prompt.code == 0, prompt
    assert "[user] Plan a relaxed evening in Oslo" in prompt.out
    assert read.code == 0, read
    assert read.out.startswith("bookings://menu/noma (text/plain)\nNoma, Copenhagen")
    assert scripted.code == 0, scripted
    assert scripted.out == f"Booked #1: Noma, Copenhagen, 2 people on {booked.isoformat()}, inside.\n"
    # the exit codes of the table: 1 something wrong (a tool the server does not list), 2 usage,
    # 3 cannot connect
    assert unknown.code == 1, unknown
    assert bad_script.code == 2, bad_script
    assert usage.code == 2, usage
    assert nothing.code == 3, nothing


@pytest.mark.anyio
async def test_keygen_then_serve_with_the_key_file(app_py: Path, tmp_path: Path) -> None:
    assert "mcp-elicit keygen > state.keys" in commands()
    keys = await run(["keygen"], cwd=tmp_path)
    assert keys.code == 0, keys
    (tmp_path / "state.keys").write_text(keys.out, encoding="utf-8")
    (tmp_path / "state.keys").chmod(0o600)  # as the README says next: serve refuses it otherwise
    with http_process(
        app_py, log_dir=tmp_path, args=("--state-key-file", str(tmp_path / "state.keys"))
    ) as one:
        with http_process(
            app_py, log_dir=tmp_path, args=("--state-key-file", str(tmp_path / "state.keys"))
        ) as two:
            async with httpx.AsyncClient(timeout=RUN_TIMEOUT) as http:
                # a round asked by one instance is answered on the other: the same keys open it
                first = (await Modern(http, one.url).call("book_table", {"restaurant": "noma"}))["result"]
                assert first["resultType"] == "input_required", first
                (key,) = first["inputRequests"]
                final = await Modern(http, two.url).call(
                    "book_table",
                    {"restaurant": "noma"},
                    inputResponses={key: {"action": "decline"}},
                    requestState=first["requestState"],
                )
    assert final["result"]["content"][0]["text"] == DECLINED, final


def test_the_opentelemetry_launcher_command_traces(app_py: Path, tmp_path: Path) -> None:
    """The README's ``opentelemetry-instrument`` line, run as written (on a free port): the
    launcher sets up the SDK with the exporters it names, and the server's spans come out."""
    (line,) = [c for c in commands() if c.startswith("opentelemetry-instrument ")]
    assert "mcp-elicit serve app.py --http 127.0.0.1:8000" in line, line
    launcher = Path(sys.executable).parent / "opentelemetry-instrument"
    if not launcher.exists():
        pytest.skip("opentelemetry-distro (a dev dependency) is not installed")
    port = free_port()
    argv = line.replace("127.0.0.1:8000", f"127.0.0.1:{port}").split()
    out_path, err_path = tmp_path / "otel.out", tmp_path / "otel.err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=app_py.parent, env=environ(tmp_path)
        )
    try:
        assert wait_listening(proc, port), err_path.read_text(errors="replace")
        check = subprocess.run(
            [*cli(), "check", f"http://127.0.0.1:{port}/mcp"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=tmp_path,
            env=environ(tmp_path),
            timeout=RUN_TIMEOUT,
        )
        assert check.returncode == 0, check
    finally:
        _stop(proc)  # the SDK exports what it holds as the process exits
    logged = err_path.read_text(errors="replace")
    assert "Failed to auto initialize OpenTelemetry" not in logged, logged
    spans = out_path.read_text(errors="replace")
    for name in ("server/discover", "tools/list"):
        assert f'"name": "{name}"' in spans, spans[-3000:] + logged[-3000:]


@pytest.mark.anyio
async def test_lifespan_context_outside_handlers_as_documented(app_py: Path, tmp_path: Path) -> None:
    """ "code outside them as ``app.lifespan_context``": None for ``app.py``, which has no
    ``lifespan=``; for the README's weather server, a RuntimeError until it is entered, then
    what its lifespan yielded."""
    said = " ".join(README.read_text(encoding="utf-8").split())
    assert "`app.lifespan_context` (None for a server without `lifespan=`; with one, a `RuntimeError`" in said
    assert load_server(str(app_py)).lifespan_context is None
    weather_py = tmp_path / "weather.py"
    weather_py.write_text(block_starting("python", "# lifespan").text, encoding="utf-8")
    weather = load_server(str(weather_py))
    with pytest.raises(RuntimeError, match="hold_lifespan"):
        weather.lifespan_context  # noqa: B018 - reading it is the check
    async with weather.hold_lifespan():
        assert isinstance(weather.lifespan_context, httpx.AsyncClient)
