"""String formats of the form subset: ``email``, ``uri``, ``date`` and ``date-time``.

Each format has a predicate (``str -> bool``), a message for a person, and, for the
two temporal formats, a parser to the Python value that ``FormSchema.build`` returns.

Rules:

- ``date`` is strictly ``YYYY-MM-DD`` (RFC 3339 ``full-date``) and must exist on the
  calendar; years before 0001 are refused because Python cannot hold them.
- ``date-time`` is RFC 3339: ``T`` (or ``t``) between date and time, seconds
  required, optional fraction, and a ``Z`` or ``±HH:MM`` offset required. Second
  ``60`` is a leap second, accepted where RFC 3339 allows one: the last second of a
  day in UTC, whatever the offset (``23:59:60Z``, ``18:59:60-05:00``); anywhere else it
  is refused with its own message (:func:`format_message`). Which days had one is not
  checked (they are announced only months ahead). Python's ``datetime`` cannot hold
  it, so :func:`parse_date_time` gives the last microsecond before it, in the offset
  sent (``23:59:59.999999+00:00``): the same day and minute, and no earlier than any
  other time in that second. A ``str`` field gets the answer as sent.
- ``email`` is RFC 5321's dot-string mailbox, kept pragmatic: ASCII only (a
  non-ASCII address is JSON Schema's ``idn-email``, not ``email``), one ``@``, a local
  part of atext characters without quotes or an empty or dotted-out part, and a domain
  of at least two letter-digit-hyphen labels whose last is a word of two or more
  letters (or an ``xn--`` label). ``name@localhost`` is refused. A quoted part, an
  address in brackets and a domain without a dot, which RFC 5321 allows, are each
  refused with a message that names them, as is any other fault found (a dot at the end,
  an ``_`` in the domain, a one-letter last part: :func:`format_message`).
- ``uri`` is an absolute RFC 3986 URI: a scheme, ``:`` (then perhaps nothing: ``x:`` has
  an empty path, which RFC 3986 allows, as ``mailto:`` does), then only the characters RFC
  3986 allows (ASCII letters, digits, ``-._~:/?#[]@!$&'()*+,;=``) and ``%`` followed by
  two hex digits; a non-ASCII one is an ``iri``, not a ``uri``. Each character must also
  be allowed where it stands: after ``//`` an authority (``user@``, a host name or a
  ``[...]`` IPv6 or IPvFuture address, ``:`` and a port of digits), a path without
  ``[`` or ``]``, then a query and one fragment (where ``[`` and ``]`` are tolerated, as
  browsers send them). ``http``, ``https``, ``ws``, ``wss`` and ``ftp`` need a host.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from datetime import date, datetime, timedelta

from mcp_elicit.forms.uri_spelling import as_sent

__all__ = [
    "FORMAT_CHECKS",
    "FORMAT_LENGTHS",
    "FORMAT_MESSAGES",
    "FormatMismatch",
    "format_message",
    "is_date",
    "is_date_time",
    "is_email",
    "is_uri",
    "non_uri_characters",
    "parse_date",
    "parse_date_time",
]

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
#: A date with its year first, written otherwise: a month or day in one digit, or "/" or "."
#: between the parts.
_LOOSE_DATE = re.compile(r"([0-9]{4})([-/.])([0-9]{1,2})\2([0-9]{1,2})\Z")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)
_EMAIL = re.compile(
    r"(?!\.)(?!.*\.\.)[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}(?<!\.)"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})\Z"
)
#: One character RFC 3986 allows in a URI as it is (``%`` starts an escape).
_URI_CHAR = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]"
#: What a host name, a user name and a path segment hold: unreserved, sub-delims, escapes.
_PLAIN = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})"
_PCHAR = rf"(?:{_PLAIN}|[:@])"
_URI = re.compile(
    rf"([A-Za-z][A-Za-z0-9+.-]*):"
    rf"(?://(?:(?:{_PLAIN}|:)*@)?(\[[^\[\]]*\]|{_PLAIN}*)(?::[0-9]*)?(?:/{_PCHAR}*)*"
    rf"|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"
    rf"(?:\?(?:{_PCHAR}|[/?\[\]])*)?(?:#(?:{_PCHAR}|[/?\[\]])*)?\Z"
)
_IP_FUTURE = re.compile(r"v[0-9A-Fa-f]+\.(?:[A-Za-z0-9\-._~!$&'()*+,;=:])+\Z")
_NOT_URI_CHAR = re.compile(rf"(?!{_URI_CHAR}|%).", re.DOTALL)
_NEEDS_HOST = frozenset({"http", "https", "ws", "wss", "ftp"})
_MINUTE = timedelta(minutes=1)
_DAY_MINUTES = 24 * 60
_LEAP_SECOND_MESSAGE = (
    "can have second 60 only as a leap second, the last second of a day in UTC, "
    "like 2016-12-31T23:59:60Z or 2016-12-31T18:59:60-05:00"
)


def parse_date(text: str) -> date | None:
    """The date ``text`` names, or None if it is not a strict ``YYYY-MM-DD`` calendar date."""
    if _DATE.match(text) is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def parse_date_time(text: str) -> datetime | None:
    """The aware datetime ``text`` names, or None if it is not RFC 3339 with an offset.
    A leap second is the last microsecond before it (``23:59:60Z`` is
    ``23:59:59.999999+00:00``), in the offset sent."""
    return _read_date_time(text)[0]


def _read_date_time(text: str) -> tuple[datetime | None, bool]:
    """The datetime ``text`` names (or None), and whether its one fault is a second 60
    that is not the last second of a UTC day."""
    if _DATE_TIME.match(text) is None or (text[-1] not in "Zz" and text[-2:] > "59"):
        return None, False
    text = text.upper()
    leap = text[17:19] == "60"  # YYYY-MM-DDTHH:MM:SS: the shape is checked
    try:  # fromisoformat checks the calendar, clock and offset ranges
        when = datetime.fromisoformat(f"{text[:17]}59{text[19:]}" if leap else text)
    except ValueError:
        return None, False
    if not leap:
        return when, False
    # The minute of the UTC day, by arithmetic: the UTC date may lie past what Python holds.
    offset = when.utcoffset() or timedelta()
    if (when.hour * 60 + when.minute - offset // _MINUTE) % _DAY_MINUTES != _DAY_MINUTES - 1:
        return None, True
    return when.replace(microsecond=999_999), False


def is_date(text: str) -> bool:
    return parse_date(text) is not None


def is_date_time(text: str) -> bool:
    return parse_date_time(text) is not None


def is_email(text: str) -> bool:
    return len(text) <= 254 and _EMAIL.match(text) is not None


def _is_ip_literal(inside: str) -> bool:
    """What may stand between ``[`` and ``]`` as a host: an IPv6 address (no zone) or IPvFuture."""
    if _IP_FUTURE.match(inside) is not None:
        return True
    try:
        ipaddress.IPv6Address(inside)
    except ValueError:
        return False
    return "%" not in inside


def is_uri(text: str) -> bool:
    match = _URI.match(text)
    if match is None:
        return False
    host = match[2]  # None without an authority
    if host is not None and host.startswith("[") and not _is_ip_literal(host[1:-1]):
        return False
    return match[1].lower() not in _NEEDS_HOST or bool(host)


def non_uri_characters(text: str) -> list[str]:
    """The characters of ``text`` that a URI may not hold as they are (``%`` aside), as
    sorted ``U+XXXX``: what to %-escape (or, in a host name, write in punycode)."""
    return sorted({f"U+{ord(ch):04X}" for ch in _NOT_URI_CHAR.findall(text)})


FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "email": is_email,
    "uri": is_uri,
    "date": is_date,
    "date-time": is_date_time,
}

#: The shortest and longest answer each format accepts, in characters (None: no longest):
#: ``2026-01-31``, ``2026-01-31T18:30:00Z``, ``a@b.co`` (and 254 at most), ``a:``.
FORMAT_LENGTHS: dict[str, tuple[int, int | None]] = {
    "email": (6, 254),
    "uri": (2, None),
    "date": (10, 10),
    "date-time": (20, None),
}

FORMAT_MESSAGES: dict[str, str] = {
    "email": "must be an email address like name@example.com",
    "uri": "must be a full address, like https://example.com/page or mailto:ada@example.com",
    "date": "must be a date like 2026-12-31",
    "date-time": "must be a date and time with a time zone, like 2026-12-31T18:30:00Z",
}


class FormatMismatch(ValueError):
    """A text not of its field's format, raised from a pydantic validator with
    ``format_message``'s words: mcp-elicit's own, about the value, so a server that withholds
    its validators' messages (``redact_tool_errors``) still sends them."""


