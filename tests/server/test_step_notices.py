"""The sealed notice of a completed URL step (``server.step_notices``): it opens only with
the server's keys, for this use, within its 60 s; a ``requestState`` or a relayed task
command never opens as one, nor a notice as either."""

from __future__ import annotations

import orjson
import pytest

from mcp_elicit.core.mrtr import binding_for
from mcp_elicit.errors import InvalidRequestState
from mcp_elicit.sealing import Binding, KeyRing, StateSealer
from mcp_elicit.server import step_notices

KEYS = KeyRing([bytes(range(32))])
SEALER = StateSealer(KEYS, server_id="steps")
NOW = 1_000_000.0


def test_a_notice_opens_within_its_time_with_the_same_keys_only() -> None:
    sealed = step_notices.seal(SEALER, "github", "alice", now=NOW)
    assert step_notices.open_notice(SEALER, sealed, now=NOW + 59.0) == ("github", "alice")
    assert step_notices.open_notice(SEALER, step_notices.seal(SEALER, "e", None, now=NOW), now=NOW) == (
        "e",
        None,
    )
    assert step_notices.open_notice(SEALER, sealed, now=NOW + step_notices.TTL) is None  # late
    other_server = StateSealer(KEYS, server_id="other")
    other_keys = StateSealer(KeyRing([bytes(range(1, 33))]), server_id="steps")
    for sealer in (other_server, other_keys):
        assert step_notices.open_notice(sealer, sealed, now=NOW) is None
    for junk in (None, 7, "", "v2.", sealed[:-4] + "AAAA", sealed + "A"):
        assert step_notices.open_notice(SEALER, junk, now=NOW) is None


def test_a_notice_and_other_sealed_values_never_open_as_each_other() -> None:
    request = binding_for("tools/call", {"name": "connect", "arguments": {}}, None)
    state = SEALER.seal(orjson.dumps(["github", None]), request, now=NOW)  # shaped as a notice
    command = SEALER.seal(orjson.dumps(["github", None]), Binding("relay/tasks/cancel", "", b""), now=NOW)
    for token in (state, command):
        assert step_notices.open_notice(SEALER, token, now=NOW) is None
    notice = step_notices.seal(SEALER, "github", None, now=NOW)
    for binding in (request, Binding("relay/tasks/cancel", "", b""), Binding("relay/mirror", "", b"")):
        with pytest.raises(InvalidRequestState):
            SEALER.open(notice, binding, now=NOW)
