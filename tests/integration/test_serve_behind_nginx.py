"""``serve --http`` behind a real nginx with the README's proxy headers: the proxy names the
browser it saw and the scheme it was reached by, replacing what the browser itself wrote in
``X-Forwarded-For`` and ``X-Forwarded-Proto``. uvicorn believes those headers from a trusted
proxy, and with ``FORWARDED_ALLOW_IPS=*`` it takes the first address of the list as the
browser's: a proxy that appended to the browser's own list
(``$proxy_add_x_forwarded_for``) would let a browser on another machine say it is
127.0.0.1, which the pages of a server without ``page_auth`` serve."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from integration.instances import APP, Instance, Modern

from support.nginx import SKIP_REASON, nginx_available, nginx_balancer
from support.procs import ROOT, free_port

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.skipif(not nginx_available(), reason=SKIP_REASON),
]

HOST = "mcp.example.com"


def readme_forwarded_headers() -> list[str]:
    """The README nginx block's ``proxy_set_header X-Forwarded-...`` lines, as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        line.split("#", 1)[0].strip()
        for line in readme.splitlines()
        if line.strip().startswith("proxy_set_header X-Forwarded-")
    ]
    assert len(lines) == 2, lines
    return lines


async def test_the_readme_proxy_names_the_browser_it_saw_not_the_one_it_claims(tmp_path: Path) -> None:
    """A browser on this machine that claims another machine's address and https is still
    this machine's, over http: its page is served (303) and its link says http."""
    instance = Instance.start(
        APP,
        free_port(),
        tmp_path / "serve.stderr",
        ("--store", "memory://", "--allow-host", HOST),
        {"FORWARDED_ALLOW_IPS": "*"},  # the README's setting when only proxies reach it
    )
    try:
        with nginx_balancer([instance.port], tmp_path / "nginx", headers=readme_forwarded_headers()) as nginx:
            claims = {"host": HOST, "x-forwarded-for": "203.0.113.5", "x-forwarded-proto": "https"}
            async with httpx.AsyncClient(timeout=20, headers=claims) as http:
                first = (await Modern(http, f"{nginx.base}/mcp").call("use_key", {"flow": "opt"}))["result"]
                ((request,),) = [first["inputRequests"].values()]
                link: str = request["params"]["url"]
                page = await http.get(link.replace(f"http://{HOST}", nginx.base))
    finally:
        instance.stop()
    assert link.startswith(f"http://{HOST}/mcp-elicit/flows/"), link
    assert page.status_code == 303, page.text