def format_message(fmt: str, text: str) -> str:
    """What is wrong with ``text``, which ``fmt`` refused: the format's message, or what in
    ``text`` a person cannot see or may not know is wrong: spaces around it (pasted
    text; a terminal keeps text as typed), characters an ``email`` or a ``uri`` cannot
    hold (named as ``U+XXXX``), what part of an ``email`` is wrong, a ``date`` with its year first written another way
    ("2025-2-3", "2025/02/03": how to write it, "2025-02-03"), and, for a ``date`` or
    ``date-time`` written the right way, which part names nothing real (a 30 February, a
    24:00, a +24:00 offset, a second 60 away from the end of a UTC day)."""
    if text != text.strip():
        if FORMAT_CHECKS[fmt](text.strip()):
            return "has spaces before or after it; take them out"
        return f"has spaces before or after it; it {FORMAT_MESSAGES[fmt]}"
    odd = non_uri_characters(text) if fmt == "uri" else []
    if odd:
        sent = _as_browsers_send(text)
        if sent is not None:
            return f"has characters an address cannot hold as they are ({', '.join(odd)}); write it {sent}"
        return (
            f"has characters an address cannot hold as they are ({', '.join(odd)}); it {FORMAT_MESSAGES[fmt]}"
        )
    beyond = sorted({f"U+{ord(ch):04X}" for ch in text if not ch.isascii()}) if fmt == "email" else []
    if beyond:
        return (
            f"has characters beyond ASCII ({', '.join(beyond)}), which an email address here cannot "
            f"hold; it {FORMAT_MESSAGES[fmt]}"
        )
    if fmt == "email":
        return _email_problem(text)
    if fmt == "date" and _DATE.match(text) is not None:
        return f"names a day that does not exist; it {FORMAT_MESSAGES['date']}"
    loose = _LOOSE_DATE.match(text) if fmt == "date" else None
    if loose is not None:
        year, _, month, day = loose.groups()
        written = f"{year}-{int(month):02}-{int(day):02}"
        if parse_date(written) is not None:
            return f"must be written YYYY-MM-DD, as {written}"
    if fmt == "date-time" and _DATE_TIME.match(text) is not None:
        return _date_time_problem(text.upper())
    return FORMAT_MESSAGES[fmt]


