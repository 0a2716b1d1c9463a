"""`make demo`: elicitation end to end, in one command.

Starts the booking server (examples/demo_server.py) over Streamable HTTP on 127.0.0.1, and
the Demo Calendar provider (examples/demo_provider.py) next to it. Then, as a client that
declares elicitation, it

1. books a table (`book_table`): a form, then a confirmation, and lists the bookings;
2. checks live availability (`check_availability`), which needs an API key: URL mode, so
   the key is typed into the server's own page and never crosses the MCP connection;
3. adds the booking to the calendar (`share_to_calendar`), which needs a sign-in at the
   calendar provider: URL mode again, through the server's page to the provider and back.

In a terminal you answer yourself: forms in the terminal; for the pages, the terminal shows
the address and opens it in your browser when you type `o` (any made-up key will do).
Without a terminal (CI, or `make demo < /dev/null`) the form answers come from
examples/demo_answers.json, with the date moved to tomorrow, and the demo stands in for you
on the pages: it opens each link with httpx from this machine, as your browser would, and
types a made-up key or presses Allow, while the client's retry waits for the page. What
the pages store (the key, the calendar tokens) goes to a temporary SQLite store, removed
at the end with everything else; both servers are stopped. Extra arguments go to
`mcp-elicit call` (try `--trace`). Once stdout's reader has gone away (`| head -3`), the
demo stops there, as `mcp-elicit` does: exit 141, nothing said.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from mcp_elicit.cli import output
from mcp_elicit.cli.call import Recorded
from mcp_elicit.cli.main import EXIT_BROKEN_PIPE, reader_gone
from mcp_elicit.cli.main import main as _cli
from mcp_elicit.client import ElicitAnswer, ElicitationRequest
from mcp_elicit.transports.http_client import connect_http

HERE = Path(__file__).resolve().parent
START_TIMEOUT = 20.0
PAGE_TIMEOUT = 30.0
DEMO_KEY = "tb_demo_7f3c1e9a"  # made up: the demo's TableBook accepts any key


def say(text: str) -> None:
    print(f"mcp-elicit demo: {text}", file=sys.stderr, flush=True)


# ---- the two servers -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bindable(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:``port`` now: nothing listens there and no
    connection uses it as its own port (a port merely free of listeners can be either)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _port_taken(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _start(
    what: str, command: Sequence[str], port: int, log: Path, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    with log.open("wb") as err:
        proc = subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=err, stderr=err, env={**os.environ, **env}
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the {what} exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        if _port_taken(port):
            return proc
        time.sleep(0.05)
    _stop(proc)
    raise SystemExit(f"the {what} did not listen on 127.0.0.1:{port} within {START_TIMEOUT:g} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _script(directory: Path) -> Path:
    """examples/demo_answers.json with tomorrow's date."""
    script = json.loads((HERE / "demo_answers.json").read_text(encoding="utf-8"))
    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    for entry in script["answers"]:
        if "date" in entry.get("content", {}):
            entry["content"]["date"] = tomorrow
    path = directory / "answers.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    return path


# ---- standing in for the person on the pages (no terminal) ---------------------------------


class StandIn:
    """Plays the person for URL-mode questions when there is no terminal: consents at once,
    then opens the page with httpx (from this machine, as the person's browser would) and
    does there what the person would do, while the client's retry waits for the page."""

    def __init__(self) -> None:
        self.pages: list[asyncio.Task[None]] = []
        self.call: asyncio.Task[dict[str, Any]] | None = None

    @property
    def modes(self) -> frozenset[str]:
        return frozenset({"url"})

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        self.pages.append(asyncio.ensure_future(self._on_the_page(request.url or "")))
        return ElicitAnswer.accept()

    async def url_done(self, request: ElicitationRequest) -> None:
        return None

    async def _on_the_page(self, url: str) -> None:
        try:
            await asyncio.sleep(0.5)  # switching to the browser takes a moment; the retry waits
            async with asyncio.timeout(PAGE_TIMEOUT), httpx.AsyncClient(timeout=10) as browser:
                await _act_on(browser, url)
        except Exception as exc:
            if self.call is not None:
                self.call.cancel()  # no page will finish: do not leave the retry waiting
            say(f"standing in for you on the page failed: {type(exc).__name__}: {exc}")
            raise


async def _act_on(browser: httpx.AsyncClient, url: str) -> None:
    claimed = await browser.get(url)  # the link works once; the page sets this browser's cookie
    page = await browser.get(claimed.url.join(claimed.headers["location"]))
    page.raise_for_status()
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    start = re.search(r'href="([^"]+/start)"', page.text)
    if start is not None:  # a third-party sign-in: on to the provider, allow, and back
        to_provider = await browser.get(page.url.join(start.group(1)))
        consent = await browser.get(to_provider.headers["location"])
        ask = re.search(r'name="consent" value="([^"]+)"', consent.text)
        assert ask is not None, consent.text
        back = await browser.post(
            consent.url.join("/authorize/decide"), data={"consent": ask.group(1), "decision": "allow"}
        )
        done = await browser.get(back.headers["location"])
        did = "pressed 'Continue to calendar', pressed Allow on Demo Calendar's consent page, came back"
    else:
        assert csrf is not None, page.text
        done = await browser.post(
            page.url, data={"csrf": csrf.group(1), "action": "submit", "value": DEMO_KEY}
        )
        did = "typed a made-up TableBook key, pressed Save"
    status = re.search(r'role="status">([^<]*)<', done.text)
    shown = status.group(1) if status else f"HTTP {done.status_code}"
    print(f"  [standing in for you] opened the page, {did}: {shown!r}", file=sys.stderr, flush=True)
    done.raise_for_status()


