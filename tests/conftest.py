from __future__ import annotations

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
