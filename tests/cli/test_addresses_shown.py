"""An address the CLI prints (the OAuth issuer a sign-in went through) shows every joiner
by its code: a host with a ZWNJ and the one without read alike, where Persian words in a
server's message keep theirs."""

from __future__ import annotations

from mcp_elicit.cli.output import sign_in_text
from mcp_elicit.ui.form_text import clean

PERSIAN = "\u0645\u06cc\u200c\u062e"  # a ZWNJ Persian spelling needs


def test_a_joiner_in_the_issuer_is_shown_by_its_code() -> None:
    said = sign_in_text({"issuer": f"https://{PERSIAN}.example", "signed_in_now": True})
    assert "\u200c" not in said
    assert "<U+200C>" in said


def test_the_same_word_in_a_message_keeps_its_joiner() -> None:
    assert clean(PERSIAN) == PERSIAN


def test_a_joiner_in_a_url_steps_address_is_shown_by_its_code() -> None:
    from mcp_elicit.cli.recorded import url_lines

    lines = url_lines(f"https://bank.example/{PERSIAN}", "stdio:x")
    assert "\u200c" not in lines[0], lines
    assert "<U+200C>" in lines[0], lines
    long = url_lines(f"https://bank.example/{'x' * 300}/{PERSIAN}/{'y' * 300}", "stdio:x")
    assert "\u200c" not in " ".join(long), long


def test_a_joiner_in_the_waiting_line_and_the_pages_address_is_shown_by_its_code() -> None:
    from mcp_elicit.core.client_inputs import ElicitationRequest, Origin, ServerInfo
    from mcp_elicit.ui.page_wait import waiting_line
    from mcp_elicit.ui.web_pages import page

    where = f"https://{PERSIAN}.example/mcp"
    request = ElicitationRequest(
        server=ServerInfo(name="s", where=where),
        key="q",
        origin=Origin("tools/call", "sign_in"),
        mode="url",
        message="Sign in",
        url=f"https://{PERSIAN}.example/sign-in",
    )
    assert "\u200c" not in waiting_line(request)
    assert "\u200c" not in page([request], csrf="x")
