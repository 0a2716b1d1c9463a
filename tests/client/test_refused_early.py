"""The one refusal of a server's request (not ``ping``) that comes before the session is
initialized: its text says what came, why (the client settling its revision, when it is),
and that only ``ping`` may come before ``notifications/initialized``; one warning names the
server and the request, inert. Both places that refuse (the handshake session's questions
while ``initialize`` is unanswered, and the client while it settles the revision) use it:
tests/client/test_negotiation_handshake.py checks their answers on the wire against it."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit.client.rev_2025_11_25_questions import refused_early
from mcp_elicit.wire.jsonrpc import Request


def test_the_text_says_what_came_and_what_may_come() -> None:
    asked = Request("q-1", "elicitation/create", {"message": "Who?"})
    assert refused_early("srv", asked) == (
        "Invalid Request: elicitation/create came before the session was initialized; a server "
        "may send only ping until it has notifications/initialized"
    )
    assert refused_early("srv", asked, "the client is settling") == (
        "Invalid Request: elicitation/create came before the session was initialized (the client "
        "is settling); a server may send only ping until it has notifications/initialized"
    )


def test_one_warning_names_the_server_and_the_request_inert(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client"):
        refused_early("the server 'old'", Request("q\r\n1", "sampling/createMessage\x1b[31m", None))
    (record,) = [r for r in caplog.records if r.name == "mcp_elicit.client"]
    said = record.getMessage()
    assert record.levelno == logging.WARNING
    assert said.startswith("the server 'old' sent ") and said.endswith(
        " before the session was initialized; refused"
    ), said
    assert "\x1b" not in said and "\r" not in said, said
