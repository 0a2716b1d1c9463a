"""A real nginx for tests: a round-robin load balancer on 127.0.0.1 in front of local
upstreams, always stopped.

* ``nginx_balancer(upstreams, workdir, read_timeout=120, balance="", routes=None,
  headers=())``: a context manager that writes ``workdir/nginx.conf`` and runs
  ``nginx -p workdir -c workdir/nginx.conf -e workdir/error.log`` in the foreground (``daemon off``), listening on a free loopback
  port, until the block ends (SIGQUIT, then kill). A port taken between choosing and
  binding is retried on another.
* One worker process, plain round robin, no keepalive to the upstreams
  (``proxy_http_version 1.1`` with an empty ``Connection``): consecutive requests go to
  the upstreams in turn, whatever client connection they came on. ``proxy_buffering off``
  (SSE passes through as it is written), ``Host`` passed on as the client sent it (the
  MCP server's DNS-rebinding check sees the balancer's address), no retry of a failed
  request on the other upstream. ``read_timeout`` is nginx's ``proxy_read_timeout``: how
  long an upstream response may stay silent before nginx gives up on it (504 before the
  response head, the connection closed after it). ``balance`` is a directive for the
  pool instead of round robin (``hash $http_mcp_session_id consistent;``). ``routes``
  (route name -> upstream port) is the README's config for 2025-11-25 sessions: one
  upstream per route and a ``map`` from the ``Mcp-Session-Id`` prefix ``<route>.`` to it;
  requests without a session id (or naming no route listed) go to the pool. ``headers``:
  more ``proxy_set_header`` lines for the location (the README's ``X-Forwarded-*``).
* ``Nginx.served()`` reads the access log: one ``Served`` per finished request, naming
  the upstream port that answered it and the ``Mcp-Session-Id`` it carried.
* Every path nginx writes (pid, logs, temp directories) is under ``workdir``; no system
  file is read or written. No nginx: ``nginx_available()`` is False and tests skip saying
  ``make services`` installs it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from support.procs import on_a_free_port, wait_listening

__all__ = ["Nginx", "Served", "SKIP_REASON", "nginx_available", "nginx_balancer", "nginx_binary"]

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
SKIP_REASON = "nginx is not installed (`make services` installs it)"
_LOG_FORMAT = "$msec $request_method $status $upstream_addr $request_time $http_mcp_session_id $request_uri"


@dataclass(frozen=True)
class Served:
    """One request nginx finished: which upstream port answered it (None: none did), and
    the session it named (None: none)."""

    at: float
    method: str
    status: int
    upstream: int | None
    seconds: float
    uri: str
    session: str | None = None


@dataclass
class Nginx:
    proc: subprocess.Popen[bytes]
    port: int
    workdir: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def served(self) -> list[Served]:
        """Every request finished so far, in the order nginx logged them."""
        path = self.workdir / "access.log"
        if not path.exists():
            return []
        out: list[Served] = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            at, method, status, upstream, seconds, session, uri = line.split(" ", 6)
            port = upstream.rsplit(":", 1)[-1]
            out.append(
                Served(
                    float(at),
                    method,
                    int(status),
                    int(port) if port.isdigit() else None,
                    float(seconds),
                    uri,
                    None if session == "-" else session,
                )
            )
        return out

    def error_log(self) -> str:
        return _error_log(self.workdir)


def _error_log(workdir: Path) -> str:
    path = workdir / "error.log"
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def nginx_binary() -> str | None:
    found = shutil.which("nginx")
    if found is not None:
        return found
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


def nginx_available() -> bool:
    return nginx_binary() is not None


def _config(
    workdir: Path,
    port: int,
    upstreams: Sequence[int],
    modules: str,
    read_timeout: float,
    balance: str,
    routes: Mapping[str, int],
    headers: Sequence[str] = (),
) -> str:
    temp = "\n".join(
        f"    {kind}_temp_path {workdir / 'tmp' / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        # a module left out of this build has no temp path directive
        if kind in ("client_body", "proxy") or f"--without-http_{kind}_module" not in modules
    )
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in upstreams)
    routed = "".join(f"    upstream mcp_{name} {{ server 127.0.0.1:{p}; }}\n" for name, p in routes.items())
    if routes:
        entries = "".join(f"        ~^{name}\\. mcp_{name};\n" for name in routes)
        routed += f"    map $http_mcp_session_id $mcp_upstream {{\n        default mcp;\n{entries}    }}\n"
    target = "$mcp_upstream" if routes else "mcp"
    more = "".join(f"            {line}\n" for line in headers)
    user = "user root;\n" if os.geteuid() == 0 else ""  # else workers run as nobody, locked out of workdir
    return f"""{user}daemon off;
master_process on;
worker_processes 1;
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} info;
events {{ worker_connections 512; }}
http {{
    log_format upstreams '{_LOG_FORMAT}';
    access_log {workdir / "access.log"} upstreams;
{temp}
    upstream mcp {{
        {balance}
{servers}
    }}
{routed}    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://{target};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
{more}            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout {int(read_timeout * 1000)}ms;
            proxy_next_upstream off;
        }}
    }}
}}
"""


@contextlib.contextmanager
def nginx_balancer(
    upstreams: Sequence[int],
    workdir: Path,
    *,
    read_timeout: float = 120.0,
    balance: str = "",
    routes: Mapping[str, int] | None = None,
    headers: Sequence[str] = (),
) -> Iterator[Nginx]:
    """Run nginx on a free loopback port, balancing over ``upstreams`` (127.0.0.1 ports)."""
    binary = nginx_binary()
    if binary is None:
        raise FileNotFoundError(SKIP_REASON)
    modules = subprocess.run([binary, "-V"], capture_output=True, text=True, timeout=10, check=False).stderr
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "tmp").mkdir(exist_ok=True)
    conf = workdir / "nginx.conf"

    def start(port: int) -> subprocess.Popen[bytes]:
        text = _config(workdir, port, upstreams, modules, read_timeout, balance, routes or {}, headers)
        conf.write_text(text, encoding="utf-8")
        with (workdir / "nginx.stderr").open("wb") as err:
            return subprocess.Popen(
                [binary, "-p", str(workdir), "-c", str(conf), "-e", str(workdir / "error.log")],
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
                start_new_session=True,  # its own process group: workers are stopped with it
            )

    def ready(proc: subprocess.Popen[bytes], port: int) -> bool:
        return wait_listening(proc, port, START_TIMEOUT, name="nginx")

    def output(port: int) -> str:
        return _error_log(workdir) + (workdir / "nginx.stderr").read_text(errors="replace")

    with on_a_free_port(start, output=output, name="nginx", ready=ready, stop=_stop) as (proc, port):
        yield Nginx(proc, port, workdir)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Graceful stop (SIGQUIT lets workers finish), then kill; the master reaps its workers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(STOP_TIMEOUT)
