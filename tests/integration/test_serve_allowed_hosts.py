"""``serve --allow-host`` behind a proxy, on real processes: a value that could never match a
``Host`` (a URL, a path, a wildcard, a list in one) stops the start-up (exit 2) saying what
to give instead; a request refused for its Host (a proxy that does not pass the Host clients
used: nginx sends its upstream's name unless told ``proxy_set_header Host $http_host``) is
said in the server's log once per name, with the option that allows it, not only to the
client."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from integration.instances import APP, Instance

from support.procs import free_port, refused_at_start

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("https://mcp.example.com", "give the host name alone, 'mcp.example.com'"),
        ("mcp.example.com/", "without a path"),
        ("*.example.com", "wildcard"),
        ("mcp.example.com,api.example.com", "one name per entry"),
    ],
)
def test_an_allow_host_that_could_never_match_stops_the_start(value: str, says: str) -> None:
    argv = ["serve", str(APP), "--http", f"127.0.0.1:{free_port()}", "--store", "memory://"]
    done = refused_at_start([*argv, "--allow-host", value], f"--allow-host {value!r}")
    assert "--allow-host" in done.stderr and says in done.stderr, done.stderr


async def test_a_refused_host_is_logged_once_with_the_option_that_allows_it(tmp_path: Path) -> None:
    instance = Instance.start(
        APP,
        free_port(),
        tmp_path / "hosts.stderr",
        ("--store", "memory://", "--allow-host", "mcp.example.com"),
    )
    try:
        async with httpx.AsyncClient(timeout=20) as http:
            statuses = []
            for host in ("mcp", "mcp", "mcp.example.com", "mcp:8000"):
                response = await http.post(instance.url, headers={"host": host}, json={})
                statuses.append(response.status_code)
    finally:
        instance.stop()
    assert statuses[0] == statuses[1] == statuses[3] == 421, statuses
    assert statuses[2] != 421, "the allowed name is served"
    log = instance.stderr()
    warned = [line for line in log.splitlines() if "WARNING" in line and "'mcp'" in line]
    assert len(warned) == 1, log  # once per name, its ports alike
    assert "--allow-host mcp" in warned[0] and "421" in warned[0], warned
