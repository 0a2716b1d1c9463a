"""``mcp-elicit check`` behind a proxy that does not answer, with a ``--timeout`` no longer
than the connect timeout (10 s): the time runs out while the request still waits on the
proxy, and the proxy is named as the one not answering, not the server. A tunnel the proxy
opens to a server that then says nothing is the server's silence, as before.

The proxies are real, on 127.0.0.1 (``support.forward_proxy``); the server is silent too.
"""

from __future__ import annotations

import pytest

from mcp_elicit.cli.check import run_check
from mcp_elicit.cli.targets import Target
from mcp_elicit.errors import CliError

from support.forward_proxy import clear_proxy_environment, forward_proxy, mute_proxy

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_proxy_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_proxy_environment(monkeypatch)


@pytest.mark.parametrize("timeout", [1.0, 2.0])
async def test_a_proxy_that_never_answers_the_tunnel_request_is_the_one_named(
    monkeypatch: pytest.MonkeyPatch, timeout: float
) -> None:
    async with mute_proxy(hangs_up=False) as port:
        monkeypatch.setenv("HTTPS_PROXY", f"http://alice:secret@127.0.0.1:{port}/route?key=hunter2")
        with pytest.raises(CliError) as failed:
            await run_check(Target(url="https://mcp.example.com/mcp"), timeout=timeout)
    assert failed.value.exit_code == 3
    message = str(failed.value)
    assert message.startswith(
        f"the proxy http://127.0.0.1:{port} (HTTPS_PROXY) had not answered the request for a tunnel "
        "to mcp.example.com:443 when the time ran out: the server was never reached."
    )
    assert "NO_PROXY" in message and "--timeout" in message
    assert "no answer from" not in message
    assert "secret" not in message and "hunter2" not in message and "route" not in message


async def test_a_server_silent_through_an_open_tunnel_is_the_servers_silence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the proxy answers the tunnel request; the server behind it (a silent one) never does
    async with mute_proxy(hangs_up=False) as server, forward_proxy({"mcp.example.com": "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with pytest.raises(CliError) as failed:
            await run_check(Target(url=f"https://mcp.example.com:{server}/mcp"), timeout=1.0)
    assert failed.value.exit_code == 3
    message = str(failed.value)
    assert "the proxy" not in message
    assert f"mcp.example.com:{server}" in message
    assert proxy.seen == [("CONNECT", f"mcp.example.com:{server}")]
