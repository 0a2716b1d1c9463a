"""Server text bounded (``fit``): what would fit is never hidden by the spaces before it, and a
cut falls between whole shown units, never inside the code written for a character."""

from __future__ import annotations

import re

import pytest

from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.core.quoting import shown_text
from mcp_elicit.ui.columns import cells, wrapped
from mcp_elicit.ui.form_text import clean, fit, url_shown
from mcp_elicit.ui.server_text import fit_quoted, for_encoding

#: Where the server answering is, for URLs judged here.
SERVER = "http://127.0.0.1:8000/mcp"


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


#: Text whose joiners are part of its spelling (Unicode's UAX #31 and emoji spec, UTS #51).
JOINED = [
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian "I want": a ZWNJ between two joining letters
    "\u0646\u0627\u0645\u0647\u200c\u0647\u0627",  # Persian "letters"
    "\u0915\u094d\u200d\u0937",  # Devanagari: a half form, a ZWJ after the virama
    "\u0915\u094d\u200c\u0937",  # and the virama shown, a ZWNJ after it
    "\u0d28\u0d4d\u200d",  # Malayalam: a chillu written as letter, virama, ZWJ
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # family: man, woman, girl
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag: a variation selector before the ZWJ
    "\U0001f9d1\U0001f3fd\u200d\U0001f4bb",  # technologist with a skin tone
    "\U0001f3c3\u200d\u2642\ufe0f",  # man running: an emoji of the BMP after the ZWJ
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # Scotland's flag
    # UTS #51's RGI ZWJ sequences, of every kind of part:
    "\U0001f9d1\U0001f3fb\u200d\u2764\ufe0f\u200d\U0001f48b\u200d\U0001f9d1\U0001f3fc",  # kiss, two tones
    "\U0001f469\U0001f3fd\u200d\u2764\ufe0f\u200d\U0001f468\U0001f3ff",  # couple with heart, tones
    "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # woman technologist, medium skin tone
    "\U0001f9d1\U0001f3fb\u200d\U0001f91d\u200d\U0001f9d1\U0001f3ff",  # people holding hands, tones
    "\u2764\ufe0f\u200d\U0001f525",  # heart on fire: a BMP emoji first
    "\U0001f43b\u200d\u2744\ufe0f",  # polar bear
    "\U0001f3f3\ufe0f\u200d\u26a7\ufe0f",  # transgender flag
    "\U0001f441\ufe0f\u200d\U0001f5e8\ufe0f",  # eye in speech bubble
    "\U0001f642\u200d\u2194\ufe0f",  # head shaking horizontally: an arrow (Sm) after the ZWJ
    "\U0001f642\u200d\u2195\ufe0f",  # head shaking vertically
    "\U0001f3c3\U0001f3fd\u200d\u27a1\ufe0f",  # person running facing right
    "\U0001f426\u200d\u2b1b",  # black bird
    # Joiners in Arabic script and in Brahmic scripts, after a virama:
    "\u0646\u06c1\u06cc\u06ba\u200c\u06c1\u06d2",  # Urdu
    "\u0647\u200c\u0686",  # Sorani Kurdish, a heh kept from joining
    "\u0995\u09cd\u200d\u09b7",  # Bengali
    "\u0dc1\u0dca\u200d\u0dbb\u0dd3",  # Sinhala "sri": a ZWJ after the al-lakuna
    "\u0b95\u0bcd\u200c\u0bb7",  # Tamil
]


@pytest.mark.parametrize("text", JOINED)
def test_joiners_a_script_or_an_emoji_needs_are_left_as_they_are(text: str) -> None:
    # Each was shown with "<U+200C>", "<U+200D>", "<U+E0067>" in it: misspelt, or emoji in pieces.
    assert clean(text) == text
    assert fit(f"{text} ok", 40) == f"{text} ok"
    assert clean(text, joiners=False) != text  # in a URL, every one is shown by its code


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("y\u200des", "y<U+200D>es"),  # between Latin letters: a "yes" that is not "yes"
        ("ye\u200cs", "ye<U+200C>s"),
        ("\u200cyes\u200d", "<U+200C>yes<U+200D>"),
        ("\u0645\u200c", "\u0645<U+200C>"),  # a ZWNJ after a joining letter, nothing after it
        ("\u0627\u200c\u0628", "\u0627<U+200C>\u0628"),  # alef joins nothing after it
        ("\u0645\u200d\u0645", "\u0645<U+200D>\u0645"),  # a ZWJ is not asked for between letters
        ("\U0001f468\u200dx", "\U0001f468<U+200D>x"),  # an emoji, then a letter
        ("yes\U000e0079\U000e0065\U000e0073", "yes<U+E0079><U+E0065><U+E0073>"),  # tags not on a flag
        ("\U0001f3f4\U000e0067\U000e0062", "\U0001f3f4<U+E0067><U+E0062>"),  # no CANCEL TAG to end them
        (
            "\U0001f3f3\U000e0067\U000e0062\U000e0073\U000e007f",
            "\U0001f3f3<U+E0067><U+E0062><U+E0073><U+E007F>",
        ),
        (  # words spelt in tags behind a flag: no subdivision has such a name
            "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "ignore all") + "\U000e007f",
            "\U0001f3f4" + "".join(f"<U+{0xE0000 + ord(c):04X}>" for c in "ignore all") + "<U+E007F>",
        ),
    ],
)
def test_joiners_and_tags_anywhere_else_are_shown_by_their_codes(text: str, shown: str) -> None:
    assert clean(text) == shown


