"""The browser answerer in a real Chromium (Playwright), end to end: the library with a real server in
memory at both revisions, and ``mcp-elicit call --ui web``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli.helpers import TOMORROW, demo_stdio

from mcp_elicit import Choice, Context, Form, Integer, Server
from mcp_elicit.forms import Boolean
from mcp_elicit.transports.memory import connect_memory
from mcp_elicit.ui.web import WebAnswerer

from support.browser import NewPage
from support.procs import ROOT, http_process
from support.web_page import OSLO, expect, review_and_send

pytestmark = [pytest.mark.anyio]

FORM_SERVER = Path(__file__).resolve().parent / "form_server.py"


async def test_the_library_with_a_real_server_in_memory(new_page: NewPage) -> None:
    app = Server("survey", "2.0", title="Survey")

    @app.tool()
    async def survey(ctx: Context) -> str:
        """Asks two things at once."""
        mood, size = await ctx.gather(
            ctx.elicit("How are you?", Form(mood=Choice(["good", "bad"])), key="mood"),
            ctx.elicit("How many?", Form(n=Integer(minimum=1)), key="size"),
        )
        return json.dumps([mood.action, mood.content, size.action, size.content])

    sent: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    def trace(direction: str, message: Any) -> None:
        if direction == "send":
            sent.append(dict(message))

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    async with connect_memory(app, answerer=answerer, trace=trace) as client:
        call = asyncio.ensure_future(client.call_tool("survey", {}))
        page = await new_page()
        await page.goto(await asyncio.wait_for(links.get(), 10))
        await expect(page.locator("h1")).to_have_text("Survey 2.0 asks you")
        await page.check("#q0-f0-o0")
        await page.fill("#q1-f0-input", "0")
        await page.click("#review")
        await expect(page.locator("#q1-f0-error")).to_have_text("N must be at least 1")
        await page.fill("#q1-f0-input", "2")
        await review_and_send(page, "Answered")  # 2026-07-28: it goes with the retry
        result = await asyncio.wait_for(call, 10)
    assert json.loads(result["content"][0]["text"]) == ["accept", {"mood": "good"}, "accept", {"n": 2}]
    retries = [
        m["params"] for m in sent if m.get("method") == "tools/call" and "inputResponses" in m["params"]
    ]
    assert retries[0]["inputResponses"] == {
        "mood": {"action": "accept", "content": {"mood": "good"}},
        "size": {"action": "accept", "content": {"n": 2}},
    }


async def test_at_2025_11_25_a_server_request_gets_its_page(new_page: NewPage) -> None:
    app = Server("bookings", "1.0.0", title="Table bookings")

    @app.tool()
    async def confirm(ctx: Context) -> str:
        """Asks once."""
        answer = await ctx.elicit("Sure?", Form(sure=Boolean(title="Sure", default=False)))
        return f"{answer.action} {answer.content}"

    loop = asyncio.get_running_loop()
    links: asyncio.Queue[str] = asyncio.Queue()

    def opener(url: str) -> bool:
        loop.call_soon_threadsafe(links.put_nowait, url)
        return True

    answerer = WebAnswerer(open_url=opener, announce=lambda _: None)
    async with connect_memory(app, answerer=answerer, versions=["2025-11-25"]) as client:
        assert client.revision == "2025-11-25"
        call = asyncio.ensure_future(client.call_tool("confirm", {}))
        page = await new_page()
        await page.goto(await asyncio.wait_for(links.get(), 10))
        await page.check("#q0-f0-input")
        await review_and_send(page)
        result = await asyncio.wait_for(call, 10)
    assert result["content"][0]["text"] == "accept {'sure': True}"


@pytest.mark.slow
async def test_mcp_elicit_call_ui_web_end_to_end(new_page: NewPage, tmp_path: Path) -> None:
    """``mcp-elicit call --ui web`` against the demo server over stdio, in real processes;
    $BROWSER is a script that hands each link to this test."""
    links = tmp_path / "links"
    browser_script = tmp_path / "browser"
    browser_script.write_text(f'#!/bin/sh\necho "$1" >> {links}\n')
    browser_script.chmod(browser_script.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "BROWSER": str(browser_script)}
    env.pop("DISPLAY", None)
    command = [
        sys.executable, "-m", "mcp_elicit", "call", "book_table", "restaurant=noma", "--ui", "web",
        "--json", "--trace", "--", *demo_stdio(),
    ]  # fmt: skip
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, env=env, stdout=stdout, stderr=stderr
        )
        try:
            page = await new_page(**OSLO)
            await page.goto(await _link(links, 1, process))
            await expect(page.locator("h1")).to_have_text("Table bookings 1.0.0 asks")
            await expect(page.locator("#q0-message")).to_have_text(
                "Booking a table at Noma, Copenhagen: how many, and when?"
            )
            await page.fill("#q0-f0-input", "2")
            await page.fill("#q0-f1-input", TOMORROW)
            await page.get_by_label("On the terrace").check()
            await page.get_by_label("vegan", exact=True).check()
            await review_and_send(page, "Answered")  # 2026-07-28: it goes with the retry
            confirm = await new_page(**OSLO)
            await confirm.goto(await _link(links, 2, process))
            await expect(confirm.locator("#q0-message")).to_contain_text(
                "Please confirm: Noma, Copenhagen, 2 people"
            )
            await expect(confirm.locator("#q0-f0-input")).to_be_checked()  # the default
            await review_and_send(confirm, "Answered")
            code = await asyncio.wait_for(process.wait(), 30)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert code == 0, err.read_text()
    outcome = json.loads(out.read_text())
    assert outcome["result"]["content"][0]["text"].startswith(
        f"Booked #1: Noma, Copenhagen, 2 people on {TOMORROW}"
    )
    sent = [json.loads(line[2:]) for line in err.read_text().splitlines() if line.startswith("→ ")]
    retries = [m["params"]["inputResponses"] for m in sent if "inputResponses" in m.get("params", {})]
    assert retries == [
        {
            "details": {
                "action": "accept",
                "content": {"party_size": 2, "date": TOMORROW, "seating": "terrace", "dietary": ["vegan"]},
            }
        },
        {"confirm": {"action": "accept", "content": {"confirm": True}}},
    ]
    assert [r["action"] for r in outcome["rounds"]] == ["accept", "accept"]


async def _link(links: Path, count: int, process: asyncio.subprocess.Process) -> str:
    """The ``count``-th link the $BROWSER script was given."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = (await asyncio.to_thread(_read, links)).split()
        if len(lines) >= count:
            return lines[count - 1]
        if process.returncode is not None:
            raise AssertionError(f"mcp-elicit call ended early with {process.returncode}")
        await asyncio.sleep(0.05)
    raise AssertionError("no link was opened")


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


