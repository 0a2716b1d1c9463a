"""The sans-IO authorization core (``mcp_elicit.core.authorization``): the ``WWW-Authenticate`` Bearer challenge, found
and read from any header text."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_elicit.core.authorization import (
    Challenge,
    bearer_challenge,
    token_challenges,
)
from tests.support.deadline import within


@pytest.mark.parametrize(
    ("headers", "scheme", "params"),
    [
        (['Bearer scope="read write"'], "Bearer", {"scope": "read write"}),
        (["Bearer error=invalid_token"], "Bearer", {"error": "invalid_token"}),
        (["Bearer error=invalid_token,scope=read"], "Bearer", {"error": "invalid_token", "scope": "read"}),
        (['Bearer realm = "x" , scope="s"'], "Bearer", {"realm": "x", "scope": "s"}),
        (["Bearer a=b==, c=d"], "Bearer", {"a": "b==", "c": "d"}),
        (['Bearer scope="a\\"b\\\\c"'], "Bearer", {"scope": 'a"b\\c'}),
        (['Bearer scope="one, two"'], "Bearer", {"scope": "one, two"}),
        (['Bearer scope=""'], "Bearer", {"scope": ""}),
        (["Bearer"], "Bearer", {}),
        (
            ['  bEaReR   ScOpE="a", ERROR=insufficient_scope'],
            "bEaReR",
            {"scope": "a", "error": "insufficient_scope"},
        ),
        (['Basic realm="x", Bearer scope="s"'], "Bearer", {"scope": "s"}),
        (['Basic realm="x"', 'Bearer scope="s"'], "Bearer", {"scope": "s"}),
        (
            ['Basic realm="x"', "DPoP algs=ES256", 'bearer error="invalid_token"'],
            "bearer",
            {"error": "invalid_token"},
        ),
        (
            [
                'Newauth realm="apps", type=1, title="Login to \\"apps\\"", '
                'Basic realm="simple", Bearer resource_metadata="https://r.example/prm"'
            ],
            "Bearer",
            {"resource_metadata": "https://r.example/prm"},
        ),
        (['Bearer scope="first", scope="second"'], "Bearer", {"scope": "first"}),
        (['Bearer scope="first"', 'Bearer scope="second"'], "Bearer", {"scope": "first"}),
    ],
)
def test_the_bearer_challenge_is_found_and_read(
    headers: list[str], scheme: str, params: dict[str, str]
) -> None:
    challenge = bearer_challenge(headers)
    assert challenge is not None
    assert challenge.scheme == scheme
    assert dict(challenge.params) == params


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [""],
        ['Basic realm="x"'],
        ['Basic realm="x", DPoP algs="ES256"', "Negotiate"],
        ["Bearerish scope=x"],
        ["=== ,,,"],
    ],
)
def test_no_bearer_challenge_gives_none(headers: list[str]) -> None:
    assert bearer_challenge(headers) is None


@pytest.mark.parametrize(
    ("before", "count"),
    [
        ("Basic, ", 300_000),
        ("Negotiate ", 200_000),
        ('Newauth realm="x", ', 100_000),
        ("Basic YWI=, ", 200_000),
    ],
)
def test_a_header_of_many_challenges_is_read_in_linear_time(before: str, count: int) -> None:
    # A server's WWW-Authenticate naming thousands of challenges before its Bearer one:
    # each was cut off the front of the rest by copying it (quadratic, minutes at 2 MB).
    header = before * count + 'Bearer resource_metadata="https://r.example/prm", scope="a b"'
    with within(60, "reading a WWW-Authenticate header of many challenges"):
        challenge = bearer_challenge([header])
        every = token_challenges([header, "DPoP " + "algs=ES256, " * 200_000])
    assert challenge is not None
    assert dict(challenge.params) == {"resource_metadata": "https://r.example/prm", "scope": "a b"}
    assert [c.scheme for c in every] == ["Bearer", "DPoP"]
    assert every[1].params == {"algs": "ES256"}


def test_the_challenge_properties() -> None:
    challenge = bearer_challenge(
        [
            'Bearer error="insufficient_scope", scope="  files:read  files:write ", '
            'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
        ]
    )
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "files:read  files:write"
    assert challenge.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize("header", ['Bearer scope=""', 'Bearer scope="   "', "Bearer realm=x"])
def test_a_blank_or_missing_scope_is_none(header: str) -> None:
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert challenge.scope is None
    assert challenge.error is None


def test_an_empty_resource_metadata_is_none() -> None:
    challenge = bearer_challenge(['Bearer resource_metadata=""'])
    assert challenge is not None
    assert challenge.resource_metadata is None


@pytest.mark.parametrize(
    ("header", "params"),
    [
        ('Bearer scope="unterminated', {}),
        ('Bearer realm="x" scope="y"', {}),
        ("Bearer ,", {}),
        ("Bearer abc", {}),
        ('Bearer scope="ok", junk junk, error=x', {"scope": "ok"}),
    ],
)
def test_a_malformed_challenge_keeps_what_came_before(header: str, params: dict[str, str]) -> None:
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert dict(challenge.params) == params


@given(st.lists(st.text(max_size=80), max_size=4))
def test_any_header_text_gives_none_or_a_bearer_challenge(headers: list[str]) -> None:
    challenge = bearer_challenge(headers)
    assert challenge is None or isinstance(challenge, Challenge)
    if challenge is not None:
        assert challenge.scheme.lower() == "bearer"
        assert all(isinstance(k, str) and k == k.lower() for k in challenge.params)
        assert all(isinstance(v, str) for v in challenge.params.values())


_NAMES = st.text(alphabet=string.ascii_letters + "_-", min_size=1, max_size=12)
_VALUES = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)


@given(st.dictionaries(_NAMES, _VALUES, max_size=5), st.sampled_from(["Bearer", "bearer", "BEARER"]))
def test_quoted_params_round_trip(params: dict[str, str], scheme: str) -> None:
    quoted = ", ".join(
        f'{name}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for name, value in params.items()
    )
    challenge = bearer_challenge(['Basic realm="r"', f"{scheme} {quoted}"])
    assert challenge is not None
    assert challenge.scheme == scheme
    expected: dict[str, str] = {}
    for name, value in params.items():
        expected.setdefault(name.lower(), value)
    assert dict(challenge.params) == expected


@pytest.mark.parametrize(
    "header",
    [
        'Basic, Bearer scope="a"',
        'Negotiate, Bearer scope="a"',
        ', Bearer scope="a"',
        'Basic dXNlcjpwYXNz, Bearer scope="a"',
        'Negotiate dG9rZW4=, Bearer scope="a"',
        'Basic realm="x", Bearer scope="a"',
    ],
)
def test_a_bare_scheme_before_bearer_does_not_hide_it(header: str) -> None:
    challenge = bearer_challenge([header])
    assert challenge is not None
    assert challenge.scope == "a"
