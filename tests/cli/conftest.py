"""The demo server over Streamable HTTP on 127.0.0.1, shared by the CLI tests of a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cli.helpers import DEMO

from support.procs import HttpProcess, http_process


@pytest.fixture(scope="module")
def http_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpProcess]:
    with http_process(DEMO, log_dir=tmp_path_factory.mktemp("demo-http")) as server:
        yield server
        assert server.alive, server.stderr()
        assert "Traceback" not in server.stderr(), server.stderr()
