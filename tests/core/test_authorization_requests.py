"""The sans-IO authorization core (``mcp_elicit.core.authorization``): the scope asked for, PKCE, the
authorization URL, and the callback it comes back to."""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.core.authorization import (
    AuthorizationServer,
    Pkce,
    ProtectedResource,
    authorization_url,
    read_callback,
    select_scope,
)

from support.authorization import CODE, ISSUER, REDIRECT, SERVER_URL, _refused, _server

STATE = "af0ifjsldkjX7sQ9"


def _resource(scopes: tuple[str, ...] | None = None) -> ProtectedResource:
    return ProtectedResource(SERVER_URL, (ISSUER,), scopes)


OFFLINE = _server(scopes_supported=("read", "offline_access"))
NO_OFFLINE = _server(scopes_supported=("read", "write"))
NO_SCOPES = _server()


@pytest.mark.parametrize(
    ("challenged", "resource_scopes", "server", "previous", "refresh", "expected"),
    [
        ("a b", ("x", "y"), NO_OFFLINE, None, True, "a b"),
        ("  a   b ", None, NO_OFFLINE, None, True, "a b"),
        (None, ("x", "y"), NO_OFFLINE, None, True, "x y"),
        ("", ("x", "y"), NO_OFFLINE, None, True, "x y"),
        (None, None, NO_OFFLINE, None, True, None),
        (None, (), NO_OFFLINE, None, True, None),
        (None, ("", "x"), NO_OFFLINE, None, True, "x"),
        ("a b", None, OFFLINE, None, True, "a b offline_access"),
        (None, ("x",), OFFLINE, None, True, "x offline_access"),
        ("a b", None, OFFLINE, None, False, "a b"),
        ("a offline_access b", None, OFFLINE, None, True, "a offline_access b"),
        ("a", None, NO_SCOPES, None, True, "a"),
        (None, None, OFFLINE, None, True, None),
        (None, (), OFFLINE, None, True, None),
        ("b c", ("x",), NO_OFFLINE, "a b", True, "a b c"),
        ("c a", None, NO_OFFLINE, "b a", True, "b a c"),
        (None, ("x", "a"), NO_OFFLINE, "a b", True, "a b x"),
        (None, None, NO_OFFLINE, "a b", True, "a b"),
        ("b", None, OFFLINE, "a", True, "a b offline_access"),
        ("b", None, OFFLINE, "a offline_access", False, "a offline_access b"),
        (None, None, OFFLINE, "a", True, "a offline_access"),
        ("", None, NO_OFFLINE, "", True, None),
    ],
)
def test_select_scope(
    challenged: str | None,
    resource_scopes: tuple[str, ...] | None,
    server: AuthorizationServer,
    previous: str | None,
    refresh: bool,
    expected: str | None,
) -> None:
    assert (
        select_scope(challenged, _resource(resource_scopes), server, previous=previous, refresh=refresh)
        == expected
    )


def test_offline_access_in_the_resource_scopes_alone_does_not_count() -> None:
    resource = _resource(("x", "offline_access"))
    assert select_scope("a", resource, NO_OFFLINE) == "a"


@given(
    st.lists(st.sampled_from("abcdef"), max_size=6),
    st.lists(st.sampled_from("abcdef"), max_size=6),
)
def test_step_up_is_the_ordered_union(previous: list[str], challenged: list[str]) -> None:
    scope = select_scope(" ".join(challenged), _resource(), NO_OFFLINE, previous=" ".join(previous))
    union = list(dict.fromkeys(previous + challenged))
    assert scope == (" ".join(union) or None)


def test_pkce_verifier_and_s256_challenge() -> None:
    pkce = Pkce.new()
    assert 43 <= len(pkce.verifier) <= 128
    assert re.fullmatch(r"[A-Za-z0-9\-._~]+", pkce.verifier)
    digest = hashlib.sha256(pkce.verifier.encode("ascii")).digest()
    assert pkce.challenge == base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")
    assert "=" not in pkce.challenge
    assert len(pkce.challenge) == 43


def test_pkce_values_are_fresh_each_time() -> None:
    made = [Pkce.new() for _ in range(20)]
    assert len({p.verifier for p in made}) == 20
    assert len({p.challenge for p in made}) == 20


