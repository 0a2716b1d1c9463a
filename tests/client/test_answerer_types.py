"""The ``Answerer`` protocol says what the docs say an answerer needs, so mypy takes an
answerer written as documented: ``modes`` and ``elicit``, ``url_done`` optional (an
answerer without it is taken as done at once). The protocol required ``url_done``, so
mypy refused a form-only answerer that left it out, as ``check_answerer`` allows."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mypy import api

from support.procs import ROOT

PROGRAM = textwrap.dedent(
    """
    from __future__ import annotations

    from mcp_elicit.client import Client, ElicitAnswer, ElicitationRequest
    from mcp_elicit.transports.stdio_client import StdioTransport


    class FormOnly:
        modes = frozenset({"form"})

        async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
            return ElicitAnswer.accept(name="Ada")


    client = Client(StdioTransport(["server"]), answerer=FormOnly())
    """
)


def test_an_answerer_without_url_done_type_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYPYPATH", str(ROOT))  # this checkout's package, not an installed one
    program = tmp_path / "answerer_use.py"
    program.write_text(PROGRAM, encoding="utf-8")
    out, err, status = api.run(["--strict", "--no-incremental", "--follow-imports=silent", str(program)])
    assert status == 0, out + err
