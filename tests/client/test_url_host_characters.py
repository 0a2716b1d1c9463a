"""URL consent: a host holding characters no registered site name holds (after IDNA:
anything but letters, digits, hyphens, dots and underscores). Browsers keep them in the
host, and a person reads ``evil.com;good.example`` as two names, one of them the site."""

from __future__ import annotations

import pytest

from mcp_elicit.client.url_consent import judge_url

PUNCTUATION = ",;&'()*+=!$~\"`{}"


@pytest.mark.parametrize("ch", list(PUNCTUATION))
def test_a_host_with_punctuation_is_refused_saying_which_character(ch: str) -> None:
    verdict = judge_url(f"https://evil.com{ch}good.example/pay", server="stdio:x")
    assert verdict.refused
    (warning,) = [w for w in verdict.warnings if w.refuses]
    assert warning.code == "malformed"
    assert repr(ch) in warning.text and f"evil.com{ch}good.example" in warning.text
    assert "site" in warning.text


def test_punctuation_written_with_a_percent_escape_is_refused_too() -> None:
    verdict = judge_url("https://evil.com%3Bgood.example/", server="stdio:x")
    assert verdict.refused
    assert "';'" in " ".join(w.text for w in verdict.warnings)


def test_an_underscore_is_read_but_said() -> None:
    """DNS names hold underscores and browsers reach them: the page opens, with a word."""
    verdict = judge_url("https://my_app.example.com/", server="stdio:x")
    assert not verdict.refused
    assert verdict.registrable_domain == "example.com"
    assert [w.code for w in verdict.warnings] == ["underscore"]
    assert "my_app.example.com" in verdict.warnings[0].text


@pytest.mark.parametrize(
    "url", ["https://a-b.example.com/", "https://xn--strae-oqa.de/", "https://straße.de/"]
)
def test_letters_digits_hyphens_and_dots_are_not_said(url: str) -> None:
    verdict = judge_url(url, server="stdio:x")
    assert not verdict.refused
    assert "underscore" not in [w.code for w in verdict.warnings]
