"""Server text made safe to print, and bounded. No terminal library: any text interface can
use it (``form_text`` builds forms as text on it).

Rules:

* Everything a server wrote (messages, titles, descriptions, option titles and
  descriptions, URLs) goes through ``clean`` before it reaches a terminal: control
  characters (ESC starts terminal commands), invisible and bidirectional-formatting
  characters (letters a font draws blank, the Hangul fillers, included: ``url_hosts``'
  ``is_hidden``, unless drawn with the letters around them: ``_joined``), and noncharacters, which have no glyph, are shown as ``\\x1b`` /
  ``<U+202E>`` instead of acting or passing for nothing, as are combining
  marks past five in a row (stacked by the hundred, they cover the lines around them).
  The joiners a script or an emoji needs are kept where Unicode says they belong
  (``_needed``: a ZWNJ in Persian, a ZWJ after a virama, between two emoji; a subdivision
  flag's tags: ``_FLAG_TAGS``), and shown by code anywhere else ("y<U+200D>es" is no
  "yes") and anywhere in a URL (``joiners=False``: a host with a ZWNJ reads as the one
  without). Single-line texts (titles) also lose their newlines.
* Everything a server wrote is also shown bounded (``fit``): at most ``SAID_MAX``
  characters of a message or a description, ``TITLE_MAX`` of a title (a field's, a
  choice's) or a default, ``URL_MAX`` of a URL, with "…" and how long the whole is ending
  one cut short: a few megabytes of it would push everything else off the screen, and
  drawing them takes seconds. Only what can be shown is read: spaces collapsed on one
  line, however many of them, never hide the text after them.
* A cut falls between whole shown units: a character shown as its code (``\\x1b``,
  ``<U+202E>``), a letter and the marks on it ("é" cut to "e" is another letter). A
  backslash or a "<" the server wrote is a character like any other, except in a text
  quoted inert before (``fit_quoted``: a transport's quote of a body), whose codes are
  kept whole too.
* On a terminal whose encoding cannot show a character (``LC_ALL=C`` without Python's
  UTF-8 mode: ASCII), ``for_encoding`` writes the client's own marks in ASCII ("·" as
  "|", "…" as "...") and any other character by its code (``\\xf4``), as Python writes
  one to stderr; the encoder's "?" put a question mark between the keys a prompt names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Final

from mcp_elicit.client.url_consent import PartRole, UrlVerdict
from mcp_elicit.client.url_hosts import is_hidden
from mcp_elicit.core.client_inputs import MAX_URL

__all__ = [
    "OPTION_ABOUT_MAX",
    "SAID_LINES",
    "SAID_MAX",
    "TITLE_MAX",
    "URL_MAX",
    "clean",
    "fit",
    "fit_quoted",
    "for_encoding",
    "url_shown",
]

#: Combining marks in a row shown as they are (a letter with an accent and a tone, a
#: Tibetan stack, a keycap emoji); more are shown by code: hundreds stacked on one letter
#: paint over the lines above and below it, in a browser over the address shown.
_MAX_MARKS: Final = 5
#: The most characters of an option's description shown: one is read beside its option
#: (a server's essay under every option would push the others off the screen).
OPTION_ABOUT_MAX: Final = 200
#: The most characters shown of a server's message (a question's, an error's, a URL step's)
#: or a description: a megabyte of it would push everything else off the screen.
SAID_MAX: Final = 1000
#: The most lines shown of a server's message (each at most ``SAID_MAX`` characters).
SAID_LINES: Final = 40
#: The most characters shown of a title (a field's, a choice's, a server's) or a value.
TITLE_MAX: Final = 200
#: The most characters shown of a URL a server sent, its host aside (always whole).
URL_MAX: Final = MAX_URL  # a URL that may be opened is never cut short
#: What ``clean`` leaves as a space on one line (tab, line breaks, Unicode's spaces):
#: a run of it is one space. Other white space (``\x1c``, ``\x85``) is shown by its code.
#: The client's own marks as a terminal that cannot show them gets them (``for_encoding``).
_ASCII_MARKS: Final = str.maketrans(
    {"·": "|", "…": "...", "—": "-", "⚠": "!", "✗": "x", "✓": "v", "→": "->", "←": "<-"}
)
_BLANK: Final = re.compile("[\t\n\r \xa0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_NOT_BLANK: Final = re.compile("[^\t\n\r \xa0\u1680\u2000-\u200a\u202f\u205f\u3000]")


#: Where an unassigned character is default-ignorable (drawn as nothing, as a tag is).
_IGNORED: Final = ((0x2060, 0x206F), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF))
#: Hangul's conjoining consonants that lead a syllable, and its vowels, not their fillers.
_LEADS: Final = ((0x1100, 0x115E), (0xA960, 0xA97C))
_VOWELS: Final = ((0x1161, 0x11A7), (0xD7B0, 0xD7C6))


#: What may come between the letters a joiner joins and the joiner (marks on them), read on
#: each side of it: more than five marks in a row are shown by their codes anyway.
_JOIN_SPAN: Final = 2 * _MAX_MARKS
#: What may come between an emoji and the ZWJ after it: its variation selector, a skin tone.
_ON_EMOJI: Final = frozenset("\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
#: A subdivision flag (UTS #51's emoji tag sequence): the black flag, the subdivision's code
#: in tags, CANCEL TAG; only the codes UTS #51 recommends (England, Scotland, Wales), the
#: only ones drawn as flags: any other draws a black flag alone, hiding what its tags spell
#: (a word, or another region's code that reads as this one). Tags anywhere else spell
#: text no one sees.
_FLAG_TAGS: Final = re.compile(
    "\U0001f3f4((?:"
    + "|".join("".join(chr(0xE0000 + ord(c)) for c in code) for code in ("gbeng", "gbsct", "gbwls"))
    + ")\U000e007f)"
)
#: Where the emoji a ZWJ joins are (UTS #51's ZWJ sequences): Miscellaneous Symbols,
#: Dingbats, the arrows and shapes of U+2B00, the pictographs from U+1F300. Not the symbols
#: that are letters drawn in a circle, a square, brackets (U+2460, U+1F100, U+1F200), nor
#: regional indicators, nor box drawing: a ZWJ between those joins nothing ("ⓨ‍ⓔⓢ").
_EMOJI: Final = ((0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F300, 0x1FAFF))
#: The scripts that draw a ZWJ between a letter and its virama (Unicode's chapter on each):
#: Bengali's ya-phala after a ra that is no reph ("<U+09B0><U+200D><U+09CD><U+09AF>"),
#: Sinhala's touching letters. Elsewhere a ZWJ there changes nothing drawn.
_ZWJ_BEFORE_VIRAMA: Final = frozenset({"BENGALI", "SINHALA"})
#: The arrows of U+2190 that are emoji too (UTS #51's emoji data), the one of them a math
#: symbol (Sm) included: "🙂‍↔️" (head shaking) and "🙂‍↕️" are ZWJ sequences.
_EMOJI_ARROWS: Final = frozenset("\u2194\u2195\u2196\u2197\u2198\u2199\u21a9\u21aa")


def _units(text: str, *, multiline: bool = False, joiners: bool = True) -> list[str]:
    """``text`` as shown by ``clean``, in the pieces read as one: a character, a character's
    code, a letter with the marks on it, and the joiners it needs (``_needed``, a flag's
    tags: ``_FLAG_TAGS``) when ``joiners``."""
    out: list[str] = []
    tags = (
        {n for m in _FLAG_TAGS.finditer(text) for n in range(*m.span(1))} if "\U0001f3f4" in text else set()
    )
    marks = 0  # combining marks in a row so far
    for at, ch in enumerate(text):
        category = unicodedata.category(ch)
        marks = marks + 1 if category in ("Mn", "Me") else 0
        if ch == "\n" and multiline:
            out.append(ch)
        elif ch == "\t":
            out.append("    " if multiline else " ")
        elif ch in "\n\r":
            out.append(" ")
        elif category == "Cf" and joiners and (at in tags or _needed(text, at)):
            if out:
                out[-1] += ch  # with what it joins: a cut keeps an emoji whole
            else:
                out.append(ch)
        elif category in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs") or _blank_or_noncharacter(text, at, category):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>")
        elif marks > _MAX_MARKS:
            out.append(f"<U+{ord(ch):04X}>")
        elif category.startswith("M") and out:
            out[-1] += ch  # on its letter
        else:
            out.append(ch)
    return out


def _blank_or_noncharacter(text: str, at: int, category: str) -> bool:
    """Whether ``text[at]`` shows as nothing though it is no control (a Hangul filler, but
    not one drawn with the letters around it: ``_joined``; unassigned where Unicode tells
    fonts to draw nothing: ``_IGNORED``), or is a noncharacter (``U+FFFE``, ``U+FDD0``: no
    glyph at all). Other unassigned characters are left as they are: they may be assigned
    in the terminal's Unicode, newer than this Python's (an emoji)."""
    ch = text[at]
    if category == "Cn":
        code = ord(ch)
        ignored = any(low <= code <= high for low, high in _IGNORED)
        return ignored or code & 0xFFFE == 0xFFFE or 0xFDD0 <= code <= 0xFDEF
    return category != "Zs" and is_hidden(ch) and not _joined(text, at)


def _joined(text: str, at: int) -> bool:
    """Whether the blank letter ``text[at]`` is drawn as part of the letters around it, as
    Unicode means it: the vowel filler after a consonant, the consonant filler before a
    vowel (an old Hangul syllable lacking one), the grapheme joiner between a letter or mark
    and the mark it keeps in order (Biblical Hebrew's points)."""
    ch = text[at]
    before = text[at - 1] if at else ""
    after = text[at + 1] if at + 1 < len(text) else ""
    if ch == "\u1160":
        return _within(before, _LEADS)
    if ch == "\u115f":
        return _within(after, _VOWELS)
    if ch == "\u034f" and before and after and after != ch:
        return unicodedata.category(before)[0] in "LM" and unicodedata.category(after) in ("Mn", "Mc", "Me")
    return False


def _needed(text: str, at: int) -> bool:
    """Whether ``text[at]``, a format character, is a joiner its script or its emoji needs:
    ZWNJ or ZWJ after a virama (a half form, a chillu), ZWNJ between letters that would
    join (Persian "<U+0645><U+06CC><U+200C><U+062E>"): UAX #31's contexts, as IDNA has them
    (``idna.core.valid_contextj``); ZWJ between a Bengali or Sinhala letter and its virama
    (``_ZWJ_BEFORE_VIRAMA``); ZWJ between two emoji (``_EMOJI``, ``_EMOJI_ARROWS``: UTS
    #51's ZWJ sequences), the first with its variation selector or skin tone. Anywhere else
    (between Latin letters, at either end) it would only hide a difference, and is shown by
    its code."""
    ch = text[at]
    if ch not in "\u200c\u200d" or not at:
        return False
    from idna.core import valid_contextj  # its tables load only when a joiner is met

    start = max(at - _JOIN_SPAN, 0)
    try:
        if valid_contextj(text[start : at + _JOIN_SPAN + 1], at - start):
            return _one_script(text, at)
    except ValueError:  # a character next to it that Unicode does not name (a control)
        return False
    if ch != "\u200d" or at + 1 == len(text):
        return False
    if unicodedata.combining(text[at + 1]) == 9:  # a virama after it
        letter = unicodedata.category(text[at - 1]) == "Lo"
        return letter and _script(text[at - 1]) == _script(text[at + 1]) in _ZWJ_BEFORE_VIRAMA
    before = at - 2 if text[at - 1] in _ON_EMOJI and at > 1 else at - 1
    return all(
        c in _EMOJI_ARROWS or (unicodedata.category(c) == "So" and _within(c, _EMOJI))
        for c in (text[before], text[at + 1])
    )


def _one_script(text: str, at: int) -> bool:
    """Whether what the joiner at ``text[at]`` joins is of one script (the first word of
    the Unicode names: ARABIC, DEVANAGARI), as it must be to be drawn joined: after a
    virama, the letter it is on with it; else the letters on either side, marks passed
    over. Letters of two scripts never join: a ZWNJ between them changes nothing drawn."""
    marks = ("Mn", "Mc", "Me")
    before, after, low = at - 1, at + 1, max(at - _JOIN_SPAN, 0)
    while before > low and unicodedata.category(text[before]) in marks:
        before -= 1
    if unicodedata.combining(text[at - 1]) == 9:  # a virama
        scripts = {_script(ch) for ch in text[before:at]}
    else:
        while after < min(at + _JOIN_SPAN, len(text) - 1) and unicodedata.category(text[after]) in marks:
            after += 1
        scripts = {_script(text[before]), _script(text[after])}
    return len(scripts) == 1


def _script(ch: str) -> str:
    return unicodedata.name(ch, "").partition(" ")[0]


def _within(ch: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    return bool(ch) and any(low <= ord(ch) <= high for low, high in ranges)


def clean(text: str, *, multiline: bool = False, joiners: bool = True) -> str:
    """``text`` with every character that could act on a terminal shown instead; with the
    joiners its script or emoji need (``_needed``) unless not ``joiners`` (a URL: a name
    with a ZWNJ and one without read alike)."""
    return "".join(_units(text, multiline=multiline, joiners=joiners))


def _words(text: str, most: int) -> tuple[str, bool]:
    """The start of ``text`` on one line, its runs of spaces one space, at least ``most``
    characters of it when it has them; and whether more than that follows. Reads no
    further than that, however many spaces come first."""
    out: list[str] = []
    size = -1  # the spaces between the words
    at = 0
    while size < most:
        start = _NOT_BLANK.search(text, at)
        if start is None:
            return " ".join(out), False
        begin = start.start()
        room = most - size
        stop = _BLANK.search(text, begin, begin + room)
        at = stop.start() if stop is not None else min(begin + room, len(text))
        out.append(text[begin:at])
        size += at - begin + 1
    return " ".join(out), _NOT_BLANK.search(text, at) is not None


def fit(
    text: str,
    width: int,
    *,
    length: bool = False,
    multiline: bool = False,
    joiners: bool = True,
    measure: Callable[[str], int] = len,
) -> str:
    """``text``, a server's, made inert (``clean``), at most ``width`` characters: "…" ends
    one cut short, then, when ``length``, how long the whole is (in characters). On one
    line, spaces collapsed; or, when ``multiline``, with its lines and spaces, at most
    ``SAID_LINES`` lines of it. Only what can be shown of it is cleaned (a few megabytes
    would take seconds). ``joiners`` as for ``clean``. ``width`` is in what ``measure``
    counts: characters, or, for a row of a terminal, the columns the text takes there
    (``ui.columns.cells``: a Chinese letter two, a combining mark none)."""
    whole = len(text)
    # more than is shown: characters written as codes, or taking no column (a letter's
    # marks, at most _MAX_MARKS of them shown as marks, and the joiners of an emoji)
    most = width if measure is len else width * (_MAX_MARKS + 1)
    if multiline:
        head = text[: most * 4]
        units = _units(head, multiline=True, joiners=joiners)
        while units and units[-1].isspace():
            units.pop()
        breaks = [n for n, unit in enumerate(units) if unit == "\n"]
        cut = len(breaks) >= SAID_LINES or len(head) < whole
        if len(breaks) >= SAID_LINES:
            units = units[: breaks[SAID_LINES - 1]]
    else:
        head, cut = _words(text, most + 1)
        units = _units(head, joiners=joiners)
    shown = "".join(units)
    if measure(shown) <= width and not cut:
        return shown
    kept: list[str] = []
    room = max(width - measure("…"), 1)
    for unit in units:
        room -= measure(unit)
        if room < 0:
            break
        kept.append(unit)
    short = "".join(kept).rstrip() + "…"  # "word…", not "word …"
    return f"{short} ({whole} characters)" if length else short


#: The end of a text cut inside a character's code as ``core.quoting.shown_text`` writes
#: one (``\x1b``, ``\u200e``, ``\U000e0001``): that code's start, cut off with it.
_PART_OF_A_CODE: Final = re.compile(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,3}|U[0-9a-f]{0,7})?$")


#: The most characters ``clean`` writes for one (``<U+E0001>``).
_SHOWN_MOST: Final = 9


def fit_quoted(text: str, width: int) -> str:
    """``fit`` (on one line) for a text quoted inert already, each character a terminal
    could act on written as its code (``core.quoting.shown_text``: ``\\x1b``, ``\\u200e``):
    cut between whole codes too, never inside one ("\\u20…"). A text no longer than
    ``width`` can be cut too: shown, a character the quote kept (a Hangul filler) is
    written as its code (``<U+3164>``), longer."""
    short = fit(text, width)
    if not short.endswith("…") or short == fit(text, _SHOWN_MOST * len(text)):
        return short  # whole
    return _PART_OF_A_CODE.sub("", short[:-1]).rstrip() + "…"


#: The parts of a URL always shown whole: where it goes.
_WHOLE: Final = frozenset({"host", "domain", "port"})


def url_shown(verdict: UrlVerdict) -> tuple[list[tuple[PartRole, str]], str]:
    """The parts of a URL as shown, made inert (``clean``), each with its role: the host
    and port whole, what is not (the scheme, a user-info, the path) within ``URL_MAX``
    characters in all; and what ends one cut short ("… (N characters)", else ""). A URL
    that may be opened is shown whole, however long (a sign-in's: ``judge_url``)."""
    whole = sum(len(p.text) for p in verdict.parts if p.role in _WHOLE)
    room = URL_MAX - whole if verdict.refused else len(verdict.url)
    shown: list[tuple[PartRole, str]] = []
    for part in verdict.parts:
        text = part.text
        if part.role not in _WHOLE:
            text, room = text[: max(room, 0)], room - len(text)
        if text:
            shown.append((part.role, clean(text, joiners=False)))
    return shown, f"… ({len(verdict.url)} characters)" if room < 0 else ""


def for_encoding(text: str, encoding: str | None) -> str:
    """``text`` as a terminal writing ``encoding`` can show it: as it is when it can (or
    when the encoding is not known), else with the client's own marks in ASCII and any
    other character it cannot show by its code (``\\xf4``)."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.translate(_ASCII_MARKS).encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: left to the stream's own rule
        pass
    return text
