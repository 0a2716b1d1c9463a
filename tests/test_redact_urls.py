"""``redact_urls``: what a span, a log line or an error message may say about a URL."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcp_elicit.telemetry import redact_urls
from mcp_elicit.telemetry_attributes import Traced, redact_uri
from mcp_elicit.url_redaction import hidden_parts, redact_word


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("no url here", "no url here"),
        ("GET https://example.com/a/b failed", "GET https://example.com/a/b failed"),
        (
            "see https://user:pw@example.com/a?key=1#frag and more",
            "see https://REDACTED:REDACTED@example.com/a?REDACTED and more",
        ),
        (
            "'http://u@h:80/p#x' then \"ftp://a:b@c/d?e\"",
            "'http://REDACTED@h:80/p#REDACTED' then \"ftp://REDACTED:REDACTED@c/d?REDACTED\"",
        ),
        (
            "two: https://a.example/x?t=1 https://b.example/y#z",
            "two: https://a.example/x?REDACTED https://b.example/y#REDACTED",
        ),
        ("svn+ssh://me@host/repo?x", "svn+ssh://REDACTED@host/repo?REDACTED"),
        ("foo.bar.https://u:p@h/?q", "foo.bar.https://REDACTED:REDACTED@h/?REDACTED"),
        ("https://host?q=1&r=2", "https://host?REDACTED"),
        ("https://user@host/path/with@sign?q", "https://REDACTED@host/path/with@sign?REDACTED"),
        ("https://host/p@q?x", "https://host/p@q?REDACTED"),
        ("https://me:p@ss@host/p?q", "https://REDACTED:REDACTED@host/p?REDACTED"),  # to the last "@"
        ("http://[::1]:8080/x?y", "http://[::1]:8080/x?REDACTED"),
        ("https://a/x?u=https://b:c@d", "https://a/x?REDACTED"),
        (
            "https://a:b@h/p?q\tnext https://c@d",
            "https://REDACTED:REDACTED@h/p?REDACTED\tnext https://REDACTED@d",
        ),
        ("x http:// y", "x http:// y"),
        # whatever stands before "://" (these were once left whole)
        ("_a://u:p@h/?q", "_a://REDACTED:REDACTED@h/?REDACTED"),
        ("id1https://u:p@h?q", "id1https://REDACTED:REDACTED@h?REDACTED"),
        ("1http://u:p@h?q", "1http://REDACTED:REDACTED@h?REDACTED"),
    ],
)
def test_user_info_query_and_fragment_are_left_out(text: str, shown: str) -> None:
    assert redact_urls(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<https://h/x?k=S>", "<https://h/x?REDACTED>"),
        ("<https://u:p@h/x#f>, then", "<https://REDACTED:REDACTED@h/x#REDACTED>, then"),
        (
            "[approve](https://h/approve?token=S]; cancelling",
            "[approve](https://h/approve?REDACTED]; cancelling",
        ),
        ("(see https://h/x?k=S).", "(see https://h/x?REDACTED)."),
        ("{https://h/x#S}: done", "{https://h/x#REDACTED}: done"),
        (
            "open https://h/x?k=S! Or https://h/y?k=T? No.",
            "open https://h/x?REDACTED! Or https://h/y?REDACTED? No.",
        ),
        ("'https://h/x?k=S.'", "'https://h/x?REDACTED.'"),
        ("https:/h/x?k=S)", "https:/h/x?REDACTED)"),
        ("http://[::1]:8080/x?y]", "http://[::1]:8080/x?REDACTED]"),
        # a bracket the URL opens is its own; so is a path's (nothing of it is redacted)
        ("(https://h/x?k=(S))", "(https://h/x?REDACTED)"),
        ("https://en.example/wiki/A_(b)?k=S", "https://en.example/wiki/A_(b)?REDACTED"),
        ("https://h/x? y", "https://h/x? y"),
    ],
)
def test_what_ends_a_url_in_prose_is_kept_after_it(text: str, shown: str) -> None:
    assert redact_urls(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "https://h/x?k=S)ECRET",
        "https://h/x?k=S>ECRET and",
        "<https://h/x?k=S>ECRET>",
        "https://h/x?k=S];ECRET",
        "https://h/x#S.ECRET",
        "https://h/x?k=S.!?;:.,ECRET",
        "//h/x?k=S)ECRET",
    ],
)
def test_such_a_character_inside_the_query_keeps_nothing_after_it_visible(text: str) -> None:
    assert "ECRET" not in redact_urls(text)


def test_only_a_few_such_characters_are_kept_the_rest_is_the_urls() -> None:
    assert redact_urls("https://h/x?k=)]}>.,;:") == "https://h/x?REDACTED.,;:"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("relative //cdn.example/f?sig=S failed", "relative //cdn.example/f?REDACTED failed"),
        ("'//u:p@h/x#S'", "'//REDACTED:REDACTED@h/x#REDACTED'"),
        ("(//h/x?k=S).", "(//h/x?REDACTED)."),
        ("//[::1]/x?k", "//[::1]/x?REDACTED"),
        ("'//:PW@h/x' or //~me:PW@h", "'//REDACTED:REDACTED@h/x' or //REDACTED:REDACTED@h"),
        # not a URL without its scheme: "//" inside a word, a path, a comment
        ("a//b?c", "a//b?c"),
        ("/a///b?c", "/a///b?c"),
        ("// why? because", "// why? because"),
        ("C:\\//x?y", "C:\\//x?y"),
    ],
)
def test_a_url_without_its_scheme_is_redacted_too(text: str, shown: str) -> None:
    assert redact_urls(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # an http(s) URL with more than two slashes: a browser opens https:///me:pw@h/ as
        # https://me:pw@h/, so its authority follows them all
        ("https:///me:PW@h/", "https:///REDACTED:REDACTED@h/"),
        ("open HTTPS:////me:PW@h/p?k=S now", "open HTTPS:////REDACTED:REDACTED@h/p?REDACTED now"),
        ("(http:///\\me:PW@h/).", "(http:///\\REDACTED:REDACTED@h/)."),
        ("id1https:///me:PW@h", "id1https:///REDACTED:REDACTED@h"),
        # a URL another's path holds: its user information is redacted too
        ("https://h/a://me:PW@x/", "https://h/a://REDACTED:REDACTED@x/"),
        ("see https://proxy/https://me:PW@x/p.", "see https://proxy/https://REDACTED:REDACTED@x/p."),
        ("ftp://h/p/https:///me:PW@x?k", "ftp://h/p/https:///REDACTED:REDACTED@x?REDACTED"),
        (
            "https://h/a/b://me:PW@x/c://you:PW@y/",
            "https://h/a/b://REDACTED:REDACTED@x/c://REDACTED:REDACTED@y/",
        ),
        ("https://h\\a://me:PW@x", "https://h\\a://REDACTED:REDACTED@x"),
        ("https://me:PW@h/a://you:PW@x", "https://REDACTED:REDACTED@h/a://REDACTED:REDACTED@x"),
        # (these two were redacted already: the path's "://" found first, the query whole)
        ("//h/a://me:PW@x/", "//h/a://REDACTED:REDACTED@x/"),
        ("https://h/redirect?to=https://me:PW@x/", "https://h/redirect?REDACTED"),
    ],
)
def test_every_url_a_browser_would_send_a_password_to_is_redacted(text: str, shown: str) -> None:
    assert redact_urls(text) == shown
    assert "PW" not in redact_uri(text.strip("(). ").removeprefix("open ").removeprefix("see "))


@pytest.mark.parametrize(
    "url",
    [
        "https://web.archive.org/web/2020/https://example.com/a/b",
        "https://h/a://b/c",
        "https://h/path/with@sign/x",
        "file:///home/me@x/f.txt",
        "file:////server@x/share",
        "https:///h/p",
        "//h/a://b/c",
        "https://h/x://y:8080/z",
    ],
)
def test_a_url_without_secrets_is_shown_as_is(url: str) -> None:
    """Neither a path holding another URL nor a path with an "@" in it changes what is shown
    when no user information is there to leave out."""
    assert redact_urls(f"GET {url} failed") == f"GET {url} failed"
    assert redact_uri(url) == url


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("//h/a://me:PW@x/p", "//h/a://REDACTED:REDACTED@x/p"),
        ("https://h/a://me:PW@x/?k", "https://h/a://REDACTED:REDACTED@x/?REDACTED"),
        ("db:t/x://h/y://me:PW@z", "db:t/x://h/y://REDACTED:REDACTED@z"),
        ("app:https:me:PW@h", "app:https:REDACTED:REDACTED@h"),
        # after the spaces and control characters a browser drops before a URI
        (" https:/me:PW@h/p", " https:/REDACTED:REDACTED@h/p"),
        ("\t\n//me:PW@h/p", "\t\n//REDACTED:REDACTED@h/p"),
        # "http" or "https" right before "://", whatever stands before it, as in prose
        (" https:///me:PW@h/p", " https:///REDACTED:REDACTED@h/p"),
        ("xhttps:///me:PW@h", "xhttps:///REDACTED:REDACTED@h"),
    ],
)
def test_one_uri_is_read_as_a_url_in_prose_is(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
    assert "PW" not in redact_urls(uri)


_SCHEMES = st.sampled_from(["https", "HTTP", "xhttps", "ftp", "git+ssh", "1x", ""])
_SLASHES = st.text(st.sampled_from("/\\"), min_size=0, max_size=4)
_WORDS = st.text(st.sampled_from("ab.-_~%:"), min_size=1, max_size=6)


@st.composite
def _urls_with_a_password(draw: st.DrawFn) -> str:
    """A URL a browser (or a server reading another's path) sends a password from: an
    http(s) one with any slashes, another with "//", one without its scheme; where the
    password is, its own authority or that of a URL its path holds."""
    scheme = draw(_SCHEMES)
    slashes = "//"  # after "http" or "https" that are a scheme's last letters, then any more
    if scheme.lower() in {"http", "https"}:
        slashes = draw(_SLASHES)
    elif scheme == "xhttps":
        slashes += draw(_SLASHES)
    start = f"{scheme}:{slashes}" if scheme else "//"
    path = "/".join(draw(st.lists(_WORDS, max_size=3)))
    inner = draw(st.sampled_from(["a://", "https:///", "https:/", "https:\\", "HTTP://"]))
    if draw(st.booleans()):
        return f"{start}{draw(_WORDS)}:PW@h/{path}"
    return f"{start}h/{path}/{inner}me:PW@x/{path}"


@settings(max_examples=300, deadline=None)
@given(_urls_with_a_password(), st.sampled_from(["", "?k=S", "#S", "?u=https://a:S@b"]))
def test_no_password_survives_in_prose_or_alone(url: str, tail: str) -> None:
    for shown in (redact_urls(f"at {url}{tail}."), redact_uri(url + tail)):
        assert "PW" not in shown
        assert "S" not in shown  # the query or fragment, whatever it holds


def _expected_user_info_left_out(head: str) -> str:
    """What ``redact_uri("x://" + head)`` holds after "x://" (``head``: no "?" or "#"),
    worked out the slow way: every place an authority starts (``head``'s own, and each
    URL's its path holds), its user information (to its last "@") is redacted."""
    starts = [(0, False)]
    for colon in (i for i, ch in enumerate(head) if ch == ":"):
        web = head[max(0, colon - 5) : colon].lower().endswith(("http", "https"))
        if head.startswith("//", colon + 1):
            starts.append((colon + 3, web))
        elif web:
            before = head[: colon - (5 if head[colon - 1] in "sS" else 4)][-1:]
            if not re.fullmatch(r"[A-Za-z0-9+.-]", before):
                starts.append((colon + 1, True))
    cuts: dict[int, tuple[int, int]] = {}  # by the authority's end: its first start, its last "@"
    for start, web in starts:
        while web and head[start : start + 1] in ("/", "\\"):
            start += 1
        end = head.find("/", start)
        end = len(head) if end < 0 else end
        at = head.rfind("@", start, end)
        if at >= 0 and cuts.get(end, (start,))[0] >= start:
            cuts[end] = (start, at)
    shown, kept = "", 0
    for start, at in sorted(cuts.values()):
        info = "REDACTED:REDACTED" if ":" in head[start:at] else "REDACTED"  # a user name alone: one
        shown, kept = shown + head[kept:start] + info, at
    return shown + head[kept:]


_PIECES = st.sampled_from(["https:", "HTTP:", "xhttps:", "://", "/", "/", "\\", "@", "@", ":", "a", "s", "."])


@settings(max_examples=1000, deadline=None)
@given(st.lists(_PIECES, max_size=24).map("".join))
def test_the_quick_search_finds_what_the_slow_one_does(head: str) -> None:
    """Each authority is read once and what cannot start one holding the next "@" is
    skipped: that takes nothing away from what a slow search of every ":" redacts."""
    assert redact_uri("x://" + head) == "x://" + _expected_user_info_left_out(head)


_HOSTILE = """
import sys
from mcp_elicit.telemetry import redact_urls
from mcp_elicit.telemetry_attributes import Traced, redact_uri
from mcp_elicit.url_redaction import hidden_parts
size = 1 << 20
for text in (%s):
    assert len(redact_urls(text)) >= len(text) // 2
    assert redact_uri(text).startswith(text[:4]) and len(redact_uri(text)) >= len(text[:4])
    Traced({}, text).failed("-32002", text)
print("done")
"""
#: Text that made a search from every place a scheme could start take quadratic time.
_BACKTRACKING = """
    "a." * (size // 2) + "://",
    "x://" * (size // 4),
    "://" + "a-" * (size // 2),
    "a//" * (size // 3),
    "//a" * (size // 3) + ")" * size,
    "https://h/" + "(" * size + ")" * size,
"""
#: Text made of URLs inside a path, or of what starts one, each of whose authorities a
#: search from every start would read again (to its end, for its last "@").
_INSIDE_A_PATH = """
    "https:" * (size // 6),
    "//h/" + "a://" * (size // 4) + "@",
    "https://" + "a@" * (size // 4) + "/" + "x://b@" * (size // 6),
    "https://h/" + "https:\\\\" * (size // 7),
    "xhttps:///" * (size // 10),
    "http://" + "/" * size + "@",
    " " * size + "https:/me:PW@h",
    "https: " * (size // 7) + "/@",
    "//a " * (size // 4) + "/@",
    "h\\t\t" * (size // 4) + "ttps:",
    "http" + "\t" * size + "s:" + "\\t/" * size + "/@",
"""


@pytest.mark.parametrize("texts", [_BACKTRACKING, _INSIDE_A_PATH], ids=["backtracking", "inside-a-path"])
def test_a_megabyte_built_to_make_the_search_backtrack_takes_no_time_to_speak_of(texts: str) -> None:
    """Messages and URLs come from the other side (a server's error, a redirect's Location).
    The search was quadratic in such text: 64 KB of ``a.a.a.`` took 4 s, a megabyte about
    17 minutes, holding the event loop. Now it is linear: megabytes in a subprocess that
    gets a generous minute (the check is that it ends, not how fast)."""
    done = subprocess.run(
        [sys.executable, "-c", _HOSTILE % texts], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        (
            "https://u:SECRET@files.example/a?k=SECRET#SECRET",
            "https://REDACTED:REDACTED@files.example/a?REDACTED",
        ),
        ("file:///srv/a.txt?k=SECRET", "file:///srv/a.txt?REDACTED"),
        ("db:tables/users?token=SECRET", "db:tables/users?REDACTED"),
        # a "://" in its query or fragment is not its scheme's: the query is still redacted whole
        ("custom:thing?token=SECRET&next=https://h/", "custom:thing?REDACTED"),
        ("app:/x?token=SECRET&u=https://a:SECRET@h/?SECRET", "app:/x?REDACTED"),
        ("urn:x#SECRET://y", "urn:x#REDACTED"),
        ("git+ssh://me:SECRET@host/repo?SECRET", "git+ssh://REDACTED:REDACTED@host/repo?REDACTED"),
        ("//me:SECRET@host/p?SECRET", "//REDACTED:REDACTED@host/p?REDACTED"),
        # before its first "://" (not a query's) there need be no scheme RFC 3986 allows:
        # the authority after it is redacted all the same
        (" https://me:SECRET@host/p", " https://REDACTED:REDACTED@host/p"),
        ("\thttps://me:SECRET@host/p?SECRET", "\thttps://REDACTED:REDACTED@host/p?REDACTED"),
        ("1x://me:SECRET@host/p", "1x://REDACTED:REDACTED@host/p"),
        ("x_y://me:SECRET@host/p", "x_y://REDACTED:REDACTED@host/p"),
        ("sch\u00e9ma://me:SECRET@host/p", "sch\u00e9ma://REDACTED:REDACTED@host/p"),
        ("db:t/x://me:SECRET@host/p", "db:t/x://REDACTED:REDACTED@host/p"),
        # an http(s) URI with other than two slashes after its scheme, as a browser opens it
        ("https:/me:SECRET@host/p?SECRET", "https:/REDACTED:REDACTED@host/p?REDACTED"),
        ("HTTPS:///me:SECRET@host/p", "HTTPS:///REDACTED:REDACTED@host/p"),
        ("http:\\\\me:SECRET@host/p", "http:\\\\REDACTED:REDACTED@host/p"),
        ("https:me:SECRET@host", "https:REDACTED:REDACTED@host"),
        # a password holding an "@": the user information runs to the authority's last one
        ("https://me:SEC@SECRET@host/p", "https://REDACTED:REDACTED@host/p"),
    ],
)
def test_one_uri_keeps_its_scheme_authority_and_path_only(uri: str, shown: str) -> None:
    """``redact_uri`` (a resource's URI, alone: ``mcp.resource.uri``, a log line's label)
    takes the scheme from the URI's start only, whatever the query or fragment holds."""
    assert redact_uri(uri) == shown
    assert "SECRET" not in redact_uri(uri)


@pytest.mark.parametrize("uri", ["file:///a/b?k=S).", "https://h/p#frag)", "s3://b/k?x=1>,"])
def test_one_uri_has_no_prose_around_it_so_all_it_ends_with_is_its_own(uri: str) -> None:
    """Unlike a URL in prose (``redact_urls`` keeps a ``)`` or ``.`` that ends it after
    it), a URI given alone ends where the string does: what its query ends with is the
    query's, redacted with it. Its callers (a span attribute, a label in ``repr``
    quotes, the same URI replaced in an error's message, whose prose then stays as
    written) need nothing kept."""
    redacted = redact_uri(uri)
    assert redacted.endswith("REDACTED")
    message = f"Resource not found ({uri})."
    assert _status_of(uri, message) == f"Resource not found ({redacted})."


def _status_of(uri: str, message: str) -> str:
    traced = Traced({}, uri)
    traced.failed("-32002", message)
    assert traced.error is not None
    return traced.error[1]


@pytest.mark.parametrize(
    ("uri", "message", "status"),
    [
        # repeated inert: a control character escaped, as shown_name writes it
        (
            "urn:x?token=SECRET\x1b",
            "Resource not found: urn:x?token=SECRET\\x1b",
            "Resource not found: urn:x?REDACTED",
        ),
        (
            "urn:x\u3000y?k=SECRET\n",
            "Not found: urn:x\u3000y?k=SECRET\\n.",
            "Not found: urn:x\u3000y?REDACTED.",
        ),
        (
            "urn:x\u3000y?k=SECRET\n",
            "Not found: urn:x\\u3000y?k=SECRET\\n",
            "Not found: urn:x\\u3000y?REDACTED",
        ),
        # repeated cut short: redacted from where the URI's own redaction starts
        (
            "db:t?k=SECRET" + "x" * 300,
            "Not found: db:t?k=SECRETxxx… (313 characters)",
            "Not found: db:t?REDACTED… (313 characters)",
        ),
        (
            "https://me:SECRET" + "x" * 300 + "@h/",
            "Not found: https://me:SECRETxx… (1)",
            "Not found: https://REDACTED… (1)",
        ),
        # twice, and once cut
        ("a:b#SECRET", "a:b#SECRET or a:b#SECRET", "a:b#REDACTED or a:b#REDACTED"),
        ("a:b#SECRET", "a:b#SECR… (10 characters)", "a:b#REDACTED… (10 characters)"),
    ],
)
def test_a_uri_repeated_inert_or_cut_short_keeps_no_key_in_the_status(
    uri: str, message: str, status: str
) -> None:
    """An error's message repeats the URI a request gave as ``shown_name`` does: inert (each
    character not printable escaped) and cut short past 200 characters. The span's status
    redacts those repetitions as the URI itself, though ``redact_urls`` finds no URL in a
    URI without "://"."""
    assert _status_of(uri, message) == status
    assert "SECR" not in status


@pytest.mark.parametrize(
    "url",
    [
        # what httpx sends as a user name or password (%-escaped), though prose ends a URL there
        "https://me x:PW@h/p",
        "https://me:P W@h/p",
        "https://me\u00a0x:PW@h/p",
        "https://me\u3000x:PW@h/p",
        "https://me\u2028x:PW@h/p",
        'https://me"x:PW@h/p',
        "https://me'x:PW@h/p",
        "//me x:PW@h/p",
        "https:/me\u00a0x:PW@h/p",
        # a tab or line break, which a browser drops: in the user information, the scheme,
        # or among the slashes after it
        "https://me\t:PW@h/p",
        "https://me:P\nW@h/p",
        "ht\ttps:///me:PW@h/p",
        "HT\r\nTPS:/me:PW@h/p",
        "https:\t//me:PW@h/p",
        "https:/\t/me:PW@h/p",
        "h\tt\tt\tp\ts\t:me:PW@h/p",
        "https://h/a/ht\ttps:/me:PW@x/p",
    ],
)
def test_no_password_survives_whatever_stands_in_the_user_information_or_scheme(url: str) -> None:
    """httpx sends a user name with a space, a no-break space or a quote in it (%-escaped),
    and a browser drops a tab or a line break wherever it stands (``ht\\ttps:`` is
    ``https:``): in prose, where a space or a quote ends a URL's run, and alone, the user
    information is still redacted, to the last "@" before the authority's end."""
    for shown in (redact_urls(f"at {url} failed"), redact_urls(f"at {url!r}."), redact_uri(url)):
        assert "PW" not in shown
        assert "REDACTED:REDACTED@" in shown
        assert "/p" in shown  # the path stays


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com or mail help@example.com",
        "https://host failed; mail ops@example.org",
        "Docs at https://docs.example.com, contact ops@example.com for access",
        "see 'https://example.com' or 'help@example.com'",
        "https://host/ failed; mail ops@example.org",
        "//host and me@example.org",
        "Could not reach https://example.com: refused; mail admin@example.com",
    ],
)
def test_an_e_mail_address_after_a_url_without_a_path_is_kept(text: str) -> None:
    """A URL with no path that an e-mail address follows in prose: two things a person
    needs, both kept. No ":" of a password stands before the "@" (a user name alone with
    a space is no token or key), so the URL ends at the space, as prose reads it."""
    assert redact_urls(text) == text


