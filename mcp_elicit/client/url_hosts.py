"""How a browser reads the host of a URL a server sent, for URL consent
(``url_consent``): the port, an IPv6 literal, IPv4 in its odd forms (decimal, hex, octal),
%-escapes, names to and from ASCII (UTS 46, non-transitional, through ``idna``), labels
that mix scripts, loopback, and the registrable domain (the Public Suffix List, through
``publicsuffixlist``). Pure.

Rules: what cannot be read as a host a browser would go to raises ``Refused`` (with the
``UrlWarning`` a person is shown); what reads, but should be said, comes back as
warnings. Nothing is fetched. A name DNS cannot hold (a label over 63 characters, the
whole over 253, counted as DNS has them: an international name in punycode, a trailing
dot left out) is refused: no browser can reach such a site, so there is nothing for a
person to consent to, and the server that sent it has to send another. So is a name
with a character no registered name holds (as DNS has it: anything but letters, digits,
hyphens and underscores between the dots): browsers keep ``;``, ``,``, ``&``, ``'``, ``(``,
``)``, ``*``, ``+``, ``=``, ``!``, ``$``, ``~`` in a host, and a person reads
``evil.com;good.example`` as two names, the site among them. An underscore, which DNS
holds, is only warned about (``underscore``).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote

from mcp_elicit.core.ipv4_forms import IDN_DOTS, NotIPv4, read_ipv4
from mcp_elicit.wire.headers import shown

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

__all__ = [
    "IDN_DOTS",
    "Refused",
    "UrlWarning",
    "address_of",
    "is_hidden",
    "is_loopback",
    "port_number",
    "read_host",
    "registrable",
    "split_port",
]

_PORT: Final = re.compile(r"[0-9]*")
#: What no host name may hold (WHATWG URL's forbidden domain code points, less those that
#: end the authority or are refused as hidden before the host is read).
_NOT_IN_HOST: Final = frozenset(":<>[]^|%@/\\?#")
#: What a label of a registered name holds, as DNS has it (after the name mapping): letters,
#: digits, hyphens, and underscores (which DNS holds, and browsers reach, though rare).
_IN_SITE_NAMES: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
#: The longest host read, in characters after %-decoding: DNS names hold 253, and room is
#: left for what the name mapping drops (soft hyphens, variation selectors). A longer one
#: is refused before its labels are mapped one by one, which costs tens of microseconds
#: each: a megabyte of host sent by a server took twenty seconds to judge.
_MAX_HOST: Final = 1024
#: The same, written with %-escapes (up to four UTF-8 bytes of three characters each).
_MAX_HOST_ESCAPED: Final = 12 * _MAX_HOST
#: The longest label and name DNS holds (RFC 1035), in ASCII characters, no trailing dot.
_MAX_LABEL: Final = 63
_MAX_NAME: Final = 253
#: Script sets that may share one label (Unicode TS 39, "highly restrictive").
_SCRIPT_SETS: Final = (
    frozenset({"Latin", "Han", "Hiragana", "Katakana"}),
    frozenset({"Latin", "Han", "Bopomofo"}),
    frozenset({"Latin", "Han", "Hangul"}),
)
_SCRIPT_NAMES: Final = {"CJK": "Han", "IDEOGRAPHIC": "Han"}
#: Letters of other scripts that a person reads as a Latin letter, with that letter (as a
#: name maps them: lower case). A label made of these alone reads as a Latin name.
_LATIN_TWINS: Final = {
    "Cyrillic": dict(zip("аьсԁеһіјкӏпорԛгѕԝхуѵѡү", "abcdehijklnopqrswxyvwy", strict=True)),
    "Greek": dict(zip("αϲεικνορτυχ", "aceikvoptux", strict=True)),
}


@dataclass(frozen=True, slots=True)
class UrlWarning:
    """One thing a person should know before opening the URL."""

    code: str
    text: str
    refuses: bool = False


class Refused(Exception):
    """What no browser should be sent to: the warning, which refuses, says why."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.warning = UrlWarning(code, text, refuses=True)


#: Characters outside the format category that show as nothing: the Hangul fillers (letters
#: a font draws blank), the combining grapheme joiner and Khmer's two inherent vowels.
#: Variation selectors, also invisible, are left alone: they belong to emoji.
_BLANK: Final = frozenset("\u115f\u1160\u3164\uffa0\u034f\u17b4\u17b5")


