"""A ``uri`` typed beyond ASCII is told how browsers send it, and never told an address
that names something else than what was typed or what a browser would reach."""

from __future__ import annotations

import pytest

from mcp_elicit.forms.formats import FORMAT_MESSAGES, format_message


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("https://例え.jp/", "https://xn--r8jz45g.jp/"),
        ("https://пример.рф/путь", "https://xn--e1afmkfd.xn--p1ai/%D0%BF%D1%83%D1%82%D1%8C"),
        ("https://例え.jp:8080/", "https://xn--r8jz45g.jp:8080/"),
        ("https://user@例え.jp/", "https://user@xn--r8jz45g.jp/"),
        ("https://Ü.example/", "https://xn--tda.example/"),  # lower case, as browsers write it
        ("https://e\u0301xample.com/", "https://xn--xample-9ua.com/"),  # NFC, as browsers
        ("https://例え。jp/", "https://xn--r8jz45g.jp/"),  # an ideographic full stop is a dot
        ("https://שלום.com/", "https://xn--9dbne9b.com/"),
        ("https://例えカタカナ.jp/", "https://xn--r8j2ka3fqc7460a.jp/"),  # one writing system
        ("https://[::1]/ü", "https://[::1]/%C3%BC"),
        ("mailto:jö@example.com", "mailto:j%C3%B6@example.com"),
    ],
)
def test_an_address_typed_beyond_ascii_is_told_how_browsers_send_it(text: str, sent: str) -> None:
    assert format_message("uri", text).endswith(f"; write it as {sent}, as browsers send it")


@pytest.mark.parametrize(
    "text",
    [
        # A look-alike of the address's own structure, which a mapping would make real: a
        # full-width "@" (U+FF20) is no user "a" at b.com, a full-width "/" no path, a
        # full-width ":" no port.
        "https://a\uff20b.com/",
        "https://a\uff0fb.com/",
        "https://a\uff1a80/",
        "https://good.example\u2044evil.example/",
        # A user name beyond ASCII: where a look-alike slash hides the real host.
        "https://example.com\uff0f@evil.example/",
        "https://例え.jp@evil.example/",
        # Mixed scripts in one label: a Cyrillic a (U+0430) in "paypal", an Arabic digit.
        "https://p\u0430ypal.com/",
        "https://a\u0661b.com/",
        # Names IDNA 2003 maps otherwise than browsers (UTS 46), or to an ASCII look-alike.
        "https://fa\u00df.de/",
        "https://\u03c3\u03bf\u03c6\u03bf\u03c2.gr/",
        "https://\uff21\uff22\uff23.com/",
        "https://\u212aelvin.com/",
        "https://\ufb01le.com/",
        "https://\u2168.com/",
        "https://a\U000e0100b.com/",  # a variation selector IDNA 2003 keeps, browsers drop
        # Invisible letters and marks, anywhere.
        "https://a\u034fb.com/",
        "https://a\ufe0fb.com/",
        "https://a\u3164b.com/",
        "https://example.com/\u3164",
        # What browsers refuse: a label starting with a mark, the bidi rule broken, an
        # xn-- label, one too long once in punycode, an empty label.
        "https://\u0301a.com/",
        "https://1.שלום/",
        "https://xn--\u00fc.com/",
        "https://xn--p1ai.ü/",
        "https://" + "\u00fc" * 70 + ".com/",
        "https://\u00fc..com/",
        # A scheme whose host browsers do not write in punycode.
        "foo://\u00fc.example/x",
        "https://\u00fc.example:\uff18\uff10/",
    ],
)
def test_no_address_is_suggested_that_could_name_another(text: str) -> None:
    message = format_message("uri", text)
    assert "write it" not in message
    assert message.endswith(f"; it {FORMAT_MESSAGES['uri']}")
