"""``mcp-elicit serve`` URL-mode options, on real processes: ``--store`` (else
``$MCP_ELICIT_STORE``, else the SQLite file in the user data directory) and
``--public-url`` (else the bound address; with ``--allow-host``, the request's Host)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from integration.instances import APP, Instance, Modern
from mcp_elicit.cli.address import default_public_url

from support.procs import ROOT, STOP_TIMEOUT, cli, free_port, wait_listening

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        ("127.0.0.1", 8000, "http://127.0.0.1:8000"),
        ("0.0.0.0", 8000, "http://127.0.0.1:8000"),
        # [::] is bound for IPv6 alone (as uvicorn binds it): 127.0.0.1 would not reach it
        ("::", 9000, "http://[::1]:9000"),
        ("0:0:0:0:0:0:0:0", 9000, "http://[::1]:9000"),
        ("::1", 9000, "http://[::1]:9000"),
        ("localhost", 80, "http://localhost:80"),
    ],
)
def test_the_default_public_url_is_the_bound_address(host: str, port: int, url: str) -> None:
    assert default_public_url(host, port) == url


async def start_flow(instance: Instance | str, host: str | None = None, **more: str) -> str:
    """Round one of a secret flow (it writes the flow to the store) on ``instance`` (or at
    that endpoint URL); the page link. ``more``: headers a proxy adds
    (``x_forwarded_proto="https"``)."""
    headers = {"host": host} if host else {}
    headers.update({name.replace("_", "-"): value for name, value in more.items()})
    url = instance if isinstance(instance, str) else instance.url
    async with httpx.AsyncClient(timeout=20, headers=headers) as http:
        first = (await Modern(http, url).call("use_key", {"flow": "opt"}))["result"]
    ((request,),) = [first["inputRequests"].values()]
    link: str = request["params"]["url"]
    return link


def serve(tmp: Path, name: str, args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Instance:
    return Instance(APP, free_port(), tmp / f"{name}.stderr", args, env or {})


def databases(tmp: Path) -> list[Path]:
    return sorted(tmp.rglob("*.db"))


async def test_the_store_comes_from_the_flag_else_the_environment_else_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    home = {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}
    cases = [
        ((), {**home}, data / "mcp-elicit" / "state.db"),
        ((), {**home, "MCP_ELICIT_STORE": f"sqlite:///{tmp_path / 'env.db'}"}, tmp_path / "env.db"),
        (
            ("--store", f"sqlite:///{tmp_path / 'flag.db'}"),
            {**home, "MCP_ELICIT_STORE": "nonsense://"},
            tmp_path / "flag.db",
        ),
    ]
    for i, (args, env, expected) in enumerate(cases):
        instance = serve(tmp_path, f"serve-{i}", args, env)
        try:
            instance.restart()
            await start_flow(instance)
        finally:
            instance.stop()
        assert databases(tmp_path) == [expected], (args, env, instance.stderr())
        expected.unlink()


def test_a_bad_store_or_public_url_stops_serve_with_usage_exit_code(tmp_path: Path) -> None:
    """The store's password never shows; a SQLite URL never has one (nothing is created)."""
    for args, says in [
        (("--store", "postgres://db/x"), "--store: store URL 'postgres://db/x': expected memory://"),
        (
            ("--store", "sqlite://ann:s3cret@db/state.db"),
            "--store: store URL 'sqlite://ann:***@db/state.db': a SQLite URL",
        ),
        (("--public-url", "mcp.example.com"), "--public-url: the public URL must look like http(s)://"),
    ]:
        done = subprocess.run(
            [*cli(), "serve", str(APP), "--http", f"127.0.0.1:{free_port()}", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert says in done.stderr and "s3cret" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bad_route_or_one_without_http_stops_serve_with_usage_exit_code() -> None:
    http = ("--http", f"127.0.0.1:{free_port()}")
    for args, says in [
        ((*http, "--route", "a.b"), "--route: route must be 1 to 32 letters, digits, '-' or '_'"),
        (("--route", "a"), "--route names this instance in its HTTP session ids: it needs --http"),
    ]:
        done = subprocess.run(
            [*cli(), "serve", str(APP), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert says in done.stderr


async def test_page_links_start_with_the_public_url(tmp_path: Path) -> None:
    given = serve(tmp_path, "given", ("--store", "memory://", "--public-url", "https://mcp.example.com/"))
    learned = serve(tmp_path, "learned", ("--store", "memory://", "--allow-host", "mcp.example.com"))
    try:
        given.restart()
        assert (await start_flow(given)).startswith("https://mcp.example.com/mcp-elicit/flows/")
        learned.restart()
        link = await start_flow(learned, host=f"localhost:{learned.port}")
        assert link.startswith(f"http://localhost:{learned.port}/mcp-elicit/flows/"), "the request's Host"
    finally:
        given.stop()
        learned.stop()


async def test_a_proxy_on_this_host_names_the_scheme_and_the_browser(tmp_path: Path) -> None:
    """Behind a proxy on the same host, serve reads its X-Forwarded-Proto and X-Forwarded-For
    (uvicorn's proxy headers, trusted from 127.0.0.1 unless FORWARDED_ALLOW_IPS names the
    proxies): a link made from the request's Host is https when the proxy ends TLS, and a
    browser the proxy names as another machine gets 403 for a page of a server without
    page_auth, as if it had come directly; without the header, every browser is loopback."""
    args = ("--store", "memory://", "--allow-host", "mcp.example.com")
    trusted = serve(tmp_path, "trusted", args)
    other = serve(tmp_path, "other", args, {"FORWARDED_ALLOW_IPS": "10.9.9.9"})
    try:
        trusted.restart()
        other.restart()
        https = await start_flow(trusted, "mcp.example.com", x_forwarded_proto="https")
        plain = await start_flow(other, "mcp.example.com", x_forwarded_proto="https")
        async with httpx.AsyncClient(timeout=20, headers={"host": "mcp.example.com"}) as browser:
            here = https.replace("https://mcp.example.com", f"http://127.0.0.1:{trusted.port}")
            away = await browser.get(here, headers={"x-forwarded-for": "203.0.113.5"})
            near = await browser.get(here)
    finally:
        trusted.stop()
        other.stop()
    assert https.startswith("https://mcp.example.com/mcp-elicit/flows/"), https
    assert plain.startswith("http://mcp.example.com/mcp-elicit/flows/"), "a proxy not trusted"
    assert away.status_code == 403 and "machine running the server" in away.text, away.text
    assert near.status_code == 303, "the refusal used nothing up"


async def test_the_debug_access_log_keeps_query_strings_out(tmp_path: Path) -> None:
    """With --log-level debug uvicorn logs every request; a page link's one-time token and a
    sign-in callback's code and state travel in the query, so the log shows the path only."""
    instance = serve(tmp_path, "debug", ("--store", "memory://", "--log-level", "debug"))
    try:
        instance.restart()
        async with httpx.AsyncClient(timeout=20) as http:
            await http.get(f"http://127.0.0.1:{instance.port}/mcp-elicit/flows/nosuch/start?t=SECRET-TOKEN-1")
            await http.get(
                f"http://127.0.0.1:{instance.port}/mcp-elicit/oauth/callback?code=CODE-2&state=S-3"
            )
    finally:
        instance.stop()
    log = instance.log.read_text(encoding="utf-8")
    assert "/mcp-elicit/flows/nosuch/start?…" in log, log[-2000:]
    assert "/mcp-elicit/oauth/callback?…" in log
    for secret in ("SECRET-TOKEN-1", "CODE-2", "S-3"):
        assert secret not in log


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


def serve_everywhere_on_ipv6(tmp: Path, port: int) -> subprocess.Popen[bytes]:
    """``serve --http [::]:PORT``, once it listens."""
    log = tmp / "v6.stderr"
    with log.open("wb") as err:
        command = [*cli(), "serve", str(APP), "--http", f"[::]:{port}", "--store", "memory://"]
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=err, cwd=ROOT)
    if not wait_listening(proc, port, host="::1"):
        raise RuntimeError(f"the server exited with {proc.returncode}:\n{log.read_text()}")
    return proc


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
async def test_page_links_of_a_server_on_every_ipv6_address_reach_it(tmp_path: Path) -> None:
    # --http [::]:PORT listens on IPv6 alone (as uvicorn binds it): its links, made from the
    # bound address, name [::1], which reaches it (127.0.0.1 would be refused)
    port = free_port()
    proc = serve_everywhere_on_ipv6(tmp_path, port)
    try:
        link = await start_flow(f"http://[::1]:{port}/mcp")
        assert link.startswith(f"http://[::1]:{port}/mcp-elicit/flows/"), link
        async with httpx.AsyncClient(timeout=20) as browser:
            page = await browser.get(link)
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, STOP_TIMEOUT)
    assert page.status_code == 303, page.text  # the page, reached from this machine
