"""The four string formats: what each accepts and refuses, and the temporal parsers."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from mcp_elicit.forms.formats import (
    FORMAT_CHECKS,
    format_message,
    is_date,
    is_date_time,
    is_email,
    is_uri,
    non_uri_characters,
    parse_date,
    parse_date_time,
)


@pytest.mark.parametrize(
    "text",
    [
        "name@example.com",
        "first.last+tag@sub.example.co.uk",
        "o'brien@example.ie",
        "user@xn--80ak6aa92e.xn--p1ai",
        "a@b.io",
        "!#$%&'*+/=?^_`{|}~-@example.com",
    ],
)
def test_email_accepts(text: str) -> None:
    assert is_email(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "name",
        "name@",
        "@example.com",
        "name@localhost",
        "name@example",
        "name@@example.com",
        "na me@example.com",
        "name@exa mple.com",
        ".name@example.com",
        "name.@example.com",
        "na..me@example.com",
        "name@-example.com",
        "name@example-.com",
        "name@example..com",
        "name@example.c",
        "name@example.123",
        '"quoted"@example.com',
        "a@b.com\n",
        "x" * 65 + "@example.com",
        "x@" + "a" * 250 + ".com",
        "josé@example.de",  # non-ASCII is idn-email, not email
        "jose@exämple.de",
        "ü@exämple.com",
        "a\u200b@example.com",
        "a@ex_ample.com",
        "a@b\u200b.com",
    ],
)
def test_email_refuses(text: str) -> None:
    assert not is_email(text)


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com",
        "https://example.com/page?q=1#top",
        "http://user@host:8080/x",
        "mailto:name@example.com",
        "urn:isbn:0451450523",
        "file:///etc/hosts",
        "custom+app.v2:thing",
        "HTTPS://EXAMPLE.COM",
        "https://example.com/a%20b?x=%C3%A4",
        "http://[::1]:8080/",
        "https://example.com/~me/(1);a=b,c&d=$e!*'",
        "tag:example.com,2026:thing",
        "https://user:pw@example.com:8080/p/;x=1?q=/a?b#f/g?h",
        "https://example.com:/",
        "https://[2001:db8::1]/",
        "https://[v7.a:b]/",
        "https://example.com/search?tags[]=a&tags[]=b#[1]",
        "x:/a//b",
        "file:///",
        # RFC 3986: scheme ":" hier-part, whose path may be empty (path-empty)
        "x:",
        "mailto:",
        "x:?q=1",
        "x:#top",
        "about:?",
    ],
)
def test_uri_accepts(text: str) -> None:
    assert is_uri(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "example.com",
        "/relative/path",
        "//example.com",
        "1http://x",
        "https:",
        "https:?q=1",
        "https://",
        ":",
        ":x",
        "x",
        "https:///path",
        "https://:80/",
        "http:example.com",
        "https://exa mple.com",
        "https://example.com/\x00",
        "mailto: x",
        "C:\\Windows\\system32",
        "https://example.com\\@evil.com",
        "https://example.com/<script>",
        'https://example.com/"x"',
        "https://example.com/{x}",
        "https://example.com/a|b",
        "https://example.com/%zz",
        "https://example.com/%4",
        "https://exämple.com/",
        "https://example.com/ä",
        "https://a\u200bb.com",
        # characters RFC 3986 allows, but not there: a URI parser refuses what these say
        "https://exa[mple.com/",
        "https://[::1/",
        "https://[::1]x/",
        "https://[not-an-address]/",
        "https://[::1%25eth0]/",
        "https://example.com/[x]",
        "urn:a[b]",
        "https://example.com:80a/",
        "http://2001:db8::1/",
        "https://a@b@example.com/",
        "https://example.com/a#b#c",
        "x://a/b[c]",
    ],
)
def test_uri_refuses(text: str) -> None:
    assert not is_uri(text)


@pytest.mark.parametrize("text", ["2026-12-31", "2024-02-29", "0001-01-01", "9999-12-31"])
def test_date_accepts(text: str) -> None:
    assert is_date(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-1-31",
        "20261231",
        "2026-12-31T00:00:00Z",
        "2025-02-29",
        "2026-13-01",
        "2026-00-10",
        "2026-12-32",
        "0000-01-01",
        "\uff12\uff10\uff12\uff16-12-31",
        " 2026-12-31",
        "2026-12-31\n",
        "31/12/2026",
    ],
)
def test_date_refuses(text: str) -> None:
    assert not is_date(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2026-12-31T18:30:00Z", datetime(2026, 12, 31, 18, 30, tzinfo=UTC)),
        ("2026-12-31t18:30:00z", datetime(2026, 12, 31, 18, 30, tzinfo=UTC)),
        (
            "2026-12-31T18:30:00.5+02:00",
            datetime(2026, 12, 31, 18, 30, 0, 500000, timezone(timedelta(hours=2))),
        ),
        (
            "2026-12-31T18:30:00.123456789-05:30",
            datetime(2026, 12, 31, 18, 30, 0, 123456, timezone(-timedelta(hours=5, minutes=30))),
        ),
        ("2026-12-31T18:30:00+00:00", datetime(2026, 12, 31, 18, 30, tzinfo=UTC)),
        ("2026-12-31T18:30:00-00:00", datetime(2026, 12, 31, 18, 30, tzinfo=UTC)),
    ],
)
def test_date_time_accepts(text: str, value: datetime) -> None:
    assert is_date_time(text)
    parsed = parse_date_time(text)
    assert parsed == value
    assert parsed is not None
    assert parsed.utcoffset() == value.utcoffset()


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-31",
        "2026-12-31T18:30:00",
        "2026-12-31 18:30:00Z",
        "2026-12-31T18:30Z",
        "2026-12-31T24:00:00Z",
        "2026-12-31T18:60:00Z",
        "2026-12-31T18:30:00+24:00",
        "2026-12-31T18:30:00+05:60",
        "2026-12-31T18:30:00+0500",
        "2026-12-31T18:30:00.Z",
        "2026-02-30T18:30:00Z",
        "2026-12-31T18:30:00ZZ",
    ],
)
def test_date_time_refuses(text: str) -> None:
    assert not is_date_time(text)
    assert parse_date_time(text) is None


EAST = timezone(timedelta(hours=5, minutes=30))
WEST = timezone(-timedelta(hours=5))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, 999999, UTC)),
        ("2016-12-31t23:59:60.5z", datetime(2016, 12, 31, 23, 59, 59, 999999, UTC)),
        ("2015-06-30T23:59:60+00:00", datetime(2015, 6, 30, 23, 59, 59, 999999, UTC)),
        ("2016-12-31T18:59:60-05:00", datetime(2016, 12, 31, 18, 59, 59, 999999, WEST)),
        ("2017-01-01T05:29:60.123+05:30", datetime(2017, 1, 1, 5, 29, 59, 999999, EAST)),
        # the UTC day the leap second ends lies outside what Python holds: still its last second
        ("0001-01-01T00:59:60+01:00", datetime(1, 1, 1, 0, 59, 59, 999999, timezone(timedelta(hours=1)))),
        (
            "9999-12-31T22:59:60-01:00",
            datetime(9999, 12, 31, 22, 59, 59, 999999, timezone(-timedelta(hours=1))),
        ),
    ],
)
def test_a_leap_second_is_the_last_microsecond_before_it(text: str, value: datetime) -> None:
    """RFC 3339 allows ``:60`` as the last second of a UTC day, in any offset. Python cannot
    hold it, so the value built is the instant just before it, in the offset sent: same
    day, same minute, and no earlier than any other time given for that second."""
    assert is_date_time(text)
    parsed = parse_date_time(text)
    assert parsed == value
    assert parsed is not None
    assert parsed.utcoffset() == value.utcoffset()
    assert parsed >= datetime.fromisoformat(text.upper().replace(":60", ":59"))


@pytest.mark.parametrize(
    "text",
    [
        "2016-12-31T23:58:60Z",  # not the day's last minute
        "2016-12-31T22:59:60Z",
        "2016-12-31T12:00:60Z",
        "2016-12-31T23:59:60-05:00",  # 04:59:60 in UTC
        "2016-12-31T23:59:60+01:00",  # 22:59:60 in UTC
        "2017-01-01T05:29:60+05:00",  # 00:29:60 in UTC
        "2016-12-31T23:59:61Z",
        "2016-12-31T23:60:00Z",
        "2016-02-30T23:59:60Z",
        "2016-12-31T23:59:60",
        "2016-12-31T23:59:60.Z",
        "2016-12-31T18:59:60-05:60",
    ],
)
def test_second_60_is_refused_where_no_leap_second_can_be(text: str) -> None:
    assert not is_date_time(text)
    assert parse_date_time(text) is None


def test_parse_date() -> None:
    assert parse_date("2026-12-31") == date(2026, 12, 31)
    assert parse_date("2026-02-30") is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("https://example.com/a?b=c#d", []),
        ("https://example.com/%zz", []),  # a bad escape is not a bad character
        ("https://exa mple.com/\n", ["U+000A", "U+0020"]),
        ("https://bücher.example/\u202e\\", ["U+005C", "U+00FC", "U+202E"]),
    ],
)
def test_the_characters_a_uri_may_not_hold_are_named(text: str, named: list[str]) -> None:
    assert non_uri_characters(text) == named
    assert not named or not is_uri(text)


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        # Pasted with a space (the terminal keeps text as typed): the space is what is wrong.
        ("date", "2026-12-31 ", "has spaces before or after it; take them out"),
        ("email", " ada@example.com", "has spaces before or after it; take them out"),
        ("uri", "https://example.com/\t", "has spaces before or after it; take them out"),
        ("date", " 31-12-2026", "has spaces before or after it; it must be a date like 2026-12-31"),
        # A date readable only one way, written otherwise than YYYY-MM-DD: how to write it.
        ("date", "2025-2-3", "must be written YYYY-MM-DD, as 2025-02-03"),
        ("date", "2025/02/03", "must be written YYYY-MM-DD, as 2025-02-03"),
        ("date", "2025.12.3", "must be written YYYY-MM-DD, as 2025-12-03"),
        ("date", "2025-2-30", "must be a date like 2026-12-31"),  # no such day
        ("date", "3/2/2025", "must be a date like 2026-12-31"),  # day or month first?
        (
            "email",
            "jörg@bücher.example",
            "has characters beyond ASCII (U+00F6, U+00FC), which an email address here cannot "
            "hold; it must be an email address like name@example.com",
        ),
        (
            "uri",
            "https://example.com/a b",
            "has characters an address cannot hold as they are (U+0020); "
            "it must be a full address, like https://example.com/page or mailto:ada@example.com",
        ),
        # An address a browser takes as typed (a host name in another script, an accented
        # path): how to write it, as browsers send it. Not for a space, a control or an
        # invisible character, which must be seen, not escaped away.
        (
            "uri",
            "https://例え.jp/café?q=ü#ß",
            "has characters an address cannot hold as they are (U+00DF, U+00E9, U+00FC, U+3048, U+4F8B); "
            "write it as https://xn--r8jz45g.jp/caf%C3%A9?q=%C3%BC#%C3%9F, as browsers send it",
        ),
        (
            "uri",
            "https://exa\u200bmple.com/é",
            "has characters an address cannot hold as they are (U+00E9, U+200B); "
            "it must be a full address, like https://example.com/page or mailto:ada@example.com",
        ),
        (
            "uri",
            "https://例え..jp/",  # no host name IDNA takes
            "has characters an address cannot hold as they are (U+3048, U+4F8B); "
            "it must be a full address, like https://example.com/page or mailto:ada@example.com",
        ),
        (
            "email",
            "ada",
            "has no @ between a name and a domain; it must be an email address like name@example.com",
        ),
        (
            "email",
            '"ada lovelace"@example.com',
            "has a quoted part before the @, which an email address here cannot hold; "
            "it must be an email address like name@example.com",
        ),
        (
            "email",
            "ada@[192.0.2.1]",
            "has an address in brackets after the @, where an email address here needs a domain "
            "name; it must be an email address like name@example.com",
        ),
        (
            "email",
            "ada@localhost",
            "has a domain without a dot after the @ (localhost), where an email address here needs "
            "a domain name like example.com; it must be an email address like name@example.com",
        ),
        (
            "uri",
            "example.com",
            "must be a full address, like https://example.com/page or mailto:ada@example.com",
        ),
    ],
)
def test_a_refused_answer_is_told_what_in_it_is_wrong(fmt: str, text: str, message: str) -> None:
    assert not FORMAT_CHECKS[fmt](text)
    assert format_message(fmt, text) == message


def test_a_long_refused_email_is_not_repeated_in_its_message() -> None:
    assert (
        format_message("email", "a@" + "b" * 300)
        == "is longer than 254 characters; it must be an email address like name@example.com"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "a@b.c",
            "ends in .c, where an email address here needs a last part of two or more letters, like .com",
        ),
        (
            "name@example.123",
            "ends in .123, where an email address here needs a last part of two or more letters, like .com",
        ),
        ("a.@b.com", "has a dot right before the @, where an email address cannot have one"),
        (".a@b.com", "has a dot at its start, where an email address cannot have one"),
        ("a..b@c.com", "has two dots in a row before the @"),
        (
            "a@b_c.com",
            "has characters a domain name cannot hold after the @ (U+005F); a domain name holds letters, "
            "digits, hyphens and dots",
        ),
        ("a@@b.com", "has more than one @"),
        ("@b.com", "has nothing before the @"),
        ("a@", "has nothing after the @"),
        ("x" * 65 + "@example.com", "has more than 64 characters before the @"),
        ("x@" + "a" * 64 + ".com", "has a part of the domain longer than 63 characters"),
        ("na me@example.com", "has characters an email address cannot hold before the @ (U+0020)"),
        ("a\x1b[31m@b.com", "has characters an email address cannot hold before the @ (U+001B, U+005B)"),
        ("a@-b.com", "has a part of the domain that starts or ends with a hyphen"),
        (
            "a@b..com",
            "has an empty part in the domain after the @ (a dot at its start or end, or two in a row)",
        ),
        (
            "a@.b.com",
            "has an empty part in the domain after the @ (a dot at its start or end, or two in a row)",
        ),
    ],
)
def test_a_refused_email_is_told_what_part_is_wrong(text: str, problem: str) -> None:
    """The one message for the terminal and the page says which part to fix, not only
    "must be an email address like ...", and repeats no control character."""
    assert not FORMAT_CHECKS["email"](text)
    assert format_message("email", text) == f"{problem}; it must be an email address like name@example.com"


def test_an_email_ending_in_a_dot_is_told_to_take_it_out() -> None:
    assert not FORMAT_CHECKS["email"]("a@b.com.")
    assert format_message("email", "a@b.com.") == "ends with a dot; take it out"
