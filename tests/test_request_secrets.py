"""``command_redaction.url_secrets`` and ``header_secrets``: what an HTTP request carries
that a message repeating it should not show."""

from __future__ import annotations

import base64

from mcp_elicit.command_redaction import header_secrets, redact_secrets, url_secrets


def test_a_urls_query_user_name_password_and_basic_credential_are_its_secrets() -> None:
    found = url_secrets("http://me:p%40ss-word@127.0.0.1:8000/mcp?key=k%2Bv+1&empty=")
    assert "key=k%2Bv+1&empty=" in found  # the query whole, as sent
    assert "key=k+v 1&empty=" in found  # and decoded
    assert "k+v 1" in found  # each value, decoded
    assert {"me", "p%40ss-word", "p@ss-word"} <= set(found)
    assert base64.b64encode(b"me:p@ss-word").decode() in found  # what httpx sends for them
    assert "" not in found


def test_a_url_without_secrets_or_unreadable_gives_none() -> None:
    assert url_secrets("http://127.0.0.1:8000/mcp") == []
    assert url_secrets("http://[::1/mcp") == []  # an unclosed "[": nothing to read
    assert url_secrets("") == []


def test_header_secrets_keep_the_credential_after_a_scheme_and_skip_plain_headers() -> None:
    sent = [
        ("Authorization", "Bearer sk-1234567"),
        ("Accept", "application/json"),
        ("MCP-Method", "tools/call"),
    ]
    assert header_secrets(sent) == ["Bearer sk-1234567", "sk-1234567"]


def test_a_message_repeating_them_shows_them_redacted() -> None:
    url = "http://me:pw-0123456789@h/mcp?key=abcde"
    said = "asked /mcp?key=abcde as me (pw-0123456789), abcdef kept"
    assert redact_secrets(said, url_secrets(url)) == "asked /mcp?REDACTED as me (REDACTED), abcdef kept"