def is_hidden(ch: str) -> bool:
    """Whether ``ch`` is a space, a control, or a character that shows as nothing."""
    if ch.isspace() or ch in _BLANK:
        return True
    category = unicodedata.category(ch)
    return category in ("Cc", "Cf", "Cs", "Zl", "Zp")  # Cs: a lone surrogate, not text at all


def split_port(hostport: str) -> tuple[str, str | None]:
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise Refused("malformed", "The address has an IPv6 host without its closing ']'.")
        rest = hostport[end + 1 :]
        if rest and not rest.startswith(":"):
            raise Refused("malformed", "The address has text after its IPv6 host.")
        return hostport[: end + 1], rest[1:] if rest else None
    host, sep, port = hostport.rpartition(":")
    if not sep:
        return hostport, None
    return host, port


def port_number(text: str | None) -> int | None:
    if not text:
        return None
    digits = text.lstrip("0") or "0"  # a browser reads leading zeros; int() refuses over 4300 digits
    if not _PORT.fullmatch(text) or len(digits) > 5 or int(digits) > 65535:
        shown = text if len(text) <= 20 else text[:20] + "..."
        raise Refused("malformed", f"The address has an invalid port ({shown}).")
    return int(digits)


def read_host(
    text: str,
) -> tuple[str, str, bool, UrlWarning | None, list[UrlWarning]]:
    """(Unicode host, ASCII host, is an IP, a warning about the IP's form, IDN warnings)."""
    if text.startswith("["):
        try:
            address = ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            raise Refused("malformed", f"The address has an invalid IPv6 host ({text}).") from None
        written = f"[{_as_browsers_write(address)}]"
        return written, written, True, None, []
    warnings: list[UrlWarning] = []
    if len(text) > _MAX_HOST_ESCAPED:  # too long even if every character were %-escaped
        raise _too_long(text)
    decoded = text
    if "%" in text:
        decoded = unquote(text, errors="strict") if _decodable(text) else ""
        if not decoded or any(is_hidden(ch) or ch in "/\\?#@:[]%" for ch in decoded):
            raise Refused("malformed", "The host is written with %-escapes that do not decode to a name.")
        warnings.append(
            UrlWarning("encoded-host", f"The host is written with %-escapes ({text}); it means {decoded}.")
        )
    if len(decoded) > _MAX_HOST:
        raise _too_long(text)
    bad = next((ch for ch in decoded if ch in _NOT_IN_HOST), None)
    if bad is not None:
        raise Refused(
            "malformed",
            f"The host {text} has a character no site name can hold ({bad!r}); a browser would not open it.",
        )
    labels = IDN_DOTS.split(decoded.lower())
    ipv4 = _ipv4(labels) if decoded.isascii() else None
    if ipv4 is not None:
        return _ip_host(ipv4, text, decoded, warnings)
    unicode_labels: list[str] = []
    ascii_labels: list[str] = []
    had_punycode = False
    for index, label in enumerate(labels):
        if not label:
            if index == len(labels) - 1 and index > 0:  # a trailing dot: "example.com."
                continue
            raise Refused("malformed", f"The host {text} has an empty label.")
        if label.isascii() and len(label) > _MAX_LABEL:
            raise _not_in_dns(text, _part(label), len(label), "63 between two dots")
        try:
            if label.isascii():
                ascii_label = label
                if label.startswith("xn--"):
                    had_punycode = True
                    unicode_label = _to_unicode(label)
                    if _to_ascii(unicode_label) != label:
                        raise UnicodeError("not canonical")
                else:
                    unicode_label = label
            else:
                ascii_label = _to_ascii(label)
                unicode_label = _to_unicode(ascii_label)
        except UnicodeError:  # idna.IDNAError is one
            length = _dns_length(label)
            if length > _MAX_LABEL:
                raise _not_in_dns(text, _part(label), length, "63 between two dots") from None
            raise Refused(
                "malformed", f"The host {text} is not a valid internationalised name (label {label!r})."
            ) from None
        unicode_labels.append(unicode_label)
        ascii_labels.append(ascii_label)
    odd = next((ch for label in ascii_labels for ch in label if ch not in _IN_SITE_NAMES), None)
    if odd is not None:
        raise Refused(
            "malformed",
            f"The host {text} has a character no registered site name holds ({odd!r}); it can make "
            "the address read as a different site. Such an address is never opened.",
        )
    if any("_" in label for label in ascii_labels):
        warnings.append(
            UrlWarning(
                "underscore",
                f"The host {text} has an underscore (_), which site names rarely hold: check that "
                "this is the site you expect.",
            )
        )
    # A browser maps the name before it looks for a number: "127.0.0.¹" is 127.0.0.1.
    ipv4 = None if decoded.isascii() else _ipv4(ascii_labels)
    if ipv4 is not None:
        return _ip_host(ipv4, text, decoded, warnings)
    host = ".".join(unicode_labels)
    ascii_host = ".".join(ascii_labels)
    if len(ascii_host) > _MAX_NAME:
        raise _not_in_dns(text, "it", len(ascii_host), "253 in all")
    if had_punycode and host != ascii_host:
        # beside non-ASCII characters, the host as sent (not as mapped), and what DNS reads
        sent, dns = (
            (ascii_host, "")
            if decoded.isascii()
            else (_as_sent(decoded), f", and DNS reads it as {ascii_host}")
        )
        warnings.append(
            UrlWarning(
                "punycode",
                f"The host is written in punycode ({sent}); it reads as {host}{dns}. Check that this is "
                "the site you expect.",
            )
        )
    elif not decoded.isascii():
        warnings.append(UrlWarning("idn", _idn_text(decoded, host, ascii_host)))
    lookalike = False
    for label, ascii_label in zip(unicode_labels, ascii_labels, strict=True):
        scripts = _scripts(label)
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in _SCRIPT_SETS):
            lookalike = True
            warnings.append(
                UrlWarning(
                    "mixed-script",
                    f"The name {label!r} mixes {' and '.join(sorted(scripts))} letters, a common way to "
                    "imitate another site's name.",
                )
            )
        twin = _latin_twin(label, scripts) if unicode_labels[-1].isascii() else None
        if twin is not None:
            lookalike = True
            warnings.append(
                UrlWarning(
                    "lookalike",
                    f"The name {label!r} is written in {next(iter(scripts))} letters that all look like "
                    f"Latin ones: it reads as {twin}, but it is another name ({ascii_label}).",
                )
            )
    # Such a name is shown as DNS has it, which reads as what it is (browsers do the same).
    return ascii_host if lookalike else host, ascii_host, False, None, warnings