def test_text_with_an_at_sign_after_a_colon_is_redacted_with_the_url() -> None:
    """The price of reading a password past a space: where a ":" stands between a URL with
    no path and an "@" (a port, prose's own with no space after it), what lies between
    is hidden too."""
    assert (
        redact_urls("https://host:8443 failed; mail ops@example.org")
        == "https://REDACTED:REDACTED@example.org"
    )
    assert (
        redact_urls("see https://h. Contact:ops@example.org") == "see https://REDACTED:REDACTED@example.org"
    )


@pytest.mark.parametrize(
    "text",
    [
        "the proxy http://127.0.0.1:8080 (HTTPS_PROXY) refused to open a tunnel to h.example:443: it "
        "asks for a user name and password: give them in HTTPS_PROXY, as user:password@ before the host",
        "https://h:8443 is down; see the status page, or write to the team at ops:oncall@example.org "
        "if it lasts more than an hour",
    ],
)
def test_a_port_then_a_sentence_with_a_colon_and_an_at_sign_is_kept(text: str) -> None:
    """A user name and password with spaces in them are short: a run past a space that is
    long, or holds many spaces, to the "@" is prose (here the proxy refusal mcp-elicit
    itself writes), kept whole."""
    assert redact_urls(text) == text


@pytest.mark.parametrize(
    ("uri", "hidden"),
    [
        ("https://h/mcp", ""),
        ("https://me:pw@h/mcp?k=1", "its user name and password and its query"),
        ("https://me x@h/", "its user name"),
        ("https://me@h/?k", "its user name and its query"),
        ("https://h/x#f", "its fragment"),
        ("https://h/x?a#f", "its query and fragment"),
        ("urn:x?token=S", "its query"),
        ("https:/me:pw@h", "its user name and password"),
    ],
)
def test_hidden_parts_names_what_redacted_stands_for(uri: str, hidden: str) -> None:
    """A message that tells a person to use an address it shows redacted says which parts
    ``REDACTED`` stands for: they have to write those out themselves."""
    assert hidden_parts(uri) == hidden
    assert (redact_uri(uri) == uri) is (hidden == "")


