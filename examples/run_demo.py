"""`make demo`: one whole elicitation round, in one command.

Serves examples/demo_server.py over Streamable HTTP on 127.0.0.1, calls its `book_table`
tool as a client that declares elicitation (`mcp-elicit call`), lists the bookings, and
stops the server. In a terminal you answer the form yourself; without one (CI, or
`make demo < /dev/null`) the answers come from examples/demo_answers.json, with the date
moved to tomorrow so the booking is never in the past. Extra arguments go to
`mcp-elicit call` (try `--trace`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp_elicit.cli.main import main as cli

HERE = Path(__file__).resolve().parent
START_TIMEOUT = 20.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_taken(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _serve(port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcp_elicit",
                "serve",
                str(HERE / "demo_server.py"),
                "--http",
                f"127.0.0.1:{port}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(
                f"the demo server exited with {proc.returncode}:\n{log.read_text(errors='replace')}"
            )
        if _port_taken(port):
            return proc
        time.sleep(0.05)
    _stop(proc)
    raise SystemExit(f"the demo server did not listen on 127.0.0.1:{port} within {START_TIMEOUT:g} s")


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8765, help="where to serve (another if it is taken)")
    args, extra = parser.parse_known_args()
    port = args.port
    if _port_taken(port):
        port = _free_port()
        print(f"mcp-elicit demo: port {args.port} is taken; using {port}", file=sys.stderr)
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    with tempfile.TemporaryDirectory(prefix="mcp-elicit-demo-") as tmp:
        log = Path(tmp) / "server.log"
        proc = _serve(port, log)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            print(f"mcp-elicit demo: the booking server is at {url}", file=sys.stderr)
            how = (
                "you answer in this terminal" if interactive else f"answers from {HERE / 'demo_answers.json'}"
            )
            print(
                f"mcp-elicit demo: calling book_table restaurant=noma ({how})\n", file=sys.stderr, flush=True
            )
            who = ["--ui", "terminal"] if interactive else ["--answers", str(_script(Path(tmp)))]
            code = cli(["call", url, "book_table", "restaurant=noma", *who, *extra])
            print("\nmcp-elicit demo: the bookings now:", file=sys.stderr, flush=True)
            cli(["call", url, "list_bookings", "--ui", "none"])
        finally:
            _stop(proc)
    print(
        "\nmcp-elicit demo: done, server stopped. Next: mcp-elicit check -- mcp-elicit serve examples/demo_server.py",
        file=sys.stderr,
    )
    return code


if __name__ == "__main__":
    os.chdir(HERE.parent)
    raise SystemExit(main())