def test_pkce_repr_shows_the_challenge_not_the_verifier() -> None:
    pkce = Pkce.new()
    assert pkce.verifier not in repr(pkce)  # it proves who asked for the code: never shown
    assert pkce.challenge in repr(pkce)  # sent in the authorization URL anyway


def test_pkce_matches_the_rfc_7636_example() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    assert (
        base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


def _query(url: str) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query, keep_blank_values=True)


def test_the_authorization_url_carries_every_parameter() -> None:
    pkce = Pkce("v" * 43, "chal-lenge_")
    url = authorization_url(
        _server(),
        client_id="https://client.example/meta?x=1&y=2",
        redirect_uri=REDIRECT,
        state="s t&u=v",
        pkce=pkce,
        scope="files:read offline_access",
        resource="https://mcp.example.com/mcp?a=b",
    )
    assert url.startswith(f"{ISSUER}/authorize?")
    assert _query(url) == {
        "response_type": ["code"],
        "client_id": ["https://client.example/meta?x=1&y=2"],
        "redirect_uri": [REDIRECT],
        "state": ["s t&u=v"],
        "code_challenge": ["chal-lenge_"],
        "code_challenge_method": ["S256"],
        "resource": ["https://mcp.example.com/mcp?a=b"],
        "scope": ["files:read offline_access"],
    }
    assert "v" * 43 not in url  # the verifier never leaves with the request
    assert "&y=2" not in url  # values are encoded, not spliced in


def _simple_url(server: AuthorizationServer, *, scope: str | None) -> str:
    """The authorization URL for client "c", state "s", a fresh PKCE pair."""
    return authorization_url(
        server,
        client_id="c",
        redirect_uri=REDIRECT,
        state="s",
        pkce=Pkce.new(),
        scope=scope,
        resource=SERVER_URL,
    )


@pytest.mark.parametrize("scope", [None, ""])
def test_the_authorization_url_omits_an_empty_scope(scope: str | None) -> None:
    url = _simple_url(_server(), scope=scope)
    assert "scope" not in _query(url)
    assert _query(url)["response_type"] == ["code"]


def test_an_endpoint_query_is_kept() -> None:
    server = _server(authorization_endpoint=f"{ISSUER}/authorize?tenant=t1")
    url = _simple_url(server, scope="a")
    assert url.startswith(f"{ISSUER}/authorize?tenant=t1&")
    query = _query(url)
    assert query["tenant"] == ["t1"]
    assert query["client_id"] == ["c"]
    assert query["scope"] == ["a"]


def test_an_endpoint_with_an_empty_query_gets_no_second_question_mark() -> None:
    server = _server(authorization_endpoint=f"{ISSUER}/authorize?")
    url = _simple_url(server, scope=None)
    assert _query(url)["response_type"] == ["code"]


ISS_SERVER = _server(iss_parameter_supported=True)


def _callback(*pairs: tuple[str, str]) -> str:
    return REDIRECT + "?" + urllib.parse.urlencode(pairs)


@pytest.mark.parametrize(
    ("url", "server"),
    [
        (_callback(("code", CODE), ("state", STATE)), _server()),
        (_callback(("state", STATE), ("code", CODE), ("iss", ISSUER)), _server()),
        (_callback(("code", CODE), ("state", STATE), ("iss", ISSUER)), ISS_SERVER),
        (_callback(("code", CODE), ("state", STATE), ("extra", "x"), ("extra", "y")), _server()),
    ],
)
def test_a_good_callback_gives_the_code(url: str, server: AuthorizationServer) -> None:
    assert read_callback(url, state=STATE, server=server) == CODE


def test_a_callback_code_is_decoded() -> None:
    url = _callback(("code", "a+b/c=="), ("state", "s t"))
    assert read_callback(url, state="s t", server=_server()) == "a+b/c=="


