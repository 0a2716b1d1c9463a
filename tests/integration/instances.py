"""``mcp-elicit serve`` as real processes on ports the test chooses (so one can be killed
and started again on the same address), an MCP client speaking 2026-07-28 with plain
httpx, and a browser filling the server's secret page.

* ``Instance.start(app, port, log_dir, args)``: serve ``app`` on 127.0.0.1:``port``; ready
  once the port accepts connections (bounded). ``stop()`` terminates then kills;
  ``kill9()`` is SIGKILL and nothing else (no shutdown code runs). stderr goes to a file,
  appended across restarts, so ``runs()`` counts every handler run the instance logged.
* ``keygen(path)``: a key file written by ``mcp-elicit keygen``, as an operator would.
* ``Modern``: one tools/call per ``call()`` with ``_meta`` and the mirrored headers.
* ``claim(browser, link)``: open the page link as a browser does (the link's token is used
  up, the cookie kept); ``submit_secret(...)`` then types the value and presses Save.
* ``running_cluster(tmp, routed=...)``: two instances ``a`` and ``b`` sharing a key file and
  a Redis behind nginx (round robin; ``routed``: each serves with ``--route`` its name, and
  nginx routes a session id by its prefix), as a ``Cluster``; skipped without Redis or nginx.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.nginx import SKIP_REASON as NO_NGINX
from support.nginx import Nginx, nginx_available, nginx_balancer
from support.procs import ROOT, cli, free_port
from support.redis import SKIP_REASON as NO_REDIS
from support.redis import RedisServer, redis_available, redis_server

__all__ = ["APP", "Cluster", "Instance", "Modern", "claim", "keygen", "running_cluster", "submit_secret"]

APP = Path(__file__).resolve().parent / "app.py"
START_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}
_RUN = re.compile(r"run (\w+) flow=(\S+) pid=(\d+)")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("MCP_ELICIT_STATE_KEYS", "MCP_ELICIT_STORE"):
        env.pop(name, None)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def keygen(path: Path) -> Path:
    done = subprocess.run([*cli(), "keygen"], capture_output=True, check=True, timeout=30, env=_env())
    path.write_bytes(done.stdout)
    path.chmod(0o600)  # serve refuses a key file others may read
    return path


@dataclass
class Instance:
    """One ``mcp-elicit serve --http`` process (restartable on the same port)."""

    app: Path
    port: int
    log: Path
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def start(
        cls,
        app: Path,
        port: int,
        log: Path,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> Instance:
        instance = cls(app, port, log, args, dict(env or {}))
        instance.restart()
        return instance

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def restart(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, "stop it first"
        command = [*cli(), "serve", str(self.app), "--http", f"127.0.0.1:{self.port}", *self.args]
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=err, stderr=err, cwd=ROOT, env=_env(self.env)
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.stderr()}")
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.settimeout(0.5)
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"the server did not listen on 127.0.0.1:{self.port} within {START_TIMEOUT} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)

    def kill9(self) -> None:
        """SIGKILL: the process gets no chance to flush, close or say goodbye."""
        assert self.proc is not None and self.proc.poll() is None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(STOP_TIMEOUT)

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def runs(self, tool: str | None = None) -> list[tuple[str, str, int]]:
        """(tool, flow, pid) of every handler run this instance logged."""
        found = [(m[1], m[2], int(m[3])) for m in _RUN.finditer(self.stderr())]
        return [r for r in found if tool is None or r[0] == tool]


class Modern:
    """A 2026-07-28 client, one HTTP request per ``call``; the rounds are the test's."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url, self.ids = http, url, 0

    async def call(self, tool: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        self.ids += 1
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META, **extra},
        }
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": tool,
        }
        response = await self.http.post(self.url, json=body, headers=headers)
        assert response.status_code == 200, response.text
        message: dict[str, Any] = response.json()
        return message


async def claim(browser: httpx.AsyncClient, link: str) -> tuple[httpx.URL, str]:
    """Open the link from the client: the page's address (token gone) and its CSRF token."""
    first = await browser.get(link)
    assert first.status_code == 303, first.text
    page_url = first.url.join(first.headers["location"])
    assert "t=" not in str(page_url)
    page = await browser.get(page_url)
    assert page.status_code == 200, page.text
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert csrf is not None, page.text
    return page_url, csrf.group(1)


async def submit_secret(browser: httpx.AsyncClient, page_url: httpx.URL, csrf: str, value: str) -> None:
    done = await browser.post(page_url, data={"csrf": csrf, "action": "submit", "value": value})
    assert done.status_code == 200, done.text
    assert "Saved" in done.text


@dataclass
class Cluster:
    a: Instance
    b: Instance
    lb: Nginx
    redis: RedisServer
    prefix: str

    @property
    def url(self) -> str:
        return f"{self.lb.base}/mcp"

    @property
    def instances(self) -> tuple[Instance, Instance]:
        return self.a, self.b

    def port_of(self, route: str) -> int:
        return {"a": self.a.port, "b": self.b.port}[route]

    def runs(self, tool: str) -> dict[str, set[int]]:
        """flow -> the pids that ran its handler."""
        out: dict[str, set[int]] = {}
        for instance in self.instances:
            for _, flow, pid in instance.runs(tool):
                out.setdefault(flow, set()).add(pid)
        return out

    def logs(self) -> str:
        return "\n".join(f"--- {i.log.name}\n{i.stderr()}" for i in self.instances)


@contextlib.contextmanager
def running_cluster(tmp: Path, *, routed: bool = False) -> Iterator[Cluster]:
    if not redis_available():
        pytest.skip(NO_REDIS)
    if not nginx_available():
        pytest.skip(NO_NGINX)
    with contextlib.ExitStack() as stack:  # unwinds in reverse: servers, nginx, redis; even on failure
        redis = stack.enter_context(redis_server(tmp))
        keys = keygen(tmp / "state.keys")
        prefix = f"it-{secrets.token_hex(4)}"
        ports = {"a": free_port(), "b": free_port()}
        lb = stack.enter_context(
            nginx_balancer(list(ports.values()), tmp / "nginx", routes=ports if routed else None)
        )
        store = f"{redis.url}?prefix={prefix}"
        # a page waited on wakes only by the Redis event, never by a re-check (60 s)
        env = {"INTEGRATION_FLOW_WAIT": "60", "INTEGRATION_FLOW_RECHECK": "60"}
        instances = []
        for route, port in ports.items():
            args = ("--state-key-file", str(keys), "--store", store, "--public-url", lb.base)
            instance = Instance(
                APP, port, tmp / f"{route}.stderr", (*args, "--route", route) if routed else args, env
            )
            stack.callback(instance.stop)
            instance.restart()
            instances.append(instance)
        yield Cluster(instances[0], instances[1], lb, redis, prefix)