def _idn_text(sent: str, host: str, ascii_host: str) -> str:
    """The ``idn`` warning: the host as sent (a character that shows as nothing by its
    code), as it reads once mapped when that differs (full-width or capital letters), and
    as DNS reads it."""
    shown = _as_sent(sent)
    mapped = host not in (sent, sent.rstrip(".")) and host != ascii_host
    reads = f", which reads as {host}" if mapped else ""
    return (
        f"The host is written with non-ASCII characters ({shown}{reads}); DNS reads it as {ascii_host}. "
        "Letters from other alphabets, or of other widths, can look like the ones you expect."
    )


def _as_sent(sent: str) -> str:
    """The host as sent, a character that shows as nothing given by its code."""
    return "".join(f"<U+{ord(ch):04X}>" if is_hidden(ch) else ch for ch in sent)


def _latin_twin(label: str, scripts: set[str]) -> str | None:
    """The Latin name ``label`` reads as, when it is written in one other script whose every
    letter looks like a Latin one (a name under a non-Latin top-level domain is not asked:
    there the script is expected)."""
    if len(scripts) != 1:
        return None
    twins = _LATIN_TWINS.get(next(iter(scripts)))
    if twins is None or not all(ch in twins for ch in label if ch.isalpha()):
        return None
    return "".join(twins.get(ch, ch) for ch in label)


def _ip_host(
    ipv4: ipaddress.IPv4Address, text: str, decoded: str, warnings: list[UrlWarning]
) -> tuple[str, str, bool, UrlWarning | None, list[UrlWarning]]:
    dotted = str(ipv4)
    note = None
    if dotted != decoded.rstrip("."):
        note = UrlWarning(
            "ip-host-form",
            f"The host {text} is an IP address written in an unusual form; it means {dotted}.",
        )
    return dotted, dotted, True, note, warnings


