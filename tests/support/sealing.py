"""What the tests of mcp_elicit.sealing share: the clock, secrets, server, binding, key ring and
sealer they seal with, a token sealed by them, and reading why a token was refused."""

from __future__ import annotations

import pytest

from mcp_elicit.errors import InvalidRequestState
from mcp_elicit.sealing import Binding, KeyRing, StateSealer

NOW = 1_000_000.0
SECRET_A = bytes(range(32))
SECRET_B = bytes(range(100, 164))
SERVER = "https://golden.example/mcp"
BINDING = Binding.for_request("tools/call", "book_flight", {"from": "CDG", "to": "SFO"}, "alice")
RING_A = KeyRing([SECRET_A])
SEALER = StateSealer(RING_A, server_id=SERVER)
HEAD = 12  # "v2." + 8-char kid + "."


def reason(
    token: object, binding: Binding = BINDING, *, sealer: StateSealer = SEALER, now: float = NOW
) -> str:
    """The private reason ``sealer`` refuses ``token``; fails the test if it opens."""
    with pytest.raises(InvalidRequestState) as info:
        sealer.open(token, binding, now=now)
    err = info.value
    assert err.message == InvalidRequestState.WIRE_MESSAGE
    assert err.to_error() == {"code": -32602, "message": InvalidRequestState.WIRE_MESSAGE}  # no reason
    return err.reason


TOKEN = SEALER.seal(b"payload!!", BINDING, now=NOW)  # 36 + 9 bytes: no padding
