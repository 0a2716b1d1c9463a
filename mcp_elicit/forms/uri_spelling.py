"""How a web address typed beyond ASCII reads as browsers send it, for a ``uri`` message.

A person may type ``https://例え.jp/café`` as an address bar takes it; a ``uri`` answer
cannot hold it. :func:`as_sent` gives the same address as browsers send it (its host name
in punycode, anything else beyond ASCII %-escaped in UTF-8), or None whenever that could
name something other than what the person typed or what a browser would reach:

- a host name is mapped here by lower case and NFC alone, as browsers map a name already
  in its usual form: a name that another mapping would change (full-width letters, a
  ligature, ``ß`` or ``ς``, a Kelvin sign), or that holds anything but letters, marks and
  decimal digits (a look-alike of ``/``, ``@`` or ``:``: U+FF0F, U+FF20, U+FF1A, U+2044,
  which a mapping would make part of the address's structure), gets no suggestion. Its dots may be the ideographic
  and full-width ones, which browsers read as dots;
- a name whose label mixes scripts (Latin with Cyrillic or Greek look-alikes; Han with
  Hiragana, Katakana, Bopomofo or Hangul is one writing system), a label that starts with
  a mark or an ``xn--``, or that breaks the bidi rule of RFC 5893 (which browsers apply),
  gets none;
- an invisible character (a variation selector, a Hangul filler, a grapheme joiner)
  anywhere gets none: a person must see it, not have it escaped away;
- a user name beyond ASCII gets none (it is where a look-alike slash hides the real host:
  ``https://example.com\uff0f@evil.example/``), nor does a host beyond ASCII in an address
  whose scheme browsers do not write in punycode (``foo://ü.example``).

Pure and stdlib-only (``unicodedata`` and the ``punycode`` codec; not the ``idna`` codec,
whose IDNA 2003 mapping is not the UTS 46 one browsers use).
"""

from __future__ import annotations

import unicodedata

__all__ = ["as_sent"]

#: The schemes whose host browsers write in punycode (WHATWG's special schemes but ``file``).
_PUNYCODE_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
#: What browsers read as a dot between the labels of a host name.
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
#: Letters and marks that show nothing (default ignorable): a joiner, variation selectors,
#: Hangul fillers, Khmer and Mongolian ones. Other invisible characters are not letters.
_INVISIBLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
#: Scripts one label may mix (UTS 39's highly restrictive level): each with Latin too.
_TOGETHER = (
    frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "CJK", "BOPOMOFO"}),
    frozenset({"LATIN", "CJK", "HANGUL"}),
)
#: The first word of a character's name that is not its script's.
_SCRIPT_OF = {
    "IDEOGRAPHIC": "CJK",
    "KATAKANA-HIRAGANA": "KATAKANA",
    "ARABIC-INDIC": "ARABIC",
    "EXTENDED": "ARABIC",
}
#: The bidi classes a label may hold after its first character's, in a name with a
#: right-to-left label (RFC 5893, section 2).
_RTL = frozenset({"R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_LTR = frozenset({"L", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})


def as_sent(text: str) -> str | None:
    """``text`` as browsers send it, or None (see the module). Every non-URI character of
    ``text`` is beyond ASCII; whether the result is a ``uri`` the caller checks."""
    if any(_invisible(ch) for ch in text):
        return None
    scheme, colon, rest = text.partition(":")
    if not rest.startswith("//"):
        return f"{scheme}{colon}{_escaped(rest)}"
    cut = min((rest.find(ch, 2) for ch in "/?#" if ch in rest[2:]), default=len(rest))
    authority, rest = rest[2:cut], rest[cut:]
    user, at, host_port = authority.rpartition("@")
    host, port = host_port, ""
    if not host_port.startswith("[") and ":" in host_port:
        host, _, digits = host_port.rpartition(":")
        port = f":{digits}"
    if not (user.isascii() and port.isascii()):
        return None
    if not host.isascii():
        if scheme.lower() not in _PUNYCODE_SCHEMES:
            return None
        name = _punycode(host)
        if name is None:
            return None
        host = name
    return f"{scheme}{colon}//{user}{at}{host}{port}{_escaped(rest)}"


def _punycode(host: str) -> str | None:
    """``host`` (beyond ASCII) as browsers send it, or None where they may not, or where it
    could read as another name."""
    labels = host.translate(_DOTS).split(".")
    if labels[-1] == "":
        labels.pop()  # a name ending in a dot: fully qualified
    if not labels or "" in labels or not _bidi_rule(labels):
        return None
    sent = []
    for label in labels:
        if label.isascii():
            if label.lower().startswith("xn--"):
                return None  # browsers check it as punycode, which is not done here
            sent.append(label)
            continue
        mapped = unicodedata.normalize("NFC", label.lower())
        if (
            mapped.isascii()  # a look-alike of an ASCII name: a Kelvin sign's "k"
            or unicodedata.normalize("NFKC", mapped.casefold()) != mapped
            or not all((ch.isascii() and (ch.isalnum() or ch == "-")) or _letter(ch) for ch in mapped)
            or unicodedata.category(mapped[0])[0] == "M"
            or mapped.startswith(("-", "xn--"))
            or mapped.endswith("-")
            or mapped[2:4] == "--"
            or not _one_script(mapped)
        ):
            return None
        ace = f"xn--{mapped.encode('punycode').decode('ascii')}"
        if len(ace) > 63:
            return None
        sent.append(ace)
    name = ".".join(sent) + ("." if host.translate(_DOTS).endswith(".") else "")
    return name if len(name) <= 253 else None


def _letter(ch: str) -> bool:
    """A letter, a mark or a decimal digit beyond ASCII, not a title-case one."""
    return not ch.isascii() and unicodedata.category(ch) in ("Ll", "Lu", "Lo", "Lm", "Mn", "Mc", "Nd")


def _invisible(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _INVISIBLE)


def _one_script(label: str) -> bool:
    """Whether ``label``'s letters and digits are of one script (or of one writing system:
    ``_TOGETHER``). Marks, ASCII digits and the hyphen belong to any."""
    scripts = set()
    for ch in label:
        if ch.isascii():
            if ch.isalpha():
                scripts.add("LATIN")
        elif unicodedata.category(ch)[0] != "M":
            word = unicodedata.name(ch, "?").split()[0]
            scripts.add(_SCRIPT_OF.get(word, word))
    return len(scripts) <= 1 or any(scripts <= together for together in _TOGETHER)


def _bidi_rule(labels: list[str]) -> bool:
    """RFC 5893's bidi rule, for a name with a right-to-left label (browsers check it)."""
    kinds = [[unicodedata.bidirectional(ch) for ch in label] for label in labels]
    if not any(kind in ("R", "AL", "AN") for label in kinds for kind in label):
        return True
    for label in kinds:
        allowed = _RTL if label[0] in ("R", "AL") else _LTR if label[0] == "L" else None
        if allowed is None or not set(label) <= allowed:
            return False
        if label[0] != "L" and "EN" in label and "AN" in label:
            return False
        while label and label[-1] == "NSM":
            label = label[:-1]
        if not label or label[-1] not in (("L", "EN") if allowed is _LTR else ("R", "AL", "EN", "AN")):
            return False
    return True


def _escaped(part: str) -> str:
    """``part`` with every character beyond ASCII %-escaped in UTF-8."""
    return "".join(ch if ch.isascii() else "".join(f"%{byte:02X}" for byte in ch.encode()) for ch in part)
