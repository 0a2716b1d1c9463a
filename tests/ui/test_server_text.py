"""Server text bounded (``fit``): what would fit is never hidden by the spaces before it, and a
cut falls between whole shown units, never inside the code written for a character."""

from __future__ import annotations

import pytest

from mcp_elicit.ui.form_text import clean, fit


@pytest.mark.parametrize("spaces", [" " * 5000, "\n\t " * 2000, "\u3000" * 5000])
def test_spaces_before_text_that_fits_do_not_hide_it(spaces: str) -> None:
    # Only the first 4 x width characters were read: "… (5005 characters)", "hello" lost.
    # On one line, spaces collapse: all there is to show is "hello".
    assert fit(spaces + "hello", 10, length=True) == "hello"
    assert fit(spaces + "hello" + spaces, 10) == "hello"
    assert fit("hi" + spaces + "there" + spaces + "you", 20) == "hi there you"
    text = spaces + "hello, and more words after it"
    assert fit(text, 10, length=True) == f"hello, an… ({len(text)} characters)"


def test_text_that_fits_once_its_spaces_collapse_is_shown_whole() -> None:
    assert fit("  hello   world  ", 11) == "hello world"
    assert fit("a\x1c" + " " * 100 + "b", 10) == "a\\x1c b"  # a separator is shown, not a space


@pytest.mark.parametrize("width", range(3, 40))
def test_a_cut_never_falls_inside_a_code(width: int) -> None:
    # 'ab' and ten "\x1b[2J" cut at 12 ended "\\x…": half of the code for ESC.
    text = "ab" + "\x1b[2J" * 10
    shown = fit(text, width)
    assert shown.endswith("…") and len(shown) <= width
    whole = clean(text)
    assert whole.startswith(shown[:-1])
    rest = whole[len(shown) - 1 :]
    assert rest.startswith(("\\x1b", "[", "2", "J")), (width, shown)
    assert not shown[:-1].endswith(("\\", "\\x", "\\x1")), (width, shown)


def test_the_reported_cuts() -> None:
    assert fit("ab" + "\x1b[2J" * 10, 12) == "ab\\x1b[2J…"
    assert fit(" " * 5000 + "hello", 10, length=True) == "hello"


def test_a_backslash_the_server_wrote_is_cut_as_any_character() -> None:
    assert fit("ab\\x1b" + "c" * 20, 6) == "ab\\x1…"
    assert fit("a<U+202E>" + "c" * 20, 6) == "a<U+2…"


@pytest.mark.parametrize(
    "blank",
    [
        *("\u3164", "\u115f", "\u1160", "\uffa0", "\u034f", "\u17b4", "\ufffe", "\uffff", "\ufdd0"),
        *("\u2065", "\ufff0", "\U000e0080", "\U000e0fff"),  # unassigned, default-ignorable: drawn as nothing
    ],
)
def test_a_letter_that_shows_as_nothing_is_shown_by_its_code(blank: str) -> None:
    # Hangul fillers are letters a font draws blank: two choices "yes" and "yes\u3164"
    # read alike, as "yes" and "yes\u200b" did not. Noncharacters have no glyph at all.
    code = f"<U+{ord(blank):04X}>"
    assert clean(f"yes{blank}") == f"yes{code}"
    assert fit(f"a{blank}b", 20) == f"a{code}b"


@pytest.mark.parametrize(
    "text",
    [
        "مرحبا بالعالم",  # Arabic
        "नमस्ते हिन्दी",  # Hindi
        "สวัสดีครับ",  # Thai
        "한국어 ㅋㅋ",  # Hangul syllables and letters
        "\u1112\u1161\u11ab\u1100\u116e\u11a8",  # the same Hangul as conjoining letters (NFD)
        "\u1100\u1160",  # an old Hangul syllable of a consonant and no vowel: the vowel filler
        "\u115f\u1161",  # and one of a vowel and no consonant: the consonant filler
        "\u05d1\u05b8\u034f\u05b7",  # Biblical Hebrew: the grapheme joiner keeps two points in order
        "❤\ufe0f 👍🏽 1\ufe0f\u20e3",  # emoji with a variation selector, a skin tone, a keycap
    ],
)
def test_a_script_written_as_it_should_be_is_left_as_it_is(text: str) -> None:
    """A filler or the grapheme joiner inside the syllable or the marks it belongs to is
    drawn with them, as Unicode means it to be: only one that stands alone shows nothing."""
    assert clean(text) == text


def test_fillers_that_make_a_syllable_of_nothing_are_shown_by_their_codes() -> None:
    assert clean("yes\u115f\u1160") == "yes<U+115F><U+1160>"
    assert clean("a\u1160b\u034f") == "a<U+1160>b<U+034F>"