STOPS = [
    # Ctrl-C in the terminal while the browser's page waited ended the call (130) with
    # nothing said, where the terminal answerer says "Interrupted; nothing was sent.".
    pytest.param("SIGINT", 130, "mcp-elicit: interrupted; nothing was sent.", id="ctrl-c"),
    # SIGTERM said "interrupted", as if the person had pressed Ctrl-C
    pytest.param("SIGTERM", 143, "mcp-elicit: terminated (SIGTERM); nothing was sent.", id="sigterm"),
    # the server's process dying said "the question was withdrawn", as if it had taken it back
    pytest.param("server", None, "mcp-elicit: the server stopped; nothing was sent.", id="server dies"),
]


@pytest.mark.parametrize(("stop", "code", "says"), STOPS)
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_page_stopped_while_it_waits_says_what_stopped_it(
    tmp_path: Path, revision: str, stop: str, code: int | None, says: str
) -> None:
    links = tmp_path / "links"
    browser_script = tmp_path / "browser"
    browser_script.write_text(f'#!/bin/sh\necho "$1" >> {links}\n')
    browser_script.chmod(browser_script.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "BROWSER": str(browser_script)}
    env.pop("DISPLAY", None)
    schema = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}})
    pid_file = tmp_path / "server.pid"
    serve = f'echo $$ > "{pid_file}"; exec "$0" -m mcp_elicit serve "{FORM_SERVER}"'
    command = [
        sys.executable, "-m", "mcp_elicit", "call", "form", "message=How many?", f"schema={schema}",
        "--ui", "web", "--protocol", revision, "--", "/bin/sh", "-c", serve, sys.executable,
    ]  # fmt: skip
    err = tmp_path / "err"
    with err.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=stderr
        )
        try:
            await _link(links, 1, process)
            if stop == "server":
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            else:
                process.send_signal(getattr(signal, stop))
            ended = await asyncio.wait_for(process.wait(), 20)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    said = err.read_text()
    if revision == "2025-11-25" and stop != "server":  # a question over stdio: answered cancel
        says = says.replace("nothing was sent", "the server is told it was cancelled")
    assert code is None or ended == code, said
    assert says in said, said
    assert "the question was withdrawn" not in said and (stop == "SIGINT" or "interrupted" not in said), said
    assert "Traceback" not in said


