from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from support.redis import redis_url
from support.wire import WireChecker

__all__ = ["redis_url"]  # a fixture: one redis-server for the whole session


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite the golden wire transcripts (tests/golden) from this run",
    )


@pytest.fixture(scope="session", autouse=True)
def own_data_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Where the default store, its key file and the CLI's tokens go (``$XDG_DATA_HOME``,
    ``$XDG_STATE_HOME``; ``%LOCALAPPDATA%`` on Windows): the session's own directories,
    inherited by every server the tests start, so no test writes into the home directory
    or reads what a server run there left (a ``state.keys`` there changes the start-up
    log). macOS keeps them under ``~/Library``, which no variable moves."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "LOCALAPPDATA"):
            patch.setenv(name, str(tmp_path_factory.mktemp(name.lower())))
        yield


@pytest.fixture(autouse=True)
def own_recursion_limit() -> Iterator[None]:
    """The recursion limit each test found, put back after it: a test that runs mypy in
    process leaves it at 16384 (mypy raises it and never lowers it), and what a later test
    in the same worker sees then depends on which tests ran there before."""
    limit = sys.getrecursionlimit()
    yield
    if sys.getrecursionlimit() != limit:
        sys.setrecursionlimit(limit)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def wire() -> WireChecker:
    """Checks messages against the official 2026-07-28 schema (skips when it is absent)."""
    return WireChecker.load("2026-07-28")


@pytest.fixture
def wire_2025() -> WireChecker:
    """Checks messages against the official 2025-11-25 schema (skips when it is absent)."""
    return WireChecker.load("2025-11-25")