async def _stand_in_call(url: str, tool: str, arguments: dict[str, Any]) -> int:
    stand_in = StandIn()
    async with connect_http(url, answerer=Recorded(stand_in), timeout=30) as client:
        stand_in.call = asyncio.ensure_future(client.call_tool(tool, arguments))
        try:
            result = await stand_in.call
        except asyncio.CancelledError:
            return 1
        finally:
            await asyncio.gather(*stand_in.pages, return_exceptions=True)
    output.print_result("tools/call", result)
    return 1 if result.get("isError") is True else 0


async def _booked(url: str) -> bool:
    async with connect_http(url) as client:
        listed = await client.call_tool("list_bookings")
    return any(str(b.get("text", "")).startswith("#1:") for b in listed.get("content", []))


# ---- the demo ------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--port", type=int, default=8765, help="where to serve (another if it is taken)")
    args, extra = parser.parse_known_args()
    port = args.port
    if not _bindable(port):
        port = _free_port()
        say(f"port {args.port} is taken; using {port}")
    provider_port = port + 1 if port < 65535 and _bindable(port + 1) else _free_port()
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    codes: list[int] = []
    with tempfile.TemporaryDirectory(prefix="mcp-elicit-demo-") as tmp:
        calendar = f"http://127.0.0.1:{provider_port}"
        provider = _start(
            "calendar provider",
            [sys.executable, str(HERE / "demo_provider.py"), "--port", str(provider_port)],
            provider_port,
            Path(tmp) / "provider.log",
            {},
        )
        try:
            server = _start(
                "demo server",
                [
                    sys.executable,
                    "-m",
                    "mcp_elicit",
                    "serve",
                    str(HERE / "demo_server.py"),
                    "--http",
                    f"127.0.0.1:{port}",
                    "--store",
                    f"sqlite:///{Path(tmp) / 'state.db'}",
                ],
                port,
                Path(tmp) / "server.log",
                {"MCP_ELICIT_DEMO_CALENDAR": calendar},
            )
            try:
                codes = _run(f"http://127.0.0.1:{port}/mcp", calendar, Path(tmp), interactive, extra)
            except BrokenPipeError:  # stdout's reader has gone away (`| head -3`): stop, as mcp-elicit does
                return reader_gone()
            finally:
                _stop(server)
        finally:
            _stop(provider)
    say("done, servers stopped. Next: mcp-elicit check -- mcp-elicit serve examples/demo_server.py")
    return next((code for code in codes if code != 0), 0)


def cli(argv: list[str]) -> int:
    """``mcp-elicit`` with ``argv``; a command that met stdout's closed pipe (141) stops the
    demo too."""
    code = _cli(argv)
    if code == EXIT_BROKEN_PIPE:
        raise BrokenPipeError("stdout's reader has gone away")
    return code


def _run(url: str, calendar: str, tmp: Path, interactive: bool, extra: list[str]) -> list[int]:
    say(f"the booking server is at {url}; the Demo Calendar provider at {calendar}")
    how = "you answer in this terminal" if interactive else f"answers from {HERE / 'demo_answers.json'}"
    say(f"calling book_table restaurant=noma ({how})\n")
    who = ["--ui", "terminal"] if interactive else ["--answers", str(_script(tmp))]
    codes = [cli(["call", url, "book_table", "restaurant=noma", *who, *extra])]
    print(file=sys.stderr)
    say("the bookings now:")
    cli(["call", url, "list_bookings", "--ui", "none"])

    print(file=sys.stderr)
    say("calling check_availability restaurant=noma: it needs your TableBook API key, which must never")
    say("go through the chat, so the server asks for it on its own page (URL mode)")
    if interactive:
        say("type o to open the page in your browser, enter any made-up key, then come back here\n")
        codes.append(cli(["call", url, "check_availability", "restaurant=noma", "--ui", "terminal", *extra]))
    else:
        say("no terminal here, so this demo stands in for you on the page: it opens the link with")
        say("httpx from this machine, as your browser would, and types a made-up key\n")
        codes.append(asyncio.run(_stand_in_call(url, "check_availability", {"restaurant": "noma"})))

    if not asyncio.run(_booked(url)):
        return codes
    print(file=sys.stderr)
    say("calling share_to_calendar booking_id=1: it needs you to sign in at Demo Calendar (URL mode;")
    say("the tokens stay on the server)")
    if interactive:
        say("type o, press Continue on the page; the provider allows by itself; then come back here\n")
        codes.append(cli(["call", url, "share_to_calendar", "booking_id=1", "--ui", "terminal", *extra]))
    else:
        say("again this demo stands in for you: Continue, then Allow at the provider\n")
        codes.append(asyncio.run(_stand_in_call(url, "share_to_calendar", {"booking_id": 1})))
    return codes


if __name__ == "__main__":
    os.chdir(HERE.parent)
    raise SystemExit(main())