#: The longest address written out in a message as it should be sent.
_SENT_MAX = 120


def _as_browsers_send(text: str) -> str | None:
    """How ``text``, an address but for letters, digits, marks or symbols beyond ASCII (a
    host name in another script, an accented path), reads as a browser sends it: "as
    https://xn--r8jz45g.jp/", its host name in punycode, anything else beyond ASCII
    %-escaped in UTF-8 (``uri_spelling.as_sent``: nothing where that could name another
    address than the one typed). None when that is no address either, is longer than
    ``_SENT_MAX``, or ``text`` holds a space, a control or an invisible character (a person
    must see those, not have them escaped away)."""
    if any(ch.isascii() or unicodedata.category(ch)[0] not in "LMNPS" for ch in _NOT_URI_CHAR.findall(text)):
        return None
    sent = as_sent(text)
    if sent is None or len(sent) > _SENT_MAX or not is_uri(sent):
        return None
    return f"as {sent}, as browsers send it"


def _email_problem(text: str) -> str:
    """What is wrong with ``text`` (ASCII, refused as an ``email``), said as specifically as
    it can be (the format's message when nothing more is known): where the ``@`` is, what is
    before it (at most 64 characters, no dot at either end or two in a row, no quoted part),
    then what is after it (a domain name: labels of letters, digits and hyphens not at
    either end, a last one of two or more letters, no trailing dot, no address in brackets).
    Nothing of ``text`` is repeated but a short part of the domain that is known to be plain."""
    if text.endswith(".") and is_email(text[:-1]):
        return "ends with a dot; take it out"
    problem = _email_fault(text)
    return f"{problem}; it {FORMAT_MESSAGES['email']}" if problem else FORMAT_MESSAGES["email"]