def _too_long(text: str) -> Refused:
    return Refused(
        "malformed",
        f"The host is {len(text)} characters long, longer than any site name can be (DNS names "
        "hold at most 253); a browser would not find it.",
    )


def _not_in_dns(host: str, what: str, length: int, limit: str) -> Refused:
    return Refused(
        "malformed",
        f"The host {shown(host)} is no name a site can have: {what} is {length} characters long as "
        f"DNS has it, and DNS allows at most {limit}, so a browser would not find it. The address "
        "is wrong: ask whoever runs the server for a working one.",
    )


def _part(label: str) -> str:
    """A label as ``_not_in_dns`` names it: its start, since its length is said next."""
    return f"its part {label[:20] + '...' if len(label) > 24 else label!r}"


def _dns_length(label: str) -> int:
    """How long a non-ASCII ``label`` is as DNS would have it (its punycode form), when the
    name mapping takes it (0 when it does not: then it is not a name at all)."""
    import idna

    try:
        mapped = idna.uts46_remap(label, std3_rules=False, transitional=False)
    except UnicodeError:
        return 0
    return len(mapped) if mapped.isascii() else len("xn--") + len(mapped.encode("punycode"))


def _to_ascii(label: str) -> str:
    """A label as DNS sees it: UTS 46 mapping, non-transitional, as browsers do."""
    import idna

    return idna.encode(label, uts46=True, transitional=False).decode("ascii")


def _to_unicode(label: str) -> str:
    import idna

    return idna.decode(label)


def _decodable(text: str) -> bool:
    try:
        unquote(text, errors="strict")
    except UnicodeDecodeError:
        return False
    return True


def _ipv4(labels: list[str]) -> ipaddress.IPv4Address | None:
    """The WHATWG IPv4 parser: a host whose last label is a number is an IPv4 address (in
    decimal, 0x hex or 0-prefixed octal, with 1 to 4 parts), or invalid."""
    try:
        return read_ipv4(labels)
    except NotIPv4 as exc:
        what = (
            "is an IP address out of range" if exc.out_of_range else "looks like an IP address but is not one"
        )
        raise Refused("malformed", f"The host {'.'.join(labels)} {what}.") from None


def _as_browsers_write(address: ipaddress.IPv6Address) -> str:
    """The address as a browser's address bar shows it: compressed, all in hex. Python
    3.13 writes an IPv4-mapped address with its IPv4 part dotted (``::ffff:127.0.0.1``),
    where browsers, and Python before it, write ``::ffff:7f00:1``."""
    mapped = address.ipv4_mapped
    if mapped is None:
        return address.compressed
    n = int(mapped)
    return f"::ffff:{n >> 16:x}:{n & 0xFFFF:x}"


def address_of(ip_host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address a browser connects to for an IP host (``[::1]`` or ``127.0.0.1``): an
    IPv4 address written as IPv6 (``[::ffff:127.0.0.1]``) is that IPv4 address."""
    address = ipaddress.ip_address(ip_host.strip("[]"))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback(ascii_host: str, is_ip: bool) -> bool:
    """Whether the host is this computer: a loopback name or address, or the "any"
    address (``0.0.0.0``, ``[::]``), which browsers connect to this computer."""
    if is_ip:
        address = address_of(ascii_host)
        return address.is_loopback or address.is_unspecified
    name = ascii_host.rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


def _scripts(label: str) -> set[str]:
    scripts: set[str] = set()
    for ch in label:
        if ch.isascii():
            if ch.isalpha():
                scripts.add("Latin")
            continue
        if not ch.isalpha():
            continue
        word = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
        scripts.add(_SCRIPT_NAMES.get(word, word.title()))
    return scripts


@functools.cache
def _suffixes() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList  # 40 ms to load: only once a URL is judged

    return PublicSuffixList()


def registrable(host: str) -> str:
    labels = host.rstrip(".").split(".")
    ascii_labels = [label if label.isascii() else _to_ascii(label) for label in labels]
    site = _suffixes().privatesuffix(".".join(ascii_labels))
    # The same labels as the host, in the form a person reads; all of them when the host
    # is a public suffix itself.
    return ".".join(labels[-(site.count(".") + 1) :] if site else labels)
