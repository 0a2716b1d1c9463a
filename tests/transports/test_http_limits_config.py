"""``StreamableHTTP``'s limits, refused when the app is made if they cannot work: a
``max_body`` that is not a whole number of bytes above zero (413 for every request, or a
``TypeError`` at the first one), a duration that is not a finite number of seconds above
zero, ``True`` taken for a number, or text (a ``TypeError`` from a comparison, not an
error naming the option). What ``mcp-elicit serve --http`` passes on is checked before it
gets here (tests/cli/test_serve_http_options.py)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mcp_elicit.errors import ConfigError
from mcp_elicit.transports.http_server import StreamableHTTP

from support.sessions import ask_name_server


@pytest.mark.parametrize("bad", [0, -1, 1.5, "4m", True, None])
def test_max_body_is_a_whole_number_of_bytes_above_zero(bad: Any) -> None:
    with pytest.raises(ConfigError) as refused:
        StreamableHTTP(ask_name_server("max-body"), max_body=bad)
    assert str(refused.value) == f"max_body {bad!r}: expected a whole number above zero"


@pytest.mark.parametrize("option", ["keepalive", "verify_timeout", "body_timeout", "resume_within"])
@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan, "15", True])
def test_a_duration_is_a_finite_number_of_seconds_above_zero(option: str, bad: Any) -> None:
    none = "" if option == "resume_within" else " or None"
    with pytest.raises(ConfigError) as refused:
        StreamableHTTP(ask_name_server("durations"), **{option: bad})
    assert str(refused.value) == f"{option} must be a positive number of seconds{none}, not {bad!r}"


def test_resume_within_is_never_none() -> None:
    with pytest.raises(ConfigError, match="resume_within must be a positive number of seconds, not None"):
        StreamableHTTP(ask_name_server("resume"), resume_within=None)  # type: ignore[arg-type]


def test_good_values_are_kept() -> None:
    app = StreamableHTTP(
        ask_name_server("kept"),
        max_body=1,
        keepalive=None,
        verify_timeout=None,
        body_timeout=0.5,
        resume_within=2,
    )
    assert (app.max_body, app.keepalive, app.verify_timeout, app.body_timeout, app.resume_within) == (
        1,
        None,
        None,
        0.5,
        2,
    )
