"""``connect_stdio``, ``connect_http`` and ``connect_memory`` pass ``Client``'s keyword
arguments on, and say so to a type checker: a misspelt option or a value of the wrong type
is mypy's error where it is written. They took ``**options: Any``, so ``timout=5``
type-checked and failed only when run (``TypeError`` from ``Client.__init__``)."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest
from mypy import api

from mcp_elicit.client import Client
from mcp_elicit.client.options import ClientOptions

from support.procs import ROOT

PROGRAM = textwrap.dedent(
    """
    from __future__ import annotations

    from mcp_elicit import Server
    from mcp_elicit.client import RoundLimits
    from mcp_elicit.transports.http_client import connect_http
    from mcp_elicit.transports.memory import connect_memory
    from mcp_elicit.transports.stdio_client import connect_stdio


    async def main() -> None:
        async with connect_stdio(["server"], versions=["2026-07-28"], timeout=5, log_level="info") as c:
            await c.list_tools()
        async with connect_http("http://127.0.0.1:8000/mcp", limits=RoundLimits(), progress=True) as h:
            await h.list_tools()
        async with connect_memory(Server("s"), tasks=True) as m:
            await m.list_tools()
        async with connect_stdio(["server"], timout=5) as bad:  # line 18
            await bad.list_tools()
        async with connect_http("http://127.0.0.1:8000/mcp", timeout="5") as worse:  # line 20
            await worse.list_tools()
    """
)


def test_a_misspelt_or_mistyped_option_is_a_type_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYPYPATH", str(ROOT))  # this checkout's package, not an installed one
    program = tmp_path / "connect_use.py"
    program.write_text(PROGRAM, encoding="utf-8")
    out, err, _ = api.run(["--strict", "--no-incremental", "--follow-imports=silent", str(program)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["18", "20"], out + err
    assert '"timout"' in errors[0]


def test_client_options_are_exactly_clients_keyword_arguments_but_the_answerer() -> None:
    """``ClientOptions`` is written out by hand: an option added to ``Client`` and not
    there would be mypy's error at every ``connect_*`` that passes it. Names and types
    are compared as written (``from __future__ import annotations``)."""
    parameters = inspect.signature(Client).parameters
    written = {
        name: p.annotation
        for name, p in parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "answerer"
    }
    typed = {name: getattr(t, "__forward_arg__", t) for name, t in ClientOptions.__annotations__.items()}
    assert typed == written
    assert set(ClientOptions.__optional_keys__) == set(written)


def test_client_options_are_importable_where_client_is() -> None:
    """A helper of one's own that passes options on types them as ``connect_*`` do."""
    import mcp_elicit.client

    assert mcp_elicit.client.ClientOptions is ClientOptions
    assert "ClientOptions" in mcp_elicit.client.__all__