#: The characters a dot-string email address may hold before its ``@`` (RFC 5321's atext and ".").
_ATEXT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~.-")


def _email_fault(text: str) -> str | None:
    """What in ``text`` an email address here cannot have, the first found, or None."""
    if len(text) > 254:
        return "is longer than 254 characters"
    local, at, domain = text.rpartition("@")
    if not at:
        return "has no @ between a name and a domain"
    if len(local) > 1 and local.startswith('"') and local.endswith('"'):
        return "has a quoted part before the @, which an email address here cannot hold"
    if "@" in local:
        return "has more than one @"
    if not local:
        return "has nothing before the @"
    if not domain:
        return "has nothing after the @"
    if len(local) > 64:
        return "has more than 64 characters before the @"
    odd = sorted({f"U+{ord(ch):04X}" for ch in local if ch not in _ATEXT})
    if odd:
        return f"has characters an email address cannot hold before the @ ({', '.join(odd)})"
    if local.startswith("."):
        return "has a dot at its start, where an email address cannot have one"
    if local.endswith("."):
        return "has a dot right before the @, where an email address cannot have one"
    if ".." in local:
        return "has two dots in a row before the @"
    if domain.startswith("[") and domain.endswith("]"):
        return "has an address in brackets after the @, where an email address here needs a domain name"
    odd = sorted({f"U+{ord(ch):04X}" for ch in domain if not (ch.isalnum() or ch in "-.")})
    if odd:
        return (
            f"has characters a domain name cannot hold after the @ ({', '.join(odd)}); a domain "
            "name holds letters, digits, hyphens and dots"
        )
    labels = domain.split(".")
    if "" in labels:
        return "has an empty part in the domain after the @ (a dot at its start or end, or two in a row)"
    if any(len(label) > 63 for label in labels):
        return "has a part of the domain longer than 63 characters"
    if any(label.startswith("-") or label.endswith("-") for label in labels):
        return "has a part of the domain that starts or ends with a hyphen"
    if len(labels) == 1:
        return (
            f"has a domain without a dot after the @ ({domain}), where an email address here needs "
            "a domain name like example.com"
        )
    if not is_email(f"a@example.{labels[-1]}"):
        return (
            f"ends in .{labels[-1]}, where an email address here needs a last part of two or more "
            "letters, like .com"
        )
    return None


def _date_time_problem(text: str) -> str:
    """Which part of ``text`` (upper case, of the right shape, refused) names nothing real."""
    if _read_date_time(text)[1]:
        return _LEAP_SECOND_MESSAGE
    if parse_date(text[:10]) is None:
        return f"names a day that does not exist ({text[:10]}); it {FORMAT_MESSAGES['date-time']}"
    clock = text[11:19]
    if clock[:2] > "23" or clock[3:5] > "59" or clock[6:8] > "60":
        return (
            f"names a time of day that does not exist ({clock}); hours go from 00 to 23, "
            "minutes and seconds from 00 to 59"
        )
    if not text.endswith("Z"):
        offset = text[-6:]
        return f"has a time zone offset that does not exist ({offset}); offsets go from -23:59 to +23:59"
    return FORMAT_MESSAGES["date-time"]
