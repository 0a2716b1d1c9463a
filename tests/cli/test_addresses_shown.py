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