_ODD_USER_CHARACTERS = st.text(st.sampled_from("ab \t\u00a0\u3000\u2028'\"\n%:\\"), max_size=6)


@settings(max_examples=500, deadline=None)
@given(
    _ODD_USER_CHARACTERS,
    _ODD_USER_CHARACTERS,
    st.sampled_from(["https://", "http:/", "HTTPS:\\\\", "ht\ttps://", "https:\t//", "//", "ftp://"]),
    st.sampled_from(["", "/p", "/p?k=v", "?k", "#f"]),
    st.sampled_from(["{}", "at {} failed", "'{}'", '"{}".', "({})", "x={!r}"]),
)
def test_a_password_survives_no_space_quote_or_tab_in_the_user_information(
    before: str, after: str, start: str, rest: str, prose: str
) -> None:
    """Whatever httpx or a browser takes into a user name or password (spaces of any kind,
    quotes, a tab it drops, a colon), in prose or alone, repr'd or not: the password is
    redacted, the host stays. (A "//" with no scheme that a space follows is a comment in
    prose, not a URL: ``// note``. A user name alone with a space is read as prose reads
    it: what follows the space is no part of the URL, as an e-mail address is not; so is
    one whose ":" a space follows, as in ``https://h: failed``.)"""
    if start == "//":
        before = before.lstrip(" \t\n\u00a0\u3000\u2028")
    user_info = before + "PW" + after
    assume(re.search(r":(?![^\S\t\n\r])", user_info) or not re.search(r"[^\S\t\n\r]", user_info))
    assume(len(re.findall(r"[^\S\t\n\r]+", user_info)) <= 4)  # more runs of spaces: prose
    url = f"{start}{user_info}@host.example{rest}"
    for shown in (redact_urls(prose.format(url)), redact_uri(url)):
        assert "PW" not in shown, shown
        assert "host.example" in shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https:\\\\me:PW@h/", "https:\\\\REDACTED:REDACTED@h/"),
        ("https:\\Rme:PW@h/", "https:\\REDACTED:REDACTED@h/"),
        ("HTTPS://\\Tok:PW@h/", "HTTPS://\\REDACTED:REDACTED@h/"),
        ("ht\\ttps:/\\t/me:PW@h/", "ht\\ttps:/\\t/REDACTED:REDACTED@h/"),
    ],
)
def test_only_what_repr_writes_for_a_tab_or_line_break_is_skipped(url: str, shown: str) -> None:
    """``\\t``, ``\\n`` and ``\\r`` are what ``repr`` writes for what a browser drops; a
    backslash before a capital letter is a slash and a user name's first letter, which
    is redacted with the rest (``https:\\\\me`` gave ``https:\\\\RREDACTED``)."""
    assert redact_urls(f"at {url} failed") == f"at {shown} failed"
    assert redact_uri(url) == shown