@pytest.mark.parametrize(
    ("url", "server", "match"),
    [
        (_callback(("code", CODE), ("state", STATE + "x")), _server(), "state"),
        (_callback(("code", CODE), ("state", STATE[:-1])), _server(), "state"),
        (_callback(("code", CODE)), _server(), "state"),
        (_callback(("code", CODE), ("state", "")), _server(), "state"),
        (_callback(("code", CODE), ("state", STATE), ("state", STATE)), _server(), "state 2 times"),
        (_callback(("code", CODE), ("code", CODE), ("state", STATE)), _server(), "code 2 times"),
        (
            _callback(("code", CODE), ("state", STATE), ("iss", ISSUER), ("iss", ISSUER)),
            ISS_SERVER,
            "iss 2 times",
        ),
        (_callback(("code", CODE), ("state", STATE)), ISS_SERVER, "no iss"),
        (_callback(("code", CODE), ("state", STATE), ("iss", ISSUER + "/")), ISS_SERVER, "comes from issuer"),
        (_callback(("code", CODE), ("state", STATE), ("iss", ISSUER + "/")), _server(), "comes from issuer"),
        (
            _callback(("code", CODE), ("state", STATE), ("iss", "https://evil.example")),
            _server(),
            "comes from",
        ),
        (_callback(("code", CODE), ("state", STATE), ("iss", "")), _server(), "comes from issuer"),
        (_callback(("state", STATE)), _server(), "no code"),
        (_callback(("state", STATE), ("code", "")), _server(), "no code"),
        (_callback(("error", "access_denied"), ("state", STATE + "x")), _server(), "state"),
        (
            _callback(("error", "access_denied"), ("state", STATE), ("iss", "https://evil.example")),
            _server(),
            "comes from",
        ),
        (
            _callback(("error", "access_denied"), ("state", STATE), ("code", CODE)),
            _server(),
            r"\(access_denied\)",
        ),
    ],
)
def test_a_bad_callback_is_refused(url: str, server: AuthorizationServer, match: str) -> None:
    message = _refused(read_callback, url, state=STATE, server=server, match=match)
    assert CODE not in message
    assert STATE not in message


def test_an_error_callback_names_the_error_and_its_description() -> None:
    url = _callback(("error", "access_denied"), ("error_description", "The user said no"), ("state", STATE))
    message = _refused(read_callback, url, state=STATE, server=_server())
    assert message == f"{ISSUER} refused the authorization (access_denied: The user said no)"


def test_an_error_description_is_cut_short() -> None:
    url = _callback(("error", "server_error"), ("error_description", "x" * 1000), ("state", STATE))
    message = _refused(read_callback, url, state=STATE, server=_server(), match="server_error")
    assert "x" * 200 in message
    assert "x" * 201 not in message


def test_a_url_in_an_error_description_is_redacted_before_the_cut() -> None:
    description = "x" * 170 + " https://me:SECRETPW@h/?key=KEY"  # the cut at 200 falls in the password
    url = _callback(("error", "server_error"), ("error_description", description), ("state", STATE))
    message = _refused(read_callback, url, state=STATE, server=_server(), match="server_error")
    assert "SECRE" not in message and "https://REDACTED:" in message


def test_an_error_callback_without_a_description() -> None:
    url = _callback(("error", "invalid_scope"), ("state", STATE))
    assert _refused(read_callback, url, state=STATE, server=_server()).endswith("(invalid_scope)")


@pytest.mark.parametrize(
    ("error", "description"),
    [
        ("access_denied\n\x1b[2Jmcp-elicit: signed in", None),
        ("access_denied", "no\r\nmcp-elicit: signed in at https://id.example \x1b]8;;https://evil\x07here"),
        ("x" * 5000, "\u202edesrever\u2028"),
    ],
    ids=["error", "description", "long-and-unicode"],
)
def test_an_error_callback_is_quoted_inert(error: str, description: str | None) -> None:
    """RFC 6749 §4.1.2.1: ``error`` and ``error_description`` are printable ASCII. What else a
    redirect carries (a line break that forges a line of output, a terminal escape, bidi
    controls, a code of kilobytes) is not repeated: each is shown as ``?``, and cut short."""
    pairs = [("error", error), ("state", STATE)] + (
        [("error_description", description)] if description else []
    )
    message = _refused(read_callback, _callback(*pairs), state=STATE, server=_server())
    assert message.startswith(f"{ISSUER} refused the authorization (")
    assert all(" " <= ch <= "~" for ch in message), ascii(message[:300])
    assert len(message) < 400


def test_another_issuer_in_the_callback_is_quoted_cut_short() -> None:
    callback = _callback(("code", CODE), ("state", STATE), ("iss", "https://evil.example/" + "x" * 200_000))
    message = _refused(read_callback, callback, state=STATE, server=_server())
    assert "comes from issuer 'https://evil.example/xxx" in message
    assert len(message) < 400
