"""Fixtures shared by server tests split over several modules: ``client``, a schema-checked
client in memory of the elicitation tests' server (support/elicitation.py)."""

from __future__ import annotations

import pytest

from support.elicitation import build
from support.memory import MemoryClient
from support.wire import WireChecker


@pytest.fixture
def client(wire: WireChecker) -> MemoryClient:
    return MemoryClient(build(), checker=wire)