def test_a_joiner_in_a_url_is_shown_by_its_code() -> None:
    # A Persian host with its ZWNJ is refused (``url_consent``), and shown as sent: the ZWNJ
    # would make it read as another name, the one without it.
    verdict = judge_url("https://\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.example/", server=SERVER)
    parts, _ = url_shown(verdict)
    assert "<U+200C>" in "".join(text for _, text in parts)


def _tags(code: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f"


@pytest.mark.parametrize(
    "text",
    [
        "\u24e8\u200d\u24d4\u24e2",  # circled letters: "ⓨ‍ⓔⓢ" read as "ⓨⓔⓢ"
        "\U0001f130\u200d\U0001f131",  # squared letters
        "\U0001f1fa\u200d\U0001f1f8",  # regional indicators: a ZWJ is no flag
        "\u249c\u200d\u249d",  # parenthesized letters
        "\U0001d432\u200d\U0001d41e\U0001d42c",  # mathematical bold "yes"
        "\u2500\u200d\u2502",  # box drawing
    ],
)
def test_a_joiner_between_symbols_that_are_no_emoji_is_shown_by_its_code(text: str) -> None:
    # Kept, "ⓨ‍ⓔⓢ" and "ⓨⓔⓢ" were two choices that read alike.
    assert "<U+200D>" in clean(text)


@pytest.mark.parametrize("code", ["yes", "usca", "gbxyz", "zz1", "frbre"])
def test_tags_behind_a_black_flag_that_no_flag_has_are_shown_by_their_codes(code: str) -> None:
    # Kept, each drew a black flag alone: a word or another region's code hidden behind it,
    # and two choices with two codes reading alike.
    assert (
        clean("\U0001f3f4" + _tags(code))
        == "\U0001f3f4" + "".join(f"<U+{0xE0000 + ord(c):04X}>" for c in code) + "<U+E007F>"
    )


@pytest.mark.parametrize("code", ["gbeng", "gbsct", "gbwls"])
def test_the_flags_of_england_scotland_and_wales_are_kept(code: str) -> None:
    assert clean("\U0001f3f4" + _tags(code)) == "\U0001f3f4" + _tags(code)


@pytest.mark.parametrize(
    ("text", "shown"),
    [  # letters of two scripts do not join: a ZWNJ between them changes nothing drawn
        ("\u0628\u200c\u0712", "\u0628<U+200C>\u0712"),  # Arabic, Syriac
        ("\u0628\u064b\u200c\u07ca", "\u0628\u064b<U+200C>\u07ca"),  # Arabic with a mark, N'Ko
        ("\u1820\u200c\u0628", "\u1820<U+200C>\u0628"),  # Mongolian, Arabic
        # a virama put on a letter of another script: the ZWJ after it forms nothing
        ("y\u094d\u200des", "y\u094d<U+200D>es"),
        ("\u0d28\u094d\u200c", "\u0d28\u094d<U+200C>"),  # Malayalam letter, Devanagari virama
    ],
)
def test_a_joiner_between_letters_of_two_scripts_is_shown_by_its_code(text: str, shown: str) -> None:
    # Kept, "ب‌ܒ" and "بܒ" were two choices that read alike.
    assert clean(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "\u09b0\u200d\u09cd\u09af\u09be\u09aa",  # Bengali "rap": ra, ZWJ, virama, ya (ya-phala, no reph)
        "\u0d9a\u200d\u0dca\u0dc0",  # Sinhala touching letters: ka, ZWJ, al-lakuna, va
    ],
)
def test_a_zwj_before_a_virama_where_the_script_draws_it_is_kept(text: str) -> None:
    # Each was shown with "<U+200D>" in it: Unicode's Bengali and Sinhala spell these so.
    assert clean(text) == text
    assert clean(text, joiners=False) != text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("y\u200d\u09cd\u09af", "y<U+200D>\u09cd\u09af"),  # a Latin letter before the virama
        ("\u0915\u200d\u094d\u0937", "\u0915<U+200D>\u094d\u0937"),  # Devanagari gives it no form
    ],
)
def test_a_zwj_before_a_virama_elsewhere_is_shown_by_its_code(text: str, shown: str) -> None:
    assert clean(text) == shown


