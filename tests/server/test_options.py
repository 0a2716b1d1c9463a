"""A server option that is not what it means is refused when the server is made, naming
the option and the value, not a crash or a silent misbehaviour on first use."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.errors import ConfigError

BAD: dict[str, list[Any]] = {
    "state_ttl": [0, -1, math.nan, math.inf, True, "600"],
    "page_size": [0, -1, 1.5, True, None],
    "cache_ttl_ms": [-1, 1.5, True, 2**53, "0"],
    "cache_scope": ["global", None, "PUBLIC"],
    "ask_timeout": [0, -1, math.nan, math.inf, True, None],
    "max_sessions": [0, -1, 1.5, False],
    "session_idle_timeout": [0, -5, math.nan, math.inf],
    "flow_ttl": [0, -1, math.nan, math.inf],
    "flow_wait": [-1, math.nan, math.inf, True],
    "redact_tool_errors": [None, 1, "yes"],
}


@pytest.mark.parametrize(
    ("option", "value"), [(option, value) for option, values in BAD.items() for value in values]
)
def test_an_option_that_is_not_what_it_means_is_refused(option: str, value: Any) -> None:
    with pytest.raises(ConfigError) as info:
        Server("s", **{option: value})
    assert str(info.value).startswith(f"{option} {value!r}: expected ")


@pytest.mark.parametrize(
    ("option", "value", "where"),
    [
        ("flow_wait", 0, lambda s: s.url_mode.flow_wait),  # answer at once, never wait for the page
        ("cache_ttl_ms", 0, lambda s: s._cache[0]),
        ("ask_timeout", 0.5, lambda s: s.ask_timeout),
        ("max_sessions", 1, lambda s: s.sessions.max_sessions),
        ("session_idle_timeout", 1, lambda s: s.sessions.idle_timeout),
        ("page_size", 1, lambda s: s.page_size),
        ("state_ttl", 1, lambda s: s.sealer.ttl),
    ],
)
def test_an_option_at_its_least_is_kept(option: str, value: Any, where: Any) -> None:
    assert where(Server("s", **{option: value})) == value


def test_the_messages_say_what_is_expected() -> None:
    with pytest.raises(ConfigError, match=r"^ask_timeout nan: expected a finite number of seconds, above 0$"):
        Server("s", ask_timeout=math.nan)
    with pytest.raises(ConfigError, match=r"^flow_wait -1: expected a finite number of seconds, 0 or more$"):
        Server("s", flow_wait=-1)
    with pytest.raises(ConfigError, match=r"^page_size 0: expected a whole number above zero$"):
        Server("s", page_size=0)
    with pytest.raises(
        ConfigError, match=r"^cache_ttl_ms -1: expected a whole number from 0 to 9,007,199,254,740,991$"
    ):
        Server("s", cache_ttl_ms=-1)
    with pytest.raises(ConfigError, match=r"^cache_scope 'global': expected one of 'private', 'public'$"):
        Server("s", cache_scope="global")  # type: ignore[arg-type]


def test_a_share_for_one_principal_above_the_whole_is_refused() -> None:
    """A per-principal limit above its server-wide limit would let one principal take
    every slot: refused when the server is made, naming both values."""
    with pytest.raises(
        ConfigError,
        match=r"^max_sessions_per_principal 20 is above max_sessions 10: one principal could hold all of them; "
        r"give max_sessions_per_principal at most 10$",
    ):
        Server("s", max_sessions=10, max_sessions_per_principal=20)
    assert Server("s", max_sessions=4, max_sessions_per_principal=4).sessions.max_sessions_per_principal == 4


@pytest.mark.parametrize(("whole", "share"), [(1000, 100), (50, 5), (19, 1), (1, 1)])
def test_a_share_not_given_is_a_tenth_of_the_whole(whole: int, share: int) -> None:
    """Not given, one principal's share is a tenth of the server-wide limit (at least one),
    so lowering the limit alone does not leave one principal free to take all of it."""
    assert Server("s", max_sessions=whole).sessions.max_sessions_per_principal == share


#: Options that are text or objects, and what a wrong one used to do.
BAD_KINDS: list[tuple[str, Any, str]] = [
    # sent as serverInfo as given: a message the schema refuses, at the first request
    ("name", 5, "a non-empty string"),
    ("name", "", "a non-empty string"),
    ("version", 1, "a non-empty string"),
    ("title", 5, "None or a string"),
    ("instructions", ["Be brief."], "None or a string"),
    # failed at first use, as an AttributeError or TypeError from deep inside
    ("store", 5, "None, a store URL (sqlite:///path, redis://host) or a Store object"),
    ("public_url", 5, "None or an http(s) URL"),
    ("auth", lambda token: None, "None or a TokenVerifier (an object with async verify(token))"),
    ("page_auth", "cookie", "None or a PageAuth (an object with async subject(headers, cookies))"),
    ("telemetry", "yes", "None, True, False or a Telemetry"),
    ("clock", "now", "a function returning the time in seconds (time.time)"),
]


@pytest.mark.parametrize(("option", "value", "expected"), BAD_KINDS)
def test_an_option_of_the_wrong_kind_is_refused_naming_it(option: str, value: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        Server(**{"name": "s", option: value})
    assert str(info.value) == f"{option} {value!r}: expected {expected}"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mcp.example.com", "not 'mcp.example.com': give https://mcp.example.com"),
        (
            "mcp.example.com:8443/tools",
            "not 'mcp.example.com:8443/tools': give https://mcp.example.com:8443/tools",
        ),
        ("127.0.0.1:8000", "not '127.0.0.1:8000': give http://127.0.0.1:8000"),
        ("ftp://files.example", "not 'ftp://files.example'"),
        ("notaurl", "not 'notaurl'"),
    ],
)
def test_a_public_url_without_http_says_it_once_with_the_url_to_give(url: str, said: str) -> None:
    """It was said twice, the second time as a URL elicitation's rule ("a URL elicitation
    needs an http(s) URL, not ..."), and never with the URL meant."""
    with pytest.raises(ConfigError) as info:
        Server("s", public_url=url)
    assert str(info.value) == f"the public URL must look like http(s)://host[:port][/path], {said}"
