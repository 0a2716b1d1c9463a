"""A server for the stdio tests: a tool that runs until it is cancelled (it reports progress
first, so a test knows it is running), one that returns even when cancelled, a quick one,
one that adds a tool, one that writes to stdout as tool code may, one that writes to stderr
likewise (and logs once more as the process exits), one that leaves work behind that reports after the tool returned,
one that runs until a file the test makes exists (logging whether it was told or cancelled),
and one that, cancelled, goes on until such a file exists."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import subprocess
import sys

from mcp_elicit import Context, Server

app = Server("waiting")


@app.tool(description="Reports progress, then sleeps")
async def wait(ctx: Context, seconds: float = 30.0) -> str:
    await ctx.report_progress(0, 1, "started")
    await asyncio.sleep(seconds)
    return f"waited {seconds:g}"


@app.tool(description="Reports progress, then sleeps; cancelled, it still returns a little later")
async def stubborn(ctx: Context) -> str:
    await ctx.report_progress(0, 1, "started")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        await asyncio.sleep(0.2)
        await ctx.report_progress(1, 1, "finished anyway")
        await ctx.warning("finished anyway")
        return "finished anyway"
    return "slept"


@app.tool(description="Reports progress, then runs until a file exists at path; logs how it ended")
async def until_told(ctx: Context, path: str) -> str:
    said = logging.getLogger("waiting.until_told")
    await ctx.report_progress(0, 1, "started")
    try:
        while not os.path.exists(path):  # noqa: ASYNC110, ASYNC240 (another process makes it)
            await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        said.warning("until_told: cancelled")
        raise
    said.warning("until_told: told")
    return "told"


@app.tool(description="Reports progress, then sleeps; cancelled, it goes on until a file exists at path")
async def stubborn_until(ctx: Context, path: str) -> str:
    await ctx.report_progress(0, 1, "started")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        while not os.path.exists(path):  # noqa: ASYNC110, ASYNC240 (another process makes it)
            await asyncio.sleep(0.02)
        await ctx.report_progress(1, 1, "finished anyway")
        return "finished anyway"
    return "slept"


_left: set[asyncio.Task[None]] = set()


@app.tool(description="Returns at once, leaving work that reports progress and logs 0.2 s later")
async def lingering(ctx: Context) -> str:
    async def later() -> None:
        await asyncio.sleep(0.2)
        await ctx.report_progress(1, 1, "after the answer")
        await ctx.warning("after the answer")

    task = asyncio.ensure_future(later())
    _left.add(task)
    task.add_done_callback(_left.discard)
    await ctx.report_progress(0, 1, "started")
    return "returned"


@app.tool(description="Echoes its argument")
def echo(text: str) -> str:
    return text


@app.tool(description="Registers one more tool (its clients that listen are told)")
def grow(name: str) -> str:
    app.tool(name=name, description="Grown at run time")(lambda: name)
    return f"grew {name}"


@app.tool(description="Writes to stdout the ways tool code does: print(), fd 1, a child process")
def chatter(text: str) -> str:
    print(f"print: {text}")
    os.write(1, f"fd 1: {text}\n".encode())
    subprocess.run([sys.executable, "-c", f"print('child: {text}')"], check=True)
    return text


_grumbled: list[str] = []


@app.tool(
    description="Writes to stderr the ways tool code does: print(), logging, fd 2, a child process; logs at exit"
)
def grumble(text: str) -> str:
    if not _grumbled:  # and once more, as the process exits
        atexit.register(logging.getLogger("waiting.grumble").warning, "logging at exit: %s", text)
        _grumbled.append(text)
    print(f"print: {text}", file=sys.stderr)
    sys.stderr.write(f"write: {text}\n")
    logging.getLogger("waiting.grumble").warning("logging: %s", text)
    os.write(2, f"fd 2: {text}\n".encode())
    subprocess.run([sys.executable, "-c", f"import sys; print('child: {text}', file=sys.stderr)"], check=True)
    return text