@pytest.mark.parametrize(
    ("text", "encoding", "shown"),
    [
        ("Enter: send · d: decline", "ascii", "Enter: send | d: decline"),
        ("Hôte 🎉 — cut…", "ascii", "H\\xf4te \\U0001f389 - cut..."),
        ("→ accept ← sent", "ascii", "-> accept <- sent"),  # the CLI's rounds and trace
        ("Hôte · 🎉", "utf-8", "Hôte · 🎉"),  # shown as it is wherever it can be
        ("Hôte ·", "latin-1", "Hôte ·"),  # both in latin-1
        ("Hôte ·", None, "Hôte ·"),  # an output of no known encoding
        ("Hôte ·", "no-such-encoding", "Hôte ·"),
    ],
)
def test_text_is_shown_in_what_the_terminals_encoding_can_show(
    text: str, encoding: str | None, shown: str
) -> None:
    assert for_encoding(text, encoding) == shown


def test_a_cut_in_columns_counts_the_columns_each_letter_takes() -> None:
    # check's table cut a Chinese description to its width in characters: twice as wide
    wide = "天气预报工具"
    assert fit(wide, 7) == wide  # six characters
    assert fit(wide, 7, measure=cells) == "天气预…"  # twelve columns: three letters and "…"
    assert fit(wide, 7, length=True, measure=cells) == "天气预… (6 characters)"
    marked = "e\u0301" * 10  # ten columns, twenty characters: a mark takes none
    assert fit(marked, 10, measure=cells) == marked
    assert fit(marked, 10) == "e\u0301" * 4 + "…"  # cut between a letter and its marks, never inside
    assert fit("party 🎉🎉🎉", 10, measure=cells) == "party 🎉…"
    assert fit("plain ascii text", 10, measure=cells) == fit("plain ascii text", 10) == "plain asc…"


@pytest.mark.parametrize("char", ["\x1b", "\u200e", "\U000e0001"])
def test_a_text_quoted_inert_before_is_cut_between_whole_codes(char: str) -> None:
    """A transport's quote of a body writes each character a terminal could act on as its
    code already; cut at any width, it ends with a whole code, never "\\u20…"."""
    quote = shown_text("ok " + char * 50)
    code = shown_text(char)
    for width in range(5, 60):
        short = fit_quoted(quote, width)
        assert short.endswith("…") and len(short) <= width, (width, short)
        head = short[:-1].removeprefix("ok").strip()
        assert head == code * (len(head) // len(code)), (width, short)
    assert fit_quoted(quote, len(quote)) == quote
    assert fit_quoted("a\\x1b" * 2, 6) == "a\\x1b…"


@pytest.mark.parametrize("text", ["天气" + "\u202e" * 6 + "预报", "\x1b" * 12, "a\u5929" * 8])
@pytest.mark.parametrize("encoding", [None, "ascii"])
def test_a_word_too_wide_for_a_row_is_folded_between_whole_codes(text: str, encoding: str | None) -> None:
    """A word wider than a row is folded inside it, but never inside a character's code,
    as ``clean`` writes it (``<U+202E>``, ``\\x1b``) or a terminal showing only ASCII gets
    it (``\\u5929``): "\\u59" and "29" would read as other text."""
    shown = for_encoding(clean(text), encoding)
    codes = re.compile(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|<U\+[0-9A-F]{4}>")
    for width in range(12, 30):
        rows = wrapped(shown, width)
        assert "".join(rows) == shown and all(cells(row) <= width for row in rows), (width, rows)
        assert [code for row in rows for code in codes.findall(row)] == codes.findall(shown), (width, rows)


def test_a_quote_that_showing_makes_longer_is_cut_between_whole_codes_too() -> None:
    """A Hangul filler is printable (a transport's quote keeps it) but shown by its code
    (``<U+3164>``): a quote no longer than the width grew past it when shown, and was cut
    inside the code of a direction mark after it ("\\…")."""
    quote = shown_text("\u3164" * 10 + "\u200e" * 20)
    for width in range(len(quote) - 30, len(quote) + 1):
        short = fit_quoted(quote, width)
        assert short.endswith("…") and len(short) <= width, (width, short)
        assert short[:-1].replace("<U+3164>", "").replace("\\u200e", "") == "", (width, short)
