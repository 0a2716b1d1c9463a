"""The mount path (ASGI's ``root_path``, decoded) as a URL's path: spelled as the request
did when its raw path shows it, else %-escaped back; and the path a cookie can be scoped
to. Plain scopes, no sockets: the apps using it are tested over HTTP in
``test_http_mount_path``."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.transports.mount_path import cookie_path, escape_path, mount_path

#: Only what a URL's path may hold: RFC 3986's pchar, "/" and %-escapes.
URL_PATH = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*")


def scope(root: str, raw: bytes | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "http", "root_path": root, "path": root + "/mcp"}
    if raw is not None:
        out["raw_path"] = raw
    return out


@pytest.mark.parametrize(
    ("decoded", "escaped"),
    [
        ("", ""),
        ("/tools", "/tools"),
        ("/a b", "/a%20b"),
        ("/x\n\nYour session expired\r\n", "/x%0A%0AYour%20session%20expired%0D%0A"),
        ("/100%", "/100%25"),
        ("/100%25", "/100%2525"),  # decoded already: the % is a %, not an escape
        ("/café", "/caf%C3%A9"),
        ('/a"b<c>', "/a%22b%3Cc%3E"),
        ("/a?b#c", "/a%3Fb%23c"),
        ("/a\\b|c^d`e{f}[g]", "/a%5Cb%7Cc%5Ed%60e%7Bf%7D%5Bg%5D"),
        ("/~a-b_c.d/e:f@g!h$i&j'k(l)m*n+o,p;q=r", "/~a-b_c.d/e:f@g!h$i&j'k(l)m*n+o,p;q=r"),
        ("/\ud800", "/%3F"),  # a lone surrogate no server should give: replaced, not a crash
    ],
)
def test_a_decoded_path_is_escaped_back(decoded: str, escaped: str) -> None:
    assert escape_path(decoded) == escaped
    assert mount_path(scope(decoded)) == escaped  # no raw path: escaped


@given(st.text())
def test_any_decoded_path_escapes_to_one_url_path_that_decodes_back(decoded: str) -> None:
    escaped = escape_path(decoded)
    assert URL_PATH.fullmatch(escaped)
    if not any("\ud800" <= c <= "\udfff" for c in decoded):
        assert urllib.parse.unquote(escaped, errors="strict") == decoded


@pytest.mark.parametrize(
    ("root", "raw", "spelled"),
    [
        ("/a@b", b"/a%40b/mcp", "/a%40b"),  # the client escaped what it need not: kept so
        ("/a@b", b"/a@b/mcp", "/a@b"),
        ("/café", b"/caf%c3%a9/mcp", "/caf%c3%a9"),
        ("/a b", b"/a%20b", "/a%20b"),  # the whole path
        ("/t/a/b", b"/t/a%2Fb/mcp", "/t/a%2Fb"),  # a / the client escaped
        ("/t/a;b", b"/t/a;b/mcp/", "/t/a;b"),
        ("/api", b"/api/mcp", "/api"),  # uvicorn --root-path: the prefix put back in both
    ],
)
def test_the_mount_path_is_spelled_as_the_request_did(root: str, raw: bytes, spelled: str) -> None:
    assert mount_path(scope(root, raw)) == spelled


@pytest.mark.parametrize(
    ("root", "raw"),
    [
        ("/api", b"/mcp"),  # a server that leaves the prefix out of the raw path
        ("/a b", b"/a b/mcp"),  # spelled with what a URL may not hold
        ("/café", "/café/mcp".encode()),
        ("/ab", b"/abc/mcp"),  # a prefix, but not up to a /
        ("/a", b"mcp"),
    ],
)
def test_a_raw_path_without_a_fit_spelling_gives_the_escaped_one(root: str, raw: bytes) -> None:
    assert mount_path(scope(root, raw)) == escape_path(root)


@given(st.lists(st.text(min_size=1), min_size=1, max_size=4), st.data())
def test_any_spelling_of_a_mount_path_decodes_to_it(segments: list[str], data: st.DataObject) -> None:
    """However a client escapes the mount path (``safe``: what it leaves unescaped), the
    path given back decodes to it and is one URL path."""
    safe = data.draw(st.sampled_from(["", "/", "/@:;", "/:@!$&'()*+,;="]))
    root = "/" + "/".join(s.replace("/", "-") for s in segments)
    raw = urllib.parse.quote(root, safe=safe).encode("ascii") + b"/mcp"
    given_back = mount_path(scope(root, raw))
    assert URL_PATH.fullmatch(given_back)
    assert urllib.parse.unquote(given_back) == root


def test_a_mount_path_of_many_segments_is_spelled_whole() -> None:
    """A mount path of many segments (``Mount("/{rest:path}", ...)``), matched a segment
    at a time, and one that parts from the raw path only at its last segment."""
    root = "/a" * 200_000
    assert mount_path(scope(root, root.encode() + b"/mcp")) == root
    assert mount_path(scope(root + "/b", root.encode() + b"/c/mcp")) == root + "/b"


@pytest.mark.parametrize(
    ("path", "cookie"),
    [
        ("/mcp-elicit/flows/f1", "/mcp-elicit/flows/f1"),
        ("/a%20b/mcp-elicit/flows/f1", "/a%20b/mcp-elicit/flows/f1"),
        ("/a;b/mcp-elicit/flows/f1", "/"),  # a ; ends the attribute: the path above it
        ("/t/a;b/mcp-elicit/oauth/callback", "/t/"),
        ("/t/ab/c;d", "/t/ab/"),
    ],
)
def test_a_cookie_path_never_holds_a_semicolon(path: str, cookie: str) -> None:
    assert cookie_path(path) == cookie