@pytest.mark.parametrize(
    ("word", "shown"),
    [
        ("https://h/?k=a KEY", "https://h/?REDACTED"),
        ("https://h/?k=a'KEY", "https://h/?REDACTED"),
        ('--db=redis://me:PW@h/0?password=a "KEY"', "--db=redis://REDACTED:REDACTED@h/0?REDACTED"),
        ("https://h/#a KEY", "https://h/#REDACTED"),
        ("https://me x@h/p", "https://REDACTED@h/p"),
        ("hello world, it's me@example.org", "hello world, it's me@example.org"),
        ("https://h/p", "https://h/p"),
    ],
)
def test_a_command_word_is_redacted_whole(word: str, shown: str) -> None:
    """A command's argument is one word, known whole: a space or a quote in it ends no
    URL's query there. Redacting the quoted line instead left the key past it in clear."""
    assert redact_word(word) == shown
    assert shlex.join(map(redact_word, ["srv", word])) == shlex.join(["srv", shown])


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("https://me@h/mcp", "https://REDACTED@h/mcp"),  # a user name alone: one REDACTED
        ("https://me:pw@h/mcp", "https://REDACTED:REDACTED@h/mcp"),
        ("https://me:@h/mcp", "https://REDACTED:REDACTED@h/mcp"),  # a password's ":", however empty
        ("https://h/mcp?", "https://h/mcp?"),  # an empty query hides nothing
        ("https://h/mcp#", "https://h/mcp#"),
        ("https://h/mcp?#f", "https://h/mcp?REDACTED"),  # a fragment after it does
        ("https://h/mcp?k", "https://h/mcp?REDACTED"),
    ],
)
def test_a_user_name_alone_and_an_empty_query_read_naturally(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
    assert redact_urls(f"see {uri} now") == f"see {shown} now"
    if shown == uri:  # nothing hidden: nothing to write out
        assert hidden_parts(uri) == ""