TASK_SERVER = """
from mcp_elicit import Context, Form, Integer, Server

app = Server("tasker", "1.0.0", title="Task tests")


@app.tool(task="optional")
async def counted(ctx: Context) -> str:
    \"\"\"Goes on as a task, then asks.\"\"\"
    await ctx.start_task("counting")
    answer = await ctx.elicit("How many?", Form(n=Integer()), key="n")
    return answer.action
"""


async def _server_stops_while_a_page_waits(
    tmp_path: Path, call: list[str], serve: list[str], *, http: bool
) -> str:
    """What ``mcp-elicit call --ui web`` says (stderr) when the server it called, started
    with ``serve`` (stdio, or over HTTP on a free port), is killed while the page waits."""
    links = tmp_path / "links"
    browser_script = tmp_path / "browser"
    browser_script.write_text(f'#!/bin/sh\necho "$1" >> {links}\n')
    browser_script.chmod(browser_script.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "BROWSER": str(browser_script)}
    env.pop("DISPLAY", None)
    err, pid_file = tmp_path / "err", tmp_path / "server.pid"
    async with contextlib.AsyncExitStack() as stack:
        if http:
            server = stack.enter_context(
                http_process(serve[0], log_dir=tmp_path, args=("--store", "memory://"))
            )
            command = [sys.executable, "-m", "mcp_elicit", "call", server.url, *call, "--ui", "web"]
        else:
            started = f'echo $$ > "{pid_file}"; exec "$0" -m mcp_elicit serve {" ".join(serve)}'
            command = [sys.executable, "-m", "mcp_elicit", "call", *call, "--ui", "web", "--"]
            command += ["/bin/sh", "-c", started, sys.executable]
        with err.open("wb") as stderr:
            process = await asyncio.create_subprocess_exec(
                *command, cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=stderr
            )
            try:
                await _link(links, 1, process)
                if http:
                    server.proc.kill()
                else:
                    os.kill(int(pid_file.read_text()), signal.SIGKILL)
                await asyncio.wait_for(process.wait(), 20)
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
    return err.read_text()


async def test_a_page_whose_http_server_stops_says_the_server_stopped(tmp_path: Path) -> None:
    """Over HTTP at 2025-11-25 the question came on the call's stream: the server's process
    dying ended the stream, resuming it could not connect, and the page's question was
    "withdrawn", as if the server had taken it back (over stdio it said the server stopped)."""
    schema = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}})
    call = ["form", "message=How many?", f"schema={schema}", "--protocol", "2025-11-25"]
    said = await _server_stops_while_a_page_waits(tmp_path, call, [str(FORM_SERVER)], http=True)
    assert "mcp-elicit: the server stopped; nothing was sent." in said, said
    assert "the question was withdrawn" not in said and "Traceback" not in said, said


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
async def test_a_task_s_page_whose_server_stops_says_the_server_stopped(tmp_path: Path, http: bool) -> None:
    """A 2026-07-28 call that went on as a task asks while its polls go on: the server's
    process dying failed the next poll, and the page's question was "withdrawn", as if the
    task had stopped waiting for it."""
    app = tmp_path / "task_server.py"
    app.write_text(TASK_SERVER, encoding="utf-8")
    call = ["counted", "--protocol", "2026-07-28"]
    said = await _server_stops_while_a_page_waits(tmp_path, call, [str(app)], http=http)
    assert "input_required" in said, said  # it was a task's question
    assert "mcp-elicit: the server stopped; nothing was sent." in said, said
    assert "the question was withdrawn" not in said and "Traceback" not in said, said
