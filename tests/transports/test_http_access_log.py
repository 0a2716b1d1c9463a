"""uvicorn's access log of a ``StreamableHTTP`` app served by uvicorn itself (as the README
shows), not by ``mcp-elicit serve``: a URL-mode page link's one-time token (``?t=``) and
a sign-in callback's ``code`` and ``state`` travel in the query, and must not reach the
log. Real uvicorn processes on 127.0.0.1, their access log on (uvicorn's default)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.procs import ROOT, _env, _stop, free_port, wait_listening

pytestmark = pytest.mark.anyio

PLAIN = """
from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP

app = Server("plain")
app.configure_url_mode(store="memory://")
mcp = StreamableHTTP(app)
"""

MOUNTED = """
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_elicit import Server
from mcp_elicit.transports.http_server import StreamableHTTP

app = Server("mounted")
app.configure_url_mode(store="memory://")
mcp = Starlette(routes=[Mount("/tools", app=StreamableHTTP(app))])
"""

SECRETS = ("SECRET-TOKEN-1", "SECRET-TOKEN-2", "CODE-3", "STATE-4", "SECRET-TOKEN-5")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.contextmanager
def uvicorn_process(directory: Path, source: str, options: tuple[str, ...]) -> Iterator[int]:
    """``uvicorn appmod:mcp`` (``source``) on a free 127.0.0.1 port, its log in
    ``directory/uvicorn.log``, until the block ends."""
    (directory / "appmod.py").write_text(textwrap.dedent(source), encoding="utf-8")
    port = free_port()
    env = {**_env(), "PYTHONPATH": f"{directory}:{ROOT}"}
    command = [sys.executable, "-m", "uvicorn", "appmod:mcp", "--host", "127.0.0.1", "--port", str(port)]
    with (directory / "uvicorn.log").open("wb") as out:
        proc = subprocess.Popen([*command, *options], stdout=out, stderr=out, cwd=directory, env=env)
    try:
        assert wait_listening(proc, port), (directory / "uvicorn.log").read_text()
        yield port
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    ("source", "prefix", "options"),
    [(PLAIN, "", ()), (MOUNTED, "/tools", ("--lifespan", "off"))],
    ids=["served", "mounted-without-lifespan"],
)
async def test_page_secrets_stay_out_of_uvicorns_access_log(
    tmp_path: Path, source: str, prefix: str, options: tuple[str, ...]
) -> None:
    """Served as is (lifespan on) or mounted in a Starlette app that passes no lifespan
    events: the log names each page path with ``t``, ``code`` and ``state`` hidden, and
    leaves another path's query alone."""
    with uvicorn_process(tmp_path, source, options) as port:
        base = f"http://127.0.0.1:{port}{prefix}"
        async with httpx.AsyncClient(timeout=10) as http:
            await http.get(f"{base}/mcp-elicit/flows/nosuch?t=SECRET-TOKEN-1&lang=en")
            await http.get(f"{base}/mcp-elicit/flows/nosuch/start?t=SECRET-TOKEN-2")
            await http.get(f"{base}/mcp-elicit/oauth/callback?code=CODE-3&state=STATE-4&iss=x")
            await http.get(f"{base}/mcp-elicit/flows/nosuch?%74=SECRET-TOKEN-5")
            await http.get(f"{base}/elsewhere?t=kept")
    text = (tmp_path / "uvicorn.log").read_text(encoding="utf-8", errors="replace")
    assert f"{prefix}/mcp-elicit/flows/nosuch?t=…&lang=en" in text, text[-3000:]
    assert f"{prefix}/mcp-elicit/oauth/callback?code=…&state=…&iss=x" in text
    assert f"{prefix}/elsewhere?t=kept" in text
    for secret in SECRETS:
        assert secret not in text, text[-3000:]
