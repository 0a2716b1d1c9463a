"""URL consent: what a person is told before a client opens a URL a server sent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.client.url_consent import judge_url
from tests.support.deadline import within


@pytest.mark.parametrize(
    ("url", "host", "domain", "codes"),
    [
        ("https://login.example.com/a?b=c#d", "login.example.com", "example.com", ()),
        ("https://login.example.co.uk/a", "login.example.co.uk", "example.co.uk", ()),
        ("https://a.b.github.io/x", "a.b.github.io", "b.github.io", ()),
        # the whole Public Suffix List: suffixes a short built-in list would not know,
        # private ones (each bucket is someone's site), wildcards and their exceptions
        ("https://login.example.edu.pl/", "login.example.edu.pl", "example.edu.pl", ()),
        ("https://evil.s3.amazonaws.com/x", "evil.s3.amazonaws.com", "evil.s3.amazonaws.com", ()),
        ("https://a.b.example.ck/", "a.b.example.ck", "b.example.ck", ()),
        ("https://www.ck/", "www.ck", "www.ck", ()),
        ("https://sub.пример.рф/", "sub.пример.рф", "пример.рф", ("idn",)),
        ("https://co.uk/", "co.uk", "co.uk", ()),  # a public suffix is its own domain
        ("HTTPS://Login.Example.COM/", "login.example.com", "example.com", ()),
        ("https://example.com./", "example.com", "example.com", ()),
        ("http://127.0.0.1:8000/cb", "127.0.0.1", None, ("this-computer",)),
        ("http://localhost:3000/cb", "localhost", "localhost", ("this-computer",)),
        ("http://app.localhost/cb", "app.localhost", "app.localhost", ("this-computer",)),
        ("http://[::1]:8080/", "[::1]", None, ("this-computer",)),
        ("https://127.1/", "127.0.0.1", None, ("ip-host-form", "this-computer")),
        ("http://example.com/", "example.com", "example.com", ("not-https",)),
        ("https://203.0.113.5/pay", "203.0.113.5", None, ("ip-host",)),
        ("http://203.0.113.5/", "203.0.113.5", None, ("ip-host", "not-https")),
        ("https://[2001:db8::1]/", "[2001:db8::1]", None, ("ip-host",)),
        ("https://3405803781/", "203.0.113.5", None, ("ip-host-form", "ip-host")),
        ("https://0xCB.0.113.5/", "203.0.113.5", None, ("ip-host-form", "ip-host")),
        # a name that imitates a Latin one is shown as DNS has it, as browsers do
        ("https://xn--pple-43d.com/", "xn--pple-43d.com", "xn--pple-43d.com", ("punycode", "mixed-script")),
        ("https://аpple.com/", "xn--pple-43d.com", "xn--pple-43d.com", ("idn", "mixed-script")),
        ("https://login.аррӏе.com/", "login.xn--80ak6aa92e.com", "xn--80ak6aa92e.com", ("idn", "lookalike")),
        (
            "https://xn--80ak6aa92e.com/",
            "xn--80ak6aa92e.com",
            "xn--80ak6aa92e.com",
            ("punycode", "lookalike"),
        ),
        ("https://οκ.com/", "xn--vxaj.com", "xn--vxaj.com", ("idn", "lookalike")),
        ("https://москва.com/", "москва.com", "москва.com", ("idn",)),  # not all twins of Latin
        ("https://аррӏе.рф/", "аррӏе.рф", "аррӏе.рф", ("idn",)),  # Cyrillic is expected under .рф
        ("https://例え.jp/", "例え.jp", "例え.jp", ("idn",)),
        ("https://münchen.de/", "münchen.de", "münchen.de", ("idn",)),
        # UTS 46 non-transitional, as browsers: ß and final sigma stay (IDNA 2003 made "ss"
        # of it, another site than the one the browser opens); full-width letters fold
        ("https://straße.de/", "straße.de", "straße.de", ("idn",)),
        ("https://xn--strae-oqa.de/", "straße.de", "straße.de", ("punycode",)),
        ("https://ｅｘａｍｐｌｅ.com/", "example.com", "example.com", ("idn",)),
        ("https://%65vil.com/", "evil.com", "evil.com", ("encoded-host",)),
        ("https:evil.com/", "evil.com", "evil.com", ("odd-syntax",)),
        ("https:///evil.com/", "evil.com", "evil.com", ("odd-syntax",)),
    ],
)
def test_hosts_domains_and_warnings(url: str, host: str, domain: str | None, codes: tuple[str, ...]) -> None:
    verdict = judge_url(url)
    assert not verdict.refused
    assert verdict.host == host
    assert verdict.registrable_domain == domain
    assert verdict.codes == codes
    assert "".join(p.text for p in verdict.parts) == url


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("javascript:alert(document.cookie)", "scheme"),
        ("JavaScript:alert(1)", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("data:text/html,<script>alert(1)</script>", "scheme"),
        ("ftp://example.com/x", "scheme"),
        ("//example.com/x", "malformed"),
        ("example.com", "malformed"),
        ("https://", "no-host"),
        ("https:///", "no-host"),
        ("https://exa mple.com/", "hidden-characters"),
        ("https://example.com/\u202egnp.exe", "hidden-characters"),
        ("https://exam\u200bple.com/", "hidden-characters"),
        ("https://example.com/\x1b[2J", "hidden-characters"),
        ("https://example.com/\ud800", "hidden-characters"),
        # letters that show as nothing: Hangul fillers, in a path or a query
        ("https://example.com/login\u3164/../evil", "hidden-characters"),
        ("https://example.com/?next=\u115fhttps://evil.example", "hidden-characters"),
        ("https://example.com/a\u1160b", "hidden-characters"),
        ("https://example.com/?q=\uffa0", "hidden-characters"),
        ("https://example.com/a\u034fb", "hidden-characters"),
        ("https://example.com/a\u17b4b", "hidden-characters"),
        ("https://example.com:99999/", "malformed"),
        ("https://example.com:80a/", "malformed"),
        ("https://a..com/", "malformed"),
        ("https://1.2.3.4.5/", "malformed"),
        ("https://256.1.1.1/", "malformed"),
        ("https://[::1/", "malformed"),
        ("https://xn--zz/", "malformed"),
        ("https://xn--strasse-/", "malformed"),
        ("https://😀.example/", "malformed"),  # not a letter UTS 46 allows
        # characters no host may hold, which a browser refuses to open
        ("https://example.com:80:80/", "malformed"),
        ("https://exa<mple.com/", "malformed"),
        ("https://exa>mple.com/", "malformed"),
        ("https://a|b.example/", "malformed"),
        ("https://a^b.example/", "malformed"),
        ("https://a[b.example/", "malformed"),
        ("https://a]b.example/", "malformed"),
    ],
)
def test_refused(url: str, code: str) -> None:
    verdict = judge_url(url)
    assert verdict.refused
    assert verdict.codes == (code,)
    assert verdict.warnings[0].text


@pytest.mark.parametrize(
    "host",
    ["\u00e9." * 500_000 + "example", "a\u0430." * 300_000 + "example", "a." * 500_000 + "example"],
)
def test_a_host_longer_than_any_site_name_is_refused_before_it_is_read(host: str) -> None:
    # A server's URL with a megabyte of host: each label was mapped and checked (IDNA,
    # scripts), twenty seconds a megabyte, minutes for what a message can carry.
    with within(60, "judging a URL with a megabyte of host"):
        verdict = judge_url(f"https://{host}/login")
    assert verdict.refused
    assert verdict.codes == ("malformed",)
    assert "longer than any site name" in verdict.warnings[0].text


def test_a_long_host_within_the_limit_is_read() -> None:
    host = ".".join(["a" * 63] * 3) + ".example"  # 200 characters: DNS allows 253
    verdict = judge_url(f"https://{host}/")
    assert not verdict.refused
    assert verdict.site == f"{'a' * 63}.example"


def test_a_second_colon_in_the_host_does_not_make_another_site() -> None:
    """``evil.example:bank.example:443`` is no host a browser opens (a port is digits), but
    read as host ``evil.example:bank.example`` it showed the site ``example:bank.example``,
    which a person reads as bank.example: it is refused, naming the character."""
    verdict = judge_url("https://evil.example:bank.example:443/login")
    assert verdict.refused
    assert verdict.codes == ("malformed",)
    assert "':'" in verdict.warnings[0].text
    assert verdict.site == ""


@pytest.mark.parametrize(
    ("url", "userinfo", "host"),
    [
        ("https://bank.com@evil.example/login", "bank.com", "evil.example"),
        ("https://bank.example.com@evil.example/login", "bank.example.com", "evil.example"),
        ("https://user:pw@example.com/", "user:pw", "example.com"),
        ("https://@example.com/", "", "example.com"),
        ("https://a@b@login.evil.co.uk:8443/x", "a@b", "login.evil.co.uk"),
        ("http://admin:admin@127.0.0.1:8080/", "admin:admin", "127.0.0.1"),
    ],
)
def test_a_user_name_or_password_before_the_host_is_refused(url: str, userinfo: str, host: str) -> None:
    """No page a server may send needs one (the spec bars credentials in the URL), and the
    part before '@' is the classic way to pass one site off as another: refused, with the
    real destination named, and still read in full so that it can be shown."""
    verdict = judge_url(url)
    assert verdict.refused
    assert [w.code for w in verdict.warnings if w.refuses] == ["userinfo"]
    assert verdict.userinfo == userinfo and verdict.host == host
    warning = verdict.warnings[0]
    assert f"({userinfo})" in warning.text and f"really goes to {host}" in warning.text
    assert "never opened" in warning.text
    assert [p.role for p in verdict.parts][:2] == ["scheme", "userinfo"]
    assert "".join(p.text for p in verdict.parts) == url


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://evil.example\\@bank.com/", "evil.example"),
        ("https://evil.example\\bank.com/", "evil.example"),
        ("https:\\\\evil.example/login", "evil.example"),
        ("https:/\\evil.example/login", "evil.example"),
        ("https://evil.example:443\\@bank.com/", "evil.example"),
    ],
)
def test_a_backslash_before_the_path_is_refused(url: str, host: str) -> None:
    """A browser reads a backslash there as a slash, other programs as part of the name
    (https://evil.example\\@bank.com goes to evil.example in one, to bank.com in the other):
    where it goes depends on who opens it, and it reads as the other site. Refused, naming
    where a browser would go."""
    verdict = judge_url(url)
    assert verdict.refused
    assert verdict.codes == ("backslash",)
    assert verdict.host == host
    (warning,) = verdict.warnings
    assert f"a browser goes to {host}" in warning.text and "never opened" in warning.text
    assert "".join(p.text for p in verdict.parts) == url


def test_a_backslash_in_the_path_is_only_a_path() -> None:
    verdict = judge_url("https://example.com/a\\b")
    assert not verdict.refused and verdict.codes == ()


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("http://127.0.0.1:8000/cb", "127.0.0.1"),
        ("http://localhost:8888/api/kernels", "localhost"),
        ("http://[::1]/", "[::1]"),
        # IPv4 loopback written as IPv6, and the "any" addresses browsers connect here
        ("http://[::ffff:127.0.0.1]:8080/admin", "[::ffff:7f00:1]"),
        ("http://0.0.0.0:8080/admin", "0.0.0.0"),
        ("http://0:8080/admin", "0.0.0.0"),
        ("http://[::]:8080/admin", "[::]"),
    ],
)
def test_a_page_on_this_computer_is_flagged(url: str, where: str) -> None:
    """Allowed (a local server's own page is one), but said: a remote server sending the
    person to their own computer reaches what runs there (a development server, say)."""
    verdict = judge_url(url)
    assert not verdict.refused and verdict.loopback
    (warning,) = [w for w in verdict.warnings if w.code == "this-computer"]
    assert f"on this computer ({where})" in warning.text


@pytest.mark.parametrize(
    ("server", "flagged"),
    [
        ("mcp-elicit serve app.py", False),  # stdio: the server runs here
        ("http://127.0.0.1:8765/mcp", False),
        ("http://localhost:8000/mcp", False),
        ("http://[::1]:8000/mcp", False),
        ("http://0.0.0.0:8000/mcp", False),  # where a server bound to every interface is reached
        ("https://mcp.example.com/mcp", True),
        ("https://10.0.0.5/mcp", True),
        ("http://127.0.0.1.example.com/mcp", True),
    ],
)
def test_a_page_on_this_computer_is_flagged_only_when_the_server_is_elsewhere(
    server: str, flagged: bool
) -> None:
    """A server on this computer (a command, or a loopback URL) sending the person to a
    page here is what a local server does (the demo's pages): no warning for it. A remote
    one doing so reaches what runs on the person's computer: said."""
    verdict = judge_url("http://127.0.0.1:8765/mcp-elicit/flows/x?t=y", server=server)
    assert not verdict.refused and verdict.loopback
    assert ("this-computer" in [w.code for w in verdict.warnings]) is flagged
    assert judge_url("https://user@127.0.0.1/", server=server).refused  # refusals stay


@pytest.mark.parametrize(
    "url", ["http://192.168.1.1/admin", "https://10.0.0.5/", "http://169.254.169.254/latest"]
)
def test_an_address_on_a_private_network_says_so(url: str) -> None:
    verdict = judge_url(url)
    assert not verdict.refused
    (warning,) = [w for w in verdict.warnings if w.code == "ip-host"]
    assert "your own network" in warning.text


def test_the_texts_name_the_real_destination() -> None:
    punycode = judge_url("https://xn--pple-43d.com/")
    assert "аpple.com" in punycode.warnings[0].text and "xn--pple-43d.com" in punycode.warnings[0].text
    mixed = punycode.warnings[1].text
    assert "Cyrillic" in mixed and "Latin" in mixed


def test_parts_highlight_the_domain_inside_the_host() -> None:
    verdict = judge_url("https://login.evil.co.uk:8443/x")
    assert [(p.role, p.text) for p in verdict.parts] == [
        ("scheme", "https://"),
        ("host", "login."),
        ("domain", "evil.co.uk"),
        ("port", ":8443"),
        ("rest", "/x"),
    ]
    assert verdict.port == 8443 and verdict.userinfo is None


def test_to_json() -> None:
    out = judge_url("http://203.0.113.5/").to_json()
    assert out["refused"] is False and out["ip"] is True
    assert [w["code"] for w in out["warnings"]] == ["ip-host", "not-https"]


@given(st.text(max_size=80))
def test_any_string_gets_a_verdict_whose_parts_rebuild_it(text: str) -> None:
    verdict = judge_url(text)
    assert "".join(p.text for p in verdict.parts) == text
    assert verdict.refused or verdict.scheme in ("http", "https")


@given(st.from_regex(r"https?://[a-z0-9.\-@:%\[\]\\/]{0,40}", fullmatch=True))
def test_urlish_strings_never_raise(url: str) -> None:
    verdict = judge_url(url)
    if not verdict.refused:
        assert verdict.host
        assert "".join(p.text for p in verdict.parts) == url


def test_the_ascii_host_is_where_the_browser_goes() -> None:
    verdict = judge_url("https://straße.de/login")
    assert verdict.ascii_host == "xn--strae-oqa.de"  # not strasse.de, someone else's site
    assert "xn--strae-oqa.de" in verdict.warnings[0].text


def test_a_port_of_thousands_of_digits_is_refused_and_quoted_short() -> None:
    # int() refuses over 4300 digits: judging such a URL raised a ValueError.
    verdict = judge_url("https://example.com:" + "8" * 5000 + "/login")
    assert verdict.refused
    assert verdict.codes == ("malformed",)
    assert "invalid port (888888888888" in verdict.warnings[0].text
    assert len(verdict.warnings[0].text) < 200


def test_a_port_with_leading_zeros_is_still_its_number() -> None:
    assert judge_url("https://example.com:" + "0" * 5000 + "8443/").port == 8443


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("https://127.0.0.\u00b9/", "127.0.0.1"),  # superscript one: int() cannot read it
        ("https://127.0.0.\u2460/", "127.0.0.1"),  # circled digit one
        ("https://0\uff587f.1/", "127.0.0.1"),  # fullwidth x: 0x7f.1
        ("http://192.168.0.\u00b9/", "192.168.0.1"),
    ],
)
def test_an_ip_address_written_with_digits_the_name_mapping_makes_ascii_is_an_ip(
    url: str, where: str
) -> None:
    # A browser maps the host (UTS 46) before it looks for an IPv4 address: these go to
    # the IP, which was judged a name, without the warnings an IP gets.
    verdict = judge_url(url)
    assert verdict.ip and verdict.host == verdict.ascii_host == where
    assert "ip-host-form" in verdict.codes
    assert ("this-computer" in verdict.codes) == where.startswith("127.")


@pytest.mark.parametrize(
    ("url", "code", "host"),
    [
        # int() takes a sign and underscores, which no IPv4 number has: "0-5" was read as -5
        # (an error for ipaddress, raised out of judging), "01_7" as octal 15
        ("https://0-5/", None, "0-5"),
        ("https://0x-5/", None, "0x-5"),
        ("https://0+5.example/", "malformed", None),  # not an IP; and no site name has a "+"
        ("https://01_7.1/", "malformed", None),
        ("https://0x1_f.1/", "malformed", None),
        ("https://1.+2/", "malformed", None),
        ("https://08/", "malformed", None),  # all digits: an IPv4 number, but not octal
        ("https://1.09/", "malformed", None),
    ],
)
def test_what_int_reads_but_no_ipv4_number_is_is_not_an_ip(
    url: str, code: str | None, host: str | None
) -> None:
    verdict = judge_url(url)
    assert not verdict.ip
    if code is not None:
        assert verdict.refused and verdict.codes == (code,)
    else:
        assert verdict.host == host


_LABEL_63_PUNY = "\u00e4" * 57  # to DNS: xn--4ca + 56 a, 63 characters
_NAME_253 = ".".join(["a" * 63] * 3) + "." + "a" * 61


@pytest.mark.parametrize(
    "host",
    [
        "a" * 63 + ".example",
        _NAME_253,
        _NAME_253 + ".",  # the trailing dot is not counted
        _LABEL_63_PUNY + ".example",
        "xn--4ca" + "a" * 56 + ".example",  # the same, written in punycode
        ".".join([_LABEL_63_PUNY] * 3) + "." + "a" * 61,  # 253 to DNS, 235 as written
    ],
)
def test_a_name_dns_can_hold_is_read(host: str) -> None:
    verdict = judge_url(f"https://{host}/")
    assert not verdict.refused, verdict.warnings
    assert len(verdict.ascii_host) <= 253


@pytest.mark.parametrize(
    ("host", "length", "limit"),
    [
        ("a" * 64 + ".example", 64, "63 between two dots"),
        ("login." + "B" * 64 + ".example", 64, "63 between two dots"),
        ("\u00e4" * 58 + ".example", 64, "63 between two dots"),  # xn--4ca + 57 a
        ("xn--4ca" + "a" * 57 + ".example", 64, "63 between two dots"),
        (_NAME_253 + "a", 254, "253 in all"),
        (_NAME_253 + "a.", 254, "253 in all"),
        (".".join([_LABEL_63_PUNY] * 3) + "." + "a" * 62, 254, "253 in all"),  # 236 as written
    ],
)
def test_a_name_longer_than_dns_allows_is_refused(host: str, length: int, limit: str) -> None:
    """No browser can find such a site: a label over 63 characters or a name over 253, as
    DNS has them (an international name counted in punycode)."""
    verdict = judge_url(f"https://{host}/login")
    assert verdict.refused
    assert verdict.codes == ("malformed",)
    text = verdict.warnings[0].text
    assert f"is {length} characters long as DNS has it" in text
    assert f"DNS allows at most {limit}" in text
    assert "ask whoever runs the server" in text


@pytest.mark.parametrize(
    ("url", "code", "says"),
    [
        # full-width letters fold to ASCII: what was sent, and what DNS reads, both shown
        (
            "https://ｅｖｉｌ.example/",
            "idn",
            "The host is written with non-ASCII characters (ｅｖｉｌ.example); DNS reads it as evil.example.",
        ),
        (
            "https://ＭÜNCHEN.de/",
            "idn",
            "The host is written with non-ASCII characters (ＭÜNCHEN.de, which reads as münchen.de); "
            "DNS reads it as xn--mnchen-3ya.de.",
        ),
        (
            "https://münchen.de/",
            "idn",
            "The host is written with non-ASCII characters (münchen.de); DNS reads it as xn--mnchen-3ya.de.",
        ),
        # an ideographic full stop is a dot to DNS
        (
            "https://ＥＶＩＬ。example/",
            "idn",
            "The host is written with non-ASCII characters (ＥＶＩＬ。example); DNS reads it as evil.example.",
        ),
        # punycode beside full-width letters: the host as sent, not as mapped, then what it reads as
        (
            "https://ＥＶＩＬ.xn--p1ai/",
            "punycode",
            "The host is written in punycode (ＥＶＩＬ.xn--p1ai); it reads as evil.рф, and DNS reads it as "
            "evil.xn--p1ai.",
        ),
        (
            "https://xn--mnchen-3ya.ｄｅ/",
            "punycode",
            "The host is written in punycode (xn--mnchen-3ya.ｄｅ); it reads as münchen.de, and DNS reads it "
            "as xn--mnchen-3ya.de.",
        ),
        # all ASCII: as before
        (
            "https://xn--mnchen-3ya.de/",
            "punycode",
            "The host is written in punycode (xn--mnchen-3ya.de); it reads as münchen.de.",
        ),
    ],
)
def test_the_idn_and_punycode_warnings_show_the_host_as_sent_and_what_dns_reads(
    url: str, code: str, says: str
) -> None:
    verdict = judge_url(url)
    (warning,) = [w for w in verdict.warnings if w.code == code]
    assert warning.text.startswith(says), warning.text
